// Where nobody can be asked (no controlling terminal: the child runs in its own session),
// approve-once and always-ask fail closed, with a SecurityError naming the pattern and how to
// pre-approve it; nothing happens. `--yes` allows both without asking and remembers nothing.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tacitBin } from "../helpers.js";
import { approvals, deleteScript, lit, onTerminal, startServer, storedApprovals, unattended, v6LoopbackServer, worlds } from "./fixtures.js";

const shellWord = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

const world = worlds("tacit-unattended-");

describe("no terminal: fail closed", () => {
  it("approve-once: refused, the message names the pattern, `tacit approvals grant '…'` and --yes; the file stays", async () => {
    const w = world();
    const target = w.file("a.txt");
    const run = await unattended(w, ["run", "--config", w.config([{ action: "fs.delete", tier: "approve-once" }]), w.script(deleteScript("a.txt"))]);
    expect(run.code, run.all).toBe(1);
    expect(run.stdout).not.toContain("deleted");
    expect(run.stderr).toContain("SecurityError");
    expect(run.stderr).toContain(`fs.delete ${target}: refused`);
    expect(run.stderr).toContain("(approve-once)");
    expect(run.stderr).toContain("no terminal");
    expect(run.stderr).toContain(`\`tacit approvals grant 'fs.delete ${target}'\``);
    expect(run.stderr).toContain("--yes");
    expect(run.prompts).toBe(0);
    expect(w.exists("a.txt")).toBe(true);
    // Nothing was remembered, and the home was not even needed.
    expect(storedApprovals(w)).toBeNull();
  });

  it("approve-once: the suggested grant shows hidden characters as escapes, and pasted into bash grants exactly that pattern", async () => {
    // A fourth review named a file "report\u202eTXT.sh": the message escaped the pattern, but
    // the `tacit approvals grant '…'` it suggests held the right-to-left override raw, so a
    // person read the command to paste with its tail reversed ("…report" + "hs.TXT'").
    const w = world();
    const name = "report\u202eTXT.sh\u200b";
    const target = w.file(name, "x");
    const config = w.config([{ action: "fs.read", tier: "approve-once", path: "**" }]);
    const script = w.script(`requestFileSystem(".", (fs) => println(fs.access(${JSON.stringify(name)}).read()));\n`);
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(1);
    const grant = /`(tacit approvals grant [^`]*)`/.exec(run.stderr)?.[1];
    expect(grant, run.stderr).toBeDefined();
    expect(run.stderr).not.toMatch(/[\u202e\u200b]/);
    expect(grant).toContain("\\u202e");
    // The command as shown, pasted into bash, remembers the real pattern: the read then runs.
    execFileSync("bash", ["-c", grant!.replace(/^tacit /, `${shellWord(process.execPath)} ${shellWord(tacitBin)} `)], { cwd: w.work, env: { ...process.env, ...w.env } });
    expect(JSON.stringify(storedApprovals(w))).toContain(JSON.stringify(`fs.read ${target}`).slice(1, -1));
    const again = await unattended(w, ["run", "--config", config, script]);
    expect(again.code, again.all).toBe(0);
    expect(again.stdout).toBe("x\n");
  });

  it("always-ask: refused, naming the pattern and --yes (no grant: it cannot be pre-approved); the command did not run", async () => {
    const w = world();
    const config = w.config([{ action: "exec", tier: "always-ask", command: "touch" }], { libraryConfig: { commandPermissions: ["touch"] } });
    const script = w.script(
      `try {\n  requestExecPermission(["touch"], (p) => p.exec("touch", ["marker"]));\n  println("ran");\n} catch (e) {\n  println("caught", e instanceof SecurityError, (e as Error).message);\n}\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).toContain("caught true exec touch marker: refused");
    expect(run.stdout).toContain("(always-ask)");
    expect(run.stdout).toContain("--yes");
    expect(run.stdout).not.toContain("approvals grant");
    expect(run.stdout).not.toContain("ran");
    expect(w.exists("marker")).toBe(false);
  });

  it("a read rule covers searches and listings that would read below it: grepRecursive(\".\") does not find what read() may not", async () => {
    const w = world();
    w.file("private/notes.txt", "PRIVATE_CANARY\n");
    w.file("public.txt", "nothing\n");
    const config = w.config([{ action: "fs.read", tier: "always-ask", path: "private/**" }]);
    const script = w.script(
      `requestFileSystem(".", (fs) => {\n` +
        `  for (const [label, f] of [["read", () => fs.access("private/notes.txt").read()], ["grepRecursive", () => fs.grepRecursive(".", "PRIVATE_CANARY")], ["find", () => fs.find(".", "*.txt")], ["public", () => fs.access("public.txt").read()]] as const) {\n` +
        `    try { println(label, "ok", JSON.stringify(f())); } catch (e) { println(label, "refused", (e as Error).name); }\n` +
        `  }\n` +
        `});\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).not.toContain("PRIVATE_CANARY");
    expect(run.stdout).toContain("read refused SecurityError");
    expect(run.stdout).toContain("grepRecursive refused SecurityError");
    expect(run.stdout).toContain("find refused SecurityError");
    expect(run.stdout).toContain('public ok "nothing\\n"');
  });

  it("a search does not follow a link from an ordinary directory to a file a read rule covers", async () => {
    // A second security review read private/secret.txt through public/lnk with grepRecursive("public").
    const w = world();
    w.file("private/secret.txt", "PRIV_CANARY\n");
    w.file("public/own.txt", "PRIV_CANARY is named here\n");
    symlinkSync("../private/secret.txt", w.at("public/lnk"));
    const config = w.config([{ action: "fs.read", tier: "always-ask", path: "private/**" }]);
    const script = w.script(
      `requestFileSystem(".", (fs) => {\n` +
        `  println(JSON.stringify(fs.grepRecursive("public", "PRIV_CANARY").map((m) => m.file)));\n` +
        `  try { fs.access("public/lnk").read(); println("read"); } catch (e) { println("refused", (e as Error).name); }\n` +
        `});\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).toContain(JSON.stringify([w.at("public/own.txt")]));
    expect(run.stdout).toContain("refused SecurityError");
    expect(run.stdout).not.toContain("lnk\"");
  });

  it("net: refused before anything is sent (the server received no request)", async () => {
    const w = world();
    const server = await startServer();
    try {
      const config = w.config([{ action: "net", tier: "approve-once", host: "127.0.0.1:*", method: "POST" }], {
        libraryConfig: { networkPermissions: [`127.0.0.1:${server.port}`] },
      });
      const script = w.script(
        `requestNetwork([${lit(`127.0.0.1:${server.port}`)}], (n) => {\n` +
          `  println("get", n.httpGet(${lit(`${server.origin}/get`)}).length > 0);\n` +
          `  n.httpPost(${lit(`${server.origin}/post`)}, "payload");\n` +
          `  println("posted");\n});\n`,
      );
      const run = await unattended(w, ["run", "--config", config, script]);
      expect(run.code, run.all).toBe(1);
      // GET is not covered by the rule and went through; the POST never reached the server.
      expect(run.stdout).toContain("get true");
      expect(run.stdout).not.toContain("posted");
      expect(run.stderr).toContain(`tacit approvals grant 'net POST http://127.0.0.1:${server.port}'`);
      expect(server.received.map((r) => `${r.method} ${r.url}`)).toEqual(["GET /get"]);
    } finally {
      await server.close();
    }
  });

  it("net: a remembered yes for an IPv6 host and port does not cover another address whose text ends the same way", async () => {
    // Written without brackets, http://[::1]:P and http://[::1:P] (port 80, another address) were
    // both "net GET http://::1:P": a yes to the first, remembered, was the second's too.
    const w = world();
    const { port, received, close } = await v6LoopbackServer();
    try {
      const config = w.config([{ action: "net", tier: "approve-once" }], { libraryConfig: { networkPermissions: [`[::1]:${port}`, `[::1:${port}]`] } });
      const granted = await approvals(w, ["grant", `net GET http://[::1]:${port}`]);
      expect(granted.code, granted.all).toBe(0);
      const script = w.script(
        `requestNetwork([${lit(`[::1]:${port}`)}, ${lit(`[::1:${port}]`)}], (n) => {\n` +
          `  println("first", n.httpGet(${lit(`http://[::1]:${port}/first`)}));\n` +
          `  try { n.httpGet(${lit(`http://[::1:${port}]/second`)}); println("second sent"); } catch (e) { println("second", e instanceof SecurityError, (e as Error).message); }\n});\n`,
      );
      const run = await unattended(w, ["run", "--config", config, script]);
      expect(run.code, run.all).toBe(0);
      expect(run.stdout).toContain("first v6");
      expect(run.stdout).toContain(`second true net GET http://[::1:${port}]: refused`);
      expect(run.stdout).not.toContain("second sent");
      expect(received).toEqual(["/first"]);
    } finally {
      await close();
    }
  });

  it("net: a method-override header does not carry a request past a rule on the method", async () => {
    const w = world();
    const server = await startServer();
    try {
      const config = w.config([{ action: "net", tier: "always-ask", host: `127.0.0.1:${server.port}`, method: "DELETE" }], {
        libraryConfig: { networkPermissions: [`127.0.0.1:${server.port}`] },
      });
      const script = w.script(
        `requestNetwork([${lit(`127.0.0.1:${server.port}`)}], (n) => {\n` +
          `  for (const name of ["X-HTTP-Method-Override", "x-http-method", "X-Method-Override"]) {\n` +
          `    try { n.httpPost(${lit(`${server.origin}/item`)}, "", { headers: { [name]: "DELETE" } }); println("overridden", name); }\n` +
          `    catch (e) { println("refused", name, (e as Error).name); }\n` +
          `  }\n` +
          `  try { n.httpPost(${lit(`${server.origin}/item`)}, "", { secretHeaders: { "X-HTTP-Method-Override": classify("DELETE") } }); println("overridden secret"); }\n` +
          `  catch (e) { println("refused secret", (e as Error).name); }\n` +
          `});\n`,
      );
      const run = await unattended(w, ["run", "--config", config, script]);
      expect(run.code, run.all).toBe(0);
      expect(run.stdout).not.toContain("overridden");
      expect(run.stdout.match(/refused .* SecurityError/g)).toHaveLength(4);
      expect(server.received).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("net: a redirect from a permitted host does not carry a request to a host a rule asks about", async () => {
    const w = world();
    const asked = await startServer();
    const redirector = await startServer((_request, response) => {
      response.statusCode = 307;
      response.setHeader("location", `${asked.origin}/admin/delete`);
      response.end();
    });
    try {
      const config = w.config([{ action: "net", tier: "always-ask", host: `127.0.0.1:${asked.port}` }], {
        libraryConfig: { networkPermissions: ["127.0.0.1:*"] },
      });
      const script = w.script(
        `requestNetwork(["127.0.0.1:*"], (n) => {\n` +
          `  try { n.httpPost(${lit(`${redirector.origin}/hop`)}, "payload"); println("posted"); }\n` +
          `  catch (e) { println("refused", (e as Error).name); }\n` +
          `  println("same origin", n.httpGet(${lit(`${asked.origin}/direct`)}) !== "");\n` +
          `});\n`,
      );
      const run = await unattended(w, ["run", "--config", config, script]);
      // The POST went to the redirector only; the asked host received nothing (the direct GET was refused too).
      expect(run.stdout, run.all).toContain("refused SecurityError");
      expect(run.stdout).not.toContain("posted");
      expect(redirector.received.map((r) => `${r.method} ${r.url}`)).toEqual(["POST /hop"]);
      expect(asked.received).toEqual([]);
    } finally {
      await Promise.all([asked.close(), redirector.close()]);
    }
  });

  it("the suggested `tacit approvals grant '…'`, pasted into a shell, grants exactly the pattern and runs nothing else", async () => {
    const w = world();
    // The script chooses the path, so it chooses part of the suggested command line.
    const name = "a'$(touch PWNED)'.txt";
    const config = w.config([{ action: "fs.delete", tier: "approve-once" }]);
    const run = await unattended(w, ["run", "--config", config, w.script(deleteScript(name))]);
    expect(run.code, run.all).toBe(1);
    const suggested = /`(tacit approvals grant [^`]*)`/.exec(run.stderr)?.[1];
    expect(suggested, run.stderr).toBeDefined();
    // A shell where `tacit` only prints its arguments, one per line.
    const shell = spawnSync("sh", ["-c", `tacit() { printf '%s\\n' "$@"; }\n${suggested}`], { cwd: w.work, encoding: "utf8" });
    expect(w.exists("PWNED")).toBe(false);
    expect(shell.stdout.split("\n").filter(Boolean)).toEqual(["approvals", "grant", `fs.delete ${w.at(name)}`]);
  });

  it("a yes does not stretch a scope: an out-of-scope delete stays refused, whatever the person answers", async () => {
    const w = world();
    const outside = path.join(w.root, "outside.txt");
    writeFileSync(outside, "keep me\n");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    const run = await onTerminal(w, ["run", "--config", config, w.script(deleteScript("../outside.txt"))], { answers: ["y"] });
    expect(run.code, run.all).toBe(1);
    expect(run.stdout).toContain("outside this file system scope");
    expect(existsSync(outside)).toBe(true);
  });

  it("a write through a symlink into a protected directory is caught by the rule on the directory", async () => {
    const w = world();
    mkdirSync(w.at("deploy"));
    symlinkSync(w.at("deploy"), w.at("link"));
    const config = w.config([{ action: "fs.write", tier: "always-ask", path: `${w.at("deploy")}/**` }]);
    const script = w.script(`requestFileSystem(".", (fs) => fs.access("link/new.txt").write("x"));\nprintln("wrote");\n`);
    const log = path.join(w.root, "audit.jsonl");
    const run = await unattended(w, ["run", "--config", config, "--audit-log", log, script]);
    expect(run.code, run.all).toBe(1);
    expect(run.stderr).toContain(`fs.write ${w.at("link/new.txt")} -> ${w.at("deploy/new.txt")}: refused`);
    expect(w.exists("deploy/new.txt")).toBe(false);
    // The log names what the question was about, where the link leads included.
    const decisions = readFileSync(log, "utf8").split("\n").filter((line) => line.includes('"type":"decision"') && line.includes('"decision":"deny"'));
    expect(decisions).toHaveLength(1);
    expect(JSON.parse(decisions[0]!).event.via).toContain(`; asked about: fs.write ${w.at("link/new.txt")} -> ${w.at("deploy/new.txt")}`);
  });

  it("a rule whose glob holds \"(\", \")\" or \"|\" covers the names written so: none is written unasked", async () => {
    // picomatch read them as a group and an alternation: an always-ask rule on "backup(1)*"
    // matched backup1-x and let backup(1)-prod.sql be written unasked (h75's review found the
    // same in classified patterns).
    const w = world();
    const config = w.config([
      { action: "fs.write", tier: "always-ask", path: "backup(1)*" },
      { action: "fs.write", tier: "always-ask", path: "keys|old*" },
    ]);
    const names = ["backup(1)-prod.sql", "keys|old-2.txt", "backup1-x"];
    const script = w.script(
      `requestFileSystem(".", (fs) => {\n` +
        `  for (const name of ${JSON.stringify(names)}) {\n` +
        `    try { fs.access(name).write("x\\n"); println("wrote " + name); }\n` +
        `    catch (e) { println((e as Error).name + " " + name); }\n` +
        `  }\n` +
        `  fs.access("ordinary.txt").write("x\\n");\n` +
        `  println("wrote ordinary.txt");\n` +
        `});\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(0);
    // Each is asked about (as the rule is written, and as picomatch reads it), and nobody can answer.
    for (const name of names) {
      expect(run.stdout).toContain(`SecurityError ${name}`);
      expect(w.exists(name)).toBe(false);
    }
    expect(run.stdout).toContain("wrote ordinary.txt");
  });

  it("a rule on a directory's tree covers names holding a line break: none is written unasked", async () => {
    // picomatch's `**` did not match across \n, \r, U+2028 or U+2029: a security review wrote
    // deploy/run\n.sh past an always-ask rule on deploy/**, and `for f in deploy/*.sh` ran it.
    const w = world();
    mkdirSync(w.at("deploy"));
    const config = w.config([{ action: "fs.write", tier: "always-ask", path: "deploy/**" }]);
    const names = ["deploy/run\n.sh", "deploy/run\r.sh", "deploy/run\u2028.sh", "deploy/run\u2029.sh", "deploy/sub\n/run.sh"];
    const script = w.script(
      `requestFileSystem(".", (fs) => {\n` +
        `  for (const name of ${JSON.stringify(names)}) {\n` +
        `    try { fs.access(name).write("touch pwned\\n"); println("wrote " + JSON.stringify(name)); }\n` +
        `    catch (e) { println((e as Error).name + " " + JSON.stringify(name)); }\n` +
        `  }\n` +
        `});\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).not.toContain("wrote");
    for (const name of names) {
      expect(run.stdout).toContain(`SecurityError ${JSON.stringify(name)}`);
      expect(w.exists(name)).toBe(false);
    }
    expect(readdirSync(w.at("deploy"))).toEqual([]);
  });

  it("a yes remembered for a plain path does not cover it once it leads elsewhere through a link", async () => {
    const w = world();
    mkdirSync(w.at("docs"));
    mkdirSync(w.at("deploy"));
    const config = w.config([{ action: "fs.write", tier: "approve-once" }]);
    const script = w.script(`requestFileSystem(".", (fs) => fs.access("docs/notes.txt").write("x"));\nprintln("wrote");\n`);
    const granted = await approvals(w, ["grant", `fs.write ${w.at("docs/notes.txt")}`]);
    expect(granted.code, granted.all).toBe(0);
    const plain = await unattended(w, ["run", "--config", config, script]);
    expect(plain.code, plain.all).toBe(0);
    expect(w.exists("docs/notes.txt")).toBe(true);

    rmSync(w.at("docs"), { recursive: true });
    symlinkSync(w.at("deploy"), w.at("docs"));
    const linked = await unattended(w, ["run", "--config", config, script]);
    expect(linked.code, linked.all).toBe(1);
    // Refused, and the pattern to approve says where the write would really go.
    expect(linked.stderr).toContain(`tacit approvals grant 'fs.write ${w.at("docs/notes.txt")} -> ${w.at("deploy/notes.txt")}'`);
    expect(w.exists("deploy/notes.txt")).toBe(false);
  });

  it("an action no rule matches is allowed as before, without asking", async () => {
    const w = world();
    w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask", path: "protected/**" }]);
    const run = await unattended(w, ["run", "--config", config, w.script(deleteScript("a.txt"))]);
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).toContain("deleted");
    expect(w.exists("a.txt")).toBe(false);
  });

  it("a policy does not widen the allowlists: an allow-tier action the allowlists refuse stays refused", async () => {
    const w = world();
    // A rule on exec without beyondAllowlist and no --command-permissions: refused by the allowlist, not asked.
    const config = w.config([{ action: "exec", tier: "approve-once", command: "touch" }]);
    const run = await unattended(w, ["run", "--config", config, w.script(`requestExecPermission(["touch"], (p) => p.exec("touch", ["marker"]));\n`)]);
    expect(run.code, run.all).toBe(1);
    expect(run.stderr).toContain("no command may run");
    expect(w.exists("marker")).toBe(false);
  });
});

describe("--yes", () => {
  it("allows approve-once and always-ask actions without asking, and remembers nothing", async () => {
    const w = world();
    w.file("a.txt");
    w.file("b.txt");
    const config = w.config(
      [
        { action: "fs.delete", tier: "approve-once" },
        { action: "exec", tier: "always-ask", command: "touch" },
      ],
      { libraryConfig: { commandPermissions: ["touch"] } },
    );
    const script = w.script(
      `requestFileSystem(".", (fs) => fs.access("a.txt").delete());\n` +
        `requestExecPermission(["touch"], (p) => p.exec("touch", ["marker"]));\nprintln("done");\n`,
    );
    const run = await unattended(w, ["run", "--config", config, "--yes", script]);
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).toContain("done");
    expect(w.exists("a.txt")).toBe(false);
    expect(w.exists("marker")).toBe(true);
    expect(run.prompts).toBe(0);
    expect(storedApprovals(w)).toBeNull();

    // Not remembered: the same kind of action without --yes is refused again.
    const again = await unattended(w, ["run", "--config", config, w.script(deleteScript("b.txt"), "again.ts")]);
    expect(again.code, again.all).toBe(1);
    expect(again.stderr).toContain("refused");
    expect(w.exists("b.txt")).toBe(true);
  });

  it("does not ask even when a terminal is there", async () => {
    const w = world();
    w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    const run = await onTerminal(w, ["run", "--config", config, "--yes", w.script(deleteScript("a.txt"))], { answers: ["n"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(0);
    expect(w.exists("a.txt")).toBe(false);
    expect(storedApprovals(w)).toBeNull();
  });
});
