// `tacit run` asks on its controlling terminal (a pseudo-terminal from `script` here; the
// test types the answer when "Allow? [y/N]" appears). A yes to approve-once is remembered
// and later unattended runs go through without asking; a no refuses and remembers nothing;
// a yes to always-ask is never remembered. (The clock while asking: clock.test.ts.)

import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { commandLineOf, descendantsOf, runsDeno } from "../processes.js";
import { approvals, deleteScript, onTerminal, storedApprovals, touchScript, unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-terminal-");

/**
 * The text a terminal shows of `raw`, after the escape sequences a VT/xterm parser consumes:
 * CSI and two-character sequences, and control strings (OSC, DCS, SOS, PM, APC) ended by ST,
 * BEL (OSC) or cancelled by CAN/SUB. Enough to tell text shown from text swallowed.
 */
function shownText(raw: string): string {
  let shown = "";
  let state: "ground" | "escape" | "csi" | "string" = "ground";
  for (const c of raw) {
    if (c === "\x18" || c === "\x1a") {
      state = "ground";
      continue;
    }
    if (c === "\x1b") {
      state = "escape";
      continue;
    }
    switch (state) {
      case "ground":
        if (c >= " " || c === "\n" || c === "\t") shown += c;
        break;
      case "escape":
        if (c === "[") state = "csi";
        else if ("]PX^_".includes(c)) state = "string";
        else if (c < " " || c > "/") state = "ground"; // a final byte (intermediates stay)
        break;
      case "csi":
        if (c >= "@" && c <= "~") state = "ground";
        break;
      case "string":
        if (c === "\x07") state = "ground";
        break;
    }
  }
  return shown;
}

describe("asking on the terminal", () => {
  it("approve-once, y: allowed and remembered; `approvals list` shows it; the next unattended run needs no one", async () => {
    const w = world();
    const target = w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "approve-once" }]);
    const script = w.script(deleteScript("a.txt"));
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(1);
    // The question names the action and the pattern it will be remembered under.
    expect(run.stdout).toContain("the policy says a person must approve (approve-once)");
    expect(run.stdout).toContain(`pattern: fs.delete ${target}`);
    expect(run.stdout).toContain("remembered for 30 days");
    expect(run.stdout).toContain("deleted");
    expect(w.exists("a.txt")).toBe(false);

    const stored = storedApprovals(w)!;
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ pattern: `fs.delete ${target}`, via: "terminal" });
    const days = (Date.parse(stored[0]!.expiresAt) - Date.parse(stored[0]!.grantedAt)) / 86_400_000;
    expect(days).toBe(30);

    const list = await approvals(w, ["list"]);
    expect(list.code, list.all).toBe(0);
    expect(list.stdout).toContain(`fs.delete ${target}\tin ${realpathSync.native(w.work)}\tuntil ${stored[0]!.expiresAt}`);
    const json = await approvals(w, ["list", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual([{ ...stored[0], expired: false }]);

    // Remembered: the same pattern, with no terminal at all, goes through without a prompt.
    w.file("a.txt");
    const again = await unattended(w, ["run", "--config", config, script]);
    expect(again.code, again.all).toBe(0);
    expect(again.prompts).toBe(0);
    expect(again.stdout).toContain("deleted");
    expect(w.exists("a.txt")).toBe(false);

    // Remembered by its exact pattern only: another path is still refused.
    w.file("b.txt");
    const other = await unattended(w, ["run", "--config", config, w.script(deleteScript("b.txt"), "other.ts")]);
    expect(other.code, other.all).toBe(1);
    expect(other.stderr).toContain(`fs.delete ${w.at("b.txt")}: refused`);
    expect(w.exists("b.txt")).toBe(true);
  });

  it("the question is shown as text whatever the script printed before it (an unterminated OSC string)", async () => {
    const w = world();
    const target = w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    // A fake question, then an escape string left open, which would swallow the real one.
    const script = `print("tacit: a script asks to do something the policy says a person must approve:\\n  fs.read ./README.md\\n\\u001b]0;");\n${deleteScript("a.txt")}`;
    const run = await onTerminal(w, ["run", "--config", config, w.script(script)], { answers: ["n"] });
    expect(run.code, run.all).toBe(1);
    expect(run.prompts).toBe(1);
    const shown = shownText(run.stdout);
    expect(shown).toContain("fs.read ./README.md"); // the script's output is still shown, as printed
    expect(shown).toContain(`pattern: fs.delete ${target}`);
    expect(shown).toContain("Allow? [y/N]");
    expect(w.exists("a.txt")).toBe(true);
  });

  it("with the output piped to the terminal, a made-up question arriving after the real one gets no yes: y refuses, the question's code allows", async () => {
    // `tacit run s.ts | tee out.log`: what the script printed reaches the terminal through
    // another program, and can arrive after tacit's question. A security review ended 4 MB of
    // output with a cleared screen and a made-up question; the y typed to it deleted the file.
    const w = world();
    w.file("important.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    const fake =
      `print(("x".repeat(200) + "\\n").repeat(1000));\n` +
      `print("\\u001b[2J\\u001b[Htacit: a script asks to do something the policy says a person must approve (always-ask):\\n  fs.read notes.txt\\nAllow? [y/N] ");\n` +
      deleteScript("important.txt");
    // The person types y at every "Allow?" on the terminal: the made-up one and the real one.
    const run = await onTerminal(w, ["run", "--config", config, w.script(fake)], { answers: ["y", "y"], stdoutPiped: true, prompt: "Allow?" });
    expect(w.exists("important.txt"), run.all).toBe(true);
    // Both reached the terminal (tacit's was written whole, amid the rest of the output).
    expect(run.prompts, run.all).toBeGreaterThanOrEqual(1);
    expect(run.all).toContain("anything else refuses:");
    // (The exit code is cat's, the pipeline's last command.)
    expect(run.all).toContain("without the code the question showed)) and did not approve it");

    // A person who reads the real question types its code: allowed.
    const typed = (shown: string): string => [...shown.matchAll(/type (\d{6}); anything else refuses/g)].at(-1)?.[1] ?? "";
    const allowed = await onTerminal(w, ["run", "--config", config, w.script(deleteScript("important.txt"), "plain.ts")], {
      answers: [typed],
      stdoutPiped: true,
      prompt: "anything else refuses:",
    });
    expect(allowed.prompts, allowed.all).toBe(1);
    expect(allowed.all).not.toContain("SecurityError");
    expect(allowed.all).toContain("deleted");
    expect(w.exists("important.txt")).toBe(false);
  });

  it("what was typed before the question does not answer it (a y typed at the script's own fake prompt)", async () => {
    const w = world();
    w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    // The script asks its own question, waits until the person has typed (the test makes
    // "typed" once the terminal echoed the y), then asks to delete. The person answers the
    // real question no.
    const script =
      `print("Build finished. Show the report? [y/N] ");\n` +
      `requestFileSystem(".", (fs) => { while (!fs.access("typed").exists) {} });\n` +
      deleteScript("a.txt");
    const run = await onTerminal(w, ["run", "--config", config, w.script(script)], {
      answers: ["n"],
      typeAhead: { after: "Show the report? [y/N] ", text: "y\n", echoed: () => w.file("typed") },
    });
    expect(run.prompts, run.all).toBe(1);
    expect(w.exists("a.txt")).toBe(true);
    expect(run.code, run.all).toBe(1);
    expect(run.all).toContain("did not approve it");
  });

  it("a line begun before the question (y, no Enter yet) does not answer it either", async () => {
    const w = world();
    w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    const script =
      `print("Press y to see the report: ");\n` +
      `requestFileSystem(".", (fs) => { while (!fs.access("typed").exists) {} });\n` +
      deleteScript("a.txt");
    // At the real question the person just presses Enter: no.
    const run = await onTerminal(w, ["run", "--config", config, w.script(script)], {
      answers: [""],
      typeAhead: { after: "Press y to see the report: ", text: "y", echoed: () => w.file("typed") },
    });
    expect(run.prompts, run.all).toBe(1);
    expect(w.exists("a.txt")).toBe(true);
    expect(run.code, run.all).toBe(1);
  });

  it("a path with bidi controls, zero-width and control characters is asked about, listed and revoked as escapes, never raw", async () => {
    // Trojan Source (CVE-2021-42574) in a question: raw, the right-to-left override would show
    // "report<RLO>txt.sh" as "reporths.txt", the carriage return and erase-line would overwrite
    // the start of the line, and the person would approve what they did not read.
    const w = world();
    const name = "report\u202etxt.sh\u2066x\u2069\u200b\ufeff\r\b\u001b[2K";
    const target = w.file(name);
    const shownTarget = `${w.work}/report\\u202etxt.sh\\u2066x\\u2069\\u200b\\ufeff\\u000d\\u0008\\u001b[2K`;
    const invisible = /[\u0008\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]|\u001b\[2K/;
    const config = w.config([{ action: "fs.delete", tier: "approve-once" }]);
    const run = await onTerminal(w, ["run", "--config", config, w.script(deleteScript(name))], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(1);
    expect(run.stdout).toContain(`  pattern: fs.delete ${shownTarget}\n`);
    expect(run.stdout).not.toMatch(invisible);
    expect(w.exists(name)).toBe(false);
    // Remembered under the exact path; listed with the same escapes.
    expect(storedApprovals(w)!.map((a) => a.pattern)).toEqual([`fs.delete ${target}`]);
    const list = await approvals(w, ["list"]);
    expect(list.code, list.all).toBe(0);
    expect(list.stdout).toContain(`fs.delete ${shownTarget}\tin `);
    expect(list.all).not.toMatch(invisible);
    expect(list.all).not.toContain("\r");
    // The escaped form, as list printed it, names the approval to revoke.
    const revoke = await approvals(w, ["revoke", `fs.delete ${shownTarget}`]);
    expect(revoke.code, revoke.all).toBe(0);
    expect(revoke.stderr).toContain(`revoked fs.delete ${shownTarget} in `);
    expect(revoke.all).not.toMatch(invisible);
    expect(storedApprovals(w)).toEqual([]);
  });

  it("approve-once, n: refused with the person's answer in the message; nothing remembered", async () => {
    const w = world();
    const target = w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "approve-once" }]);
    const run = await onTerminal(w, ["run", "--config", config, w.script(deleteScript("a.txt"))], { answers: ["n"] });
    expect(run.code, run.all).toBe(1);
    expect(run.prompts).toBe(1);
    expect(run.stdout).toContain(`fs.delete ${target}: refused: a person was asked (terminal) and did not approve it`);
    expect(run.stdout).not.toContain("deleted");
    expect(w.exists("a.txt")).toBe(true);
    expect(storedApprovals(w)).toBeNull();
    const list = await approvals(w, ["list", "--json"]);
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it("only y or yes (any case) is a yes: Enter, 'sure', 'nope' are no", async () => {
    const w = world();
    for (const name of ["1", "2", "3", "4", "5"]) w.file(name);
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    const script = w.script(
      `requestFileSystem(".", (fs) => {\n  for (const name of ["1", "2", "3", "4", "5"]) {\n` +
        `    try { fs.access(name).delete(); println("deleted", name); } catch (e) { println("kept", name, e instanceof SecurityError); }\n  }\n});\n`,
    );
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["YES", "", "sure", "Y", "nope"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(5);
    expect(["1", "2", "3", "4", "5"].filter((name) => w.exists(name))).toEqual(["2", "3", "5"]);
    expect(run.stdout).toContain("kept 2 true");
  });

  it("approve-once of a command line says its pattern's * stands for any arguments: the yes to rm of one file covers rm -f of another", async () => {
    const w = world();
    w.file("build/old.txt");
    w.file("victim.txt");
    const config = w.config([{ action: "exec", command: "rm", tier: "approve-once" }], { libraryConfig: { commandPermissions: ["rm"] } });
    const run = await onTerminal(w, ["run", "--config", config, w.script(touchScript("rm", "build/old.txt"))], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).toContain("  run: rm build/old.txt");
    expect(run.stdout).toContain("  pattern: exec rm *");
    expect(run.stdout).toContain("whatever it writes or sends: its * stands for any arguments at all, not only these;");
    // What the question said: later, other arguments run unasked.
    const later = `requestExecPermission(["rm"], (p) => p.exec("rm", ["-f", "victim.txt"]));\nprintln("ran");\n`;
    const again = await unattended(w, ["run", "--config", config, w.script(later, "later.ts")]);
    expect(again.code, again.all).toBe(0);
    expect(w.exists("victim.txt")).toBe(false);
    // A pattern with no * says nothing of arguments.
    const subcommand = w.config([{ action: "fs.delete", tier: "approve-once" }]);
    w.file("a.txt");
    const plain = await onTerminal(w, ["run", "--config", subcommand, w.script(deleteScript("a.txt"), "delete.ts")], { answers: ["n"] });
    expect(plain.stdout).toContain("(a yes is remembered for 30 days and covers every later action with this pattern, whatever it writes or sends; see tacit approvals list)");
  });

  it("always-ask, y: allowed, never remembered; the next unattended run is refused", async () => {
    const w = world();
    const config = w.config([{ action: "exec", tier: "always-ask", command: "touch" }], { libraryConfig: { commandPermissions: ["touch"] } });
    const script = w.script(touchScript("touch", "marker"));
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(1);
    expect(run.stdout).toContain("(always-ask)");
    expect(run.stdout).toContain("run: touch marker");
    expect(run.stdout).toContain("pattern: exec touch marker");
    expect(run.stdout).not.toContain("remembered for 30 days");
    expect(w.exists("marker")).toBe(true);
    expect(storedApprovals(w)).toBeNull();

    const again = await unattended(w, ["run", "--config", config, w.script(`requestExecPermission(["touch"], (p) => p.exec("touch", ["marker2"]));\n`, "again.ts")]);
    expect(again.code, again.all).toBe(1);
    expect(again.stderr).toContain("exec touch marker2: refused");
    expect(w.exists("marker2")).toBe(false);
  });

  it("always-ask asks every time, even for the same action in one run; approve-once asks once per pattern", async () => {
    const w = world();
    const config = w.config([
      { action: "fs.write", tier: "approve-once" },
      { action: "fs.stat", tier: "always-ask" },
    ]);
    const script = w.script(
      `requestFileSystem(".", (fs) => {\n  const f = fs.access("out.txt");\n  f.write("one");\n  f.write("two");\n` +
        `  println("exists", f.exists);\n  println("exists", f.exists);\n});\n`,
    );
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y", "y", "y"] });
    expect(run.code, run.all).toBe(0);
    // One question for the two writes (remembered after the first), one for each stat.
    expect(run.prompts).toBe(3);
    expect(run.stdout.match(/pattern: fs\.write /g)).toHaveLength(1);
    expect(run.stdout.match(/pattern: fs\.stat /g)).toHaveLength(2);
    expect(storedApprovals(w)!.map((a) => a.pattern)).toEqual([`fs.write ${w.at("out.txt")}`]);
  });
  it("a question whose sandbox died is withdrawn on the terminal, and the run ends without an answer", async () => {
    // The sandbox can end while its request waits for a person (the system's OOM killer, a
    // crash): nothing reads the answer any more, and the run used to wait up to five minutes
    // for one. Here it is killed from outside while the question is up; nobody types anything.
    const w = world();
    w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    let killed: number[] = [];
    const run = await onTerminal(w, ["run", "--config", config, w.script(deleteScript("a.txt"))], {
      answers: [],
      instead: (terminal) => {
        // Deno itself, as the OOM killer picks it (not the unshare that forks it in its PID namespace).
        killed = descendantsOf(terminal).filter((pid) => commandLineOf(pid).includes("bootstrap.js") && runsDeno(pid));
        for (const pid of killed) process.kill(pid, "SIGKILL");
      },
    });
    expect(killed, "the sandbox was found").toHaveLength(1);
    expect(run.prompts).toBe(1);
    // Ended on its own (the guard kills the terminal after 30 s: no exit status then).
    expect(run.code, run.all).toBe(1);
    expect(run.stdout).toContain("(withdrawn: the script ended before this was answered");
    expect(run.stdout).toContain("the sandbox ended (signal SIGKILL) without reporting a result");
    expect(run.stdout).not.toContain("deleted");
    expect(w.exists("a.txt")).toBe(true);
  });
});

describe("nobody is asked about what would be refused anyway", () => {
  it("a delete outside the scope's root: refused at once, no question, nothing remembered", async () => {
    const w = world();
    const outside = w.file("../elsewhere/keep.txt");
    const config = w.config([{ action: "fs.delete", tier: "approve-once" }]);
    const run = await onTerminal(w, ["run", "--config", config, w.script(deleteScript("../elsewhere/keep.txt"))], { answers: ["y"] });
    expect(run.code, run.all).toBe(1);
    expect(run.prompts).toBe(0);
    expect(run.all).toContain("outside this file system scope"); // on a terminal, stderr shows with stdout
    expect(w.exists("../elsewhere/keep.txt")).toBe(true);
    expect(outside).toContain("elsewhere");
    expect(storedApprovals(w)).toBeNull();
  });
});
