// beyondAllowlist: a rule may make something the static allowlists refuse askable, so a
// person can extend them for one run — a command (exec), a host (net), a root (fs.open).
// Nobody to ask: refused with the allowlist's usual message, nothing happened. A yes on the
// terminal: it runs. Anything no rule names is never asked about.
//
// A person answers one question: a yes to the extension answers for the actions it covers
// (each command line of that command, each request to that host, the fs.open itself) in
// this run. Where the allowlists already permit the thing, the rule is an ordinary rule and
// its tier applies to each action. Other rules (say, always-ask on `git push`) still apply.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { approvals, lit, onTerminal, storedApprovals, type TestServer, touchScript, unattended, v6LoopbackServer, withServer, worlds } from "./fixtures.js";

const world = worlds("tacit-beyond-");

describe("exec beyond --command-permissions", () => {
  const rules = [{ action: "exec", command: "touch", tier: "always-ask", beyondAllowlist: true }];

  it("no terminal: refused with the usual allowlist message; the command did not run", async () => {
    const w = world();
    const run = await unattended(w, ["run", "--config", w.config(rules), w.script(touchScript("touch", "marker"))]);
    expect(run.code, run.all).toBe(1);
    expect(run.stderr).toContain("no command may run");
    expect(run.stdout).not.toContain("ran");
    expect(w.exists("marker")).toBe(false);
  });

  // A rule that extends the allowlists to one command makes only that command askable: a shell
  // or an interpreter, which could run it, stays refused without a question.
  // The three tried in one run (a tacit on a terminal each was most of this test's CPU), each refusal
  // caught and printed on a line of its own so that each is seen refused; the last is not caught,
  // so the run still ends as a refused one does.
  it("terminal: sh, python3 and env are not asked about under a rule that extends the allowlists to touch", async () => {
    const w = world();
    const commands = ["sh", "python3", "env"];
    const attempt = (command: string): string => `requestExecPermission([${lit(command)}], (p) => p.exec(${lit(command)}, ["-c", "touch marker"]));\nprintln("ran");\n`;
    const caught = (command: string): string =>
      `try {\n${attempt(command)}} catch (e) {\n  println(${lit(`@@${command}\t`)} + (e instanceof SecurityError ? "SecurityError" : String(e)) + "\\t" + (e as Error).message);\n}\n`;
    const script = commands.slice(0, -1).map(caught).join("") + `println(${lit(`@@${commands.at(-1)}\tuncaught`)});\n` + attempt(commands.at(-1)!);
    const run = await onTerminal(w, ["run", "--config", w.config(rules), w.script(script, "interpreters.ts")], { answers: ["y"] });
    expect(run.prompts).toBe(0);
    expect(run.code, run.all).toBe(1);
    expect(run.stdout).not.toMatch(/^ran\r?$/m);
    for (const command of commands.slice(0, -1)) expect(run.stdout, command).toMatch(new RegExp(`^@@${command}\tSecurityError\t.*no command may run`, "m"));
    // The last one's refusal is the run's error: it was tried (its line printed), and refused, ending the run with its message.
    expect(run.stdout).toContain(`@@${commands.at(-1)}\tuncaught`);
    expect(run.all.match(/no command may run/g)?.length ?? 0, run.all).toBeGreaterThanOrEqual(commands.length);
    expect(w.exists("marker")).toBe(false);
  });

  it("terminal, y: the command runs for this run only, after one question", async () => {
    const w = world();
    const config = w.config(rules);
    const run = await onTerminal(w, ["run", "--config", config, w.script(touchScript("touch", "marker"))], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(1);
    expect(run.stdout).toContain("the allowlists do not permit");
    expect(run.stdout).toContain('let scripts run the command "touch"');
    expect(run.stdout).toContain("pattern: extend exec touch");
    expect(run.stdout).not.toContain("pattern: exec touch marker");
    expect(run.stdout).toContain("ran");
    expect(w.exists("marker")).toBe(true);
    expect(storedApprovals(w)).toBeNull();
    // Not carried over: the next run without a terminal is refused again.
    const again = await unattended(w, ["run", "--config", config, w.script(touchScript("touch", "marker2"), "again.ts")]);
    expect(again.code, again.all).toBe(1);
    expect(w.exists("marker2")).toBe(false);
  });

  it("where the allowlist already permits the command, the rule's tier applies to each command line", async () => {
    const w = world();
    const config = w.config(rules, { libraryConfig: { commandPermissions: ["touch"] } });
    const run = await onTerminal(w, ["run", "--config", config, w.script(touchScript("touch", "marker"))], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(1);
    expect(run.stdout).not.toContain("pattern: extend exec touch");
    expect(run.stdout).toContain("pattern: exec touch marker");
    expect(w.exists("marker")).toBe(true);
  });

  it("terminal, n: refused with the allowlist's message; nothing ran", async () => {
    const w = world();
    const run = await onTerminal(w, ["run", "--config", w.config(rules), w.script(touchScript("touch", "marker"))], { answers: ["n"] });
    expect(run.code, run.all).toBe(1);
    expect(run.prompts).toBe(1);
    expect(run.stdout).toContain("no command may run");
    expect(w.exists("marker")).toBe(false);
  });

  it("a command no beyond rule names is never asked about (no prompt on the terminal), and stays refused", async () => {
    const w = world();
    const config = w.config([...rules, { action: "exec", command: "mkdir", tier: "always-ask" }]);
    const run = await onTerminal(w, ["run", "--config", config, w.script(`requestExecPermission(["mkdir"], (p) => p.exec("mkdir", ["made"]));\n`)], {
      answers: ["y"],
    });
    expect(run.code, run.all).toBe(1);
    expect(run.prompts).toBe(0);
    expect(run.stdout).not.toContain("tacit: a script asks");
    expect(run.stdout).toContain("no command may run");
    expect(w.exists("made")).toBe(false);
  });

  it("approve-once beyond: the extension is remembered; later runs need no one, for any command line of it", async () => {
    const w = world();
    const config = w.config([{ action: "exec", command: "touch", tier: "approve-once", beyondAllowlist: true }]);
    const script = w.script(touchScript("touch", "marker"));
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(1);
    // The question says the yes outlives this run, in its first line as in its last.
    expect(run.stdout).toContain("the policy lets you allow it for this run and later runs here (see below):");
    expect(run.stdout).not.toContain("allow it for this run:");
    expect(run.stdout).toContain("(a yes is remembered for 30 days: later runs in this directory are allowed it too, without asking;");
    expect(storedApprovals(w)!.map((a) => a.pattern)).toEqual(["extend exec touch"]);
    w.file("marker", "");
    const again = await unattended(w, ["run", "--config", config, script]);
    expect(again.code, again.all).toBe(0);
    expect(again.stdout).toContain("ran");
    const other = await unattended(w, ["run", "--config", config, w.script(touchScript("touch", "marker2"), "again.ts")]);
    expect(other.code, other.all).toBe(0);
    expect(w.exists("marker2")).toBe(true);
  });

  it("another rule still applies after the extension: yes to the extension, no to the always-ask command line, nothing ran", async () => {
    const w = world();
    const config = w.config([...rules, { action: "exec", command: "touch", args: "marker*", tier: "always-ask" }]);
    const run = await onTerminal(w, ["run", "--config", config, w.script(touchScript("touch", "marker"))], { answers: ["y", "n"] });
    expect(run.prompts).toBe(2);
    expect(run.stdout).toContain("pattern: extend exec touch");
    expect(run.stdout).toContain("pattern: exec touch marker");
    expect(run.code, run.all).toBe(1);
    expect(w.exists("marker")).toBe(false);
  });
});

describe("a rule on a command, once another command that runs it is extended", () => {
  // A yes to extend the allowlists to env answered for the rule on env only: a security review
  // had the remembered yes run `env touch marker` with no one asked, under an always-ask rule
  // on touch that asks about env touch where env is permitted outright.
  const rules = [
    { action: "exec", command: "env", tier: "approve-once", beyondAllowlist: true },
    { action: "exec", command: "touch", tier: "always-ask", beyondAllowlist: true },
  ];
  const envTouch = `requestExecPermission(["env"], (p) => p.exec("env", ["touch", "marker"]));\nprintln("ran");\n`;

  it("no terminal, env extended by a remembered yes: env touch is refused under the rule on touch; touch did not run", async () => {
    const w = world();
    const granted = await approvals(w, ["grant", "extend exec env"]);
    expect(granted.code, granted.all).toBe(0);
    const config = w.config(rules, { libraryConfig: { commandPermissions: ["ls"] } });
    const run = await unattended(w, ["run", "--config", config, w.script(envTouch)]);
    expect(run.code, run.all).toBe(1);
    expect(run.stdout).not.toContain("ran");
    expect(run.stderr).toContain("exec env touch *: refused: the policy requires a person's approval (always-ask)");
    expect(run.stderr).toContain("under the rule on `touch` (always-ask)");
    expect(w.exists("marker")).toBe(false);
    // The extension itself still stands: env runs what no rule names.
    const plain = await unattended(w, ["run", "--config", config, w.script(envTouch.replace('["touch", "marker"]', '["true"]'), "true.ts")]);
    expect(plain.code, plain.all).toBe(0);
    expect(plain.stdout).toContain("ran");
  });

  it("terminal: a yes to extend env, then the question about env touch; n, and touch did not run", async () => {
    const w = world();
    const config = w.config(rules, { libraryConfig: { commandPermissions: ["ls"] } });
    const run = await onTerminal(w, ["run", "--config", config, w.script(envTouch)], { answers: ["y", "n"] });
    expect(run.prompts).toBe(2);
    expect(run.stdout).toContain("pattern: extend exec env");
    expect(run.stdout).toContain("pattern: exec env touch *");
    expect(run.code, run.all).toBe(1);
    expect(w.exists("marker")).toBe(false);
  });
});

describe("net beyond --network-permissions", () => {
  const netScript = (server: TestServer, host = `127.0.0.1:${server.port}`): string =>
    `const body = requestNetwork([${lit(host)}], (n) => n.httpGet(${lit(`http://${host}/hello`)}));\nprintln("got", JSON.parse(body).url);\n`;


  it("no terminal: refused with the usual message; the server received nothing", () =>
    withServer(async (server) => {
      const w = world();
      const config = w.config([{ action: "net", host: `127.0.0.1:${server.port}`, tier: "always-ask", beyondAllowlist: true }]);
      const run = await unattended(w, ["run", "--config", config, w.script(netScript(server))]);
      expect(run.code, run.all).toBe(1);
      expect(run.stderr).toContain("no host is reachable");
      expect(run.stdout).not.toContain("got");
      expect(server.received).toEqual([]);
    }));

  it("terminal, y: the request goes through", () =>
    withServer(async (server) => {
      const w = world();
      const config = w.config([{ action: "net", host: `127.0.0.1:${server.port}`, tier: "always-ask", beyondAllowlist: true }]);
      const run = await onTerminal(w, ["run", "--config", config, w.script(netScript(server))], { answers: ["y"] });
      expect(run.code, run.all).toBe(0);
      expect(run.prompts).toBe(1);
      expect(run.stdout).toContain(`pattern: extend net 127.0.0.1:${server.port}`);
      expect(run.stdout).not.toContain(`pattern: net GET http://127.0.0.1:${server.port}`);
      expect(run.stdout).toContain("got /hello");
      expect(server.received.map((r) => r.url)).toEqual(["/hello"]);
    }));

  it("terminal, n: refused; the server received nothing", () =>
    withServer(async (server) => {
      const w = world();
      const config = w.config([{ action: "net", host: `127.0.0.1:${server.port}`, tier: "always-ask", beyondAllowlist: true }]);
      const run = await onTerminal(w, ["run", "--config", config, w.script(netScript(server))], { answers: ["n"] });
      expect(run.code, run.all).toBe(1);
      expect(run.prompts).toBe(1);
      expect(server.received).toEqual([]);
    }));

  it("a permitted host on another port can be extended too (the port is part of what is permitted)", () =>
    withServer(async (server) => {
      const w = world();
      // 127.0.0.1 is permitted, but only on port 1: the server's port is beyond the allowlist.
      const config = w.config([{ action: "net", host: `127.0.0.1:${server.port}`, tier: "always-ask", beyondAllowlist: true }], {
        libraryConfig: { networkPermissions: ["127.0.0.1:1"] },
      });
      const run = await onTerminal(w, ["run", "--config", config, w.script(netScript(server))], { answers: ["y", "y"] });
      expect(run.stdout).toContain(`pattern: extend net 127.0.0.1:${server.port}`);
      expect(run.code, run.all).toBe(0);
      expect(server.received.map((r) => r.url)).toEqual(["/hello"]);
    }));

  // A security review reached loopback this way: a person's yes to a name does not show the
  // address it resolves to (which could be the cloud's metadata service), so a name extended
  // by approval does not unlock loopback, private or link-local addresses. (A yes to an
  // address the person was shown does: "terminal, y" above.)
  it("a yes to a name that resolves to loopback does not unlock it; the server received nothing", () =>
    withServer(async (server) => {
      const w = world();
      const config = w.config([{ action: "net", host: "*:*", tier: "approve-once", beyondAllowlist: true }], {
        libraryConfig: { networkPermissions: ["api.example.com"] },
      });
      const run = await unattended(w, ["run", "--yes", "--config", config, w.script(netScript(server, `localhost:${server.port}`))]);
      expect(run.code, run.all).toBe(1);
      expect(run.stderr).toMatch(/loopback|private|link-local|literally/i);
      expect(server.received).toEqual([]);
    }));

  it("a remembered yes to extend to an IPv6 host and port does not extend to another address whose text ends the same way", async () => {
    // Written without brackets, [::1]:P and [::1:P] (another address, default ports) were both
    // "extend net ::1:P": a yes to the first, remembered, extended the allowlists to the second unasked.
    const w = world();
    const { port, received, close } = await v6LoopbackServer();
    try {
      // The operator lets a person extend the allowlists to either address (loopback is named literally), each asked about.
      const config = w.config(
        [
          { action: "net", host: `[::1]:${port}`, tier: "approve-once", beyondAllowlist: true },
          { action: "net", host: `[::1:${port}]`, tier: "approve-once", beyondAllowlist: true },
        ],
        { libraryConfig: { networkPermissions: ["api.example.com"] } },
      );
      const reach = (host: string, url: string): string =>
        `try { println(${lit(host)}, requestNetwork([${lit(host)}], (n) => n.httpGet(${lit(url)}))); } ` +
        `catch (e) { println(${lit(host)}, e instanceof SecurityError ? "refused:" : "failed:", (e as Error).message); }\n`;
      const first = await onTerminal(w, ["run", "--config", config, w.script(reach(`[::1]:${port}`, `http://[::1]:${port}/first`))], { answers: ["y"] });
      expect(first.prompts, first.all).toBe(1);
      expect(first.stdout).toContain(`pattern: extend net [::1]:${port}`);
      expect(first.stdout).toContain(`[::1]:${port} v6`);
      expect(storedApprovals(w)!.map((a) => a.pattern)).toEqual([`extend net [::1]:${port}`]);

      const second = await unattended(w, ["run", "--config", config, w.script(reach(`[::1:${port}]`, `http://[::1:${port}]/second`), "second.ts")]);
      // The bad thing: the allowlists extended to [::1:P] with no one asked, and the request sent on its way.
      expect(second.stdout).toContain(`[::1:${port}] refused:`);
      expect(second.stdout).toContain("--network-permissions");
      expect(second.stdout).not.toContain("failed:");
      // The remembered yes still holds for what the person was asked about.
      const again = await unattended(w, ["run", "--config", config, w.script(reach(`[::1]:${port}`, `http://[::1]:${port}/again`), "again.ts")]);
      expect(again.stdout, again.all).toContain(`[::1]:${port} v6`);
      expect(received).toEqual(["/first", "/again"]);
    } finally {
      await close();
    }
  });

  it("a host no beyond rule names (another port) is never asked about; the server received nothing", () =>
    withServer(async (server) => {
      const w = world();
      const config = w.config([{ action: "net", host: "127.0.0.1:1", tier: "always-ask", beyondAllowlist: true }]);
      const run = await onTerminal(w, ["run", "--config", config, w.script(netScript(server))], { answers: ["y"] });
      expect(run.code, run.all).toBe(1);
      expect(run.prompts).toBe(0);
      expect(server.received).toEqual([]);
    }));
});

describe("fs.open beyond --allowed-roots", () => {
  function outsideWorld() {
    const w = world();
    const outside = path.join(w.root, "outside");
    mkdirSync(outside);
    writeFileSync(path.join(outside, "o.txt"), "keep me\n");
    const other = path.join(w.root, "other");
    mkdirSync(other);
    writeFileSync(path.join(other, "o.txt"), "keep me\n");
    const script = (root: string): string =>
      w.script(`requestFileSystem(${lit(root)}, (fs) => fs.access("o.txt").delete());\nprintln("deleted");\n`);
    return { w, outside, other, script, config: w.config([{ action: "fs.open", path: outside, tier: "always-ask", beyondAllowlist: true }]) };
  }

  it("no terminal: refused; the file outside is still there", async () => {
    const { w, outside, script, config } = outsideWorld();
    const run = await unattended(w, ["run", "--config", config, script(outside)]);
    expect(run.code, run.all).toBe(1);
    expect(run.stderr).toContain("SecurityError");
    // The allowlists' refusal: a question about the open itself would have been about an open they refuse anyway.
    expect(run.stderr).toContain(`${outside} is outside the allowed roots`);
    expect(run.stderr).not.toContain(`fs.open ${outside}: refused`);
    expect(run.stdout).not.toContain("deleted");
    expect(w.exists("../outside/o.txt")).toBe(true);
  });

  it("terminal, y: the root opens for this run", async () => {
    const { w, outside, script, config } = outsideWorld();
    const run = await onTerminal(w, ["run", "--config", config, script(outside)], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    // One question: the yes to the extension answers for the fs.open that asked for it.
    expect(run.prompts).toBe(1);
    expect(run.stdout).toContain(`pattern: extend fs.open ${outside}`);
    expect(run.stdout).not.toContain(`pattern: fs.open ${outside}\n`);
    expect(run.stdout).toContain("deleted");
    expect(w.exists("../outside/o.txt")).toBe(false);
  });

  it("terminal, n to the extension: the allowlist refuses as usual; the file outside is still there", async () => {
    const { w, outside, script, config } = outsideWorld();
    const run = await onTerminal(w, ["run", "--config", config, script(outside)], { answers: ["n", "y"] });
    expect(run.code, run.all).toBe(1);
    expect(w.exists("../outside/o.txt")).toBe(true);
  });

  it("a root no beyond rule names is never asked about, and stays refused", async () => {
    const { w, other, script, config } = outsideWorld();
    const run = await onTerminal(w, ["run", "--config", config, script(other)], { answers: ["y"] });
    expect(run.code, run.all).toBe(1);
    expect(run.prompts).toBe(0);
    expect(run.stdout).toContain("SecurityError");
    expect(w.exists("../other/o.txt")).toBe(true);
  });
});
