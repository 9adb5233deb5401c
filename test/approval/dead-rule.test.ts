// A rule whose pattern no action can match is refused when the config is read, saying what to
// write instead. Accepted, it asked about nothing and said nothing: `"command": "touch marker"`
// (a command line where a name goes) and `"args": ""` let touch run unasked, and `"method": "*"`
// (a glob where a method goes) let a POST through, each under an always-ask rule.

import { expect, it } from "vitest";
import { lit, touchScript, unattended, withServer, worlds } from "./fixtures.js";

const world = worlds("tacit-dead-rule-");

it.each([
  ["a command line as the command", { command: "touch marker" }, 'policy.rules.0.command: "touch marker" holds a space', 'give the name as "command" and the rest as "args" ({"command":"touch","args":"marker*"})'],
  ["a name with spaces around it", { command: " touch " }, 'policy.rules.0.command: " touch " holds a space', 'give the name alone ({"command":"touch"})'],
  ["empty args", { command: "touch", args: "" }, "policy.rules.0.args: is empty, which matches only the command run with no arguments", 'leave "args" out'],
])("%s is refused (exit 2) and the command does not run", async (_name, fields, problem, fix) => {
  const w = world();
  const config = w.config([{ action: "exec", tier: "always-ask", ...fields }], { libraryConfig: { commandPermissions: ["touch"] } });
  const run = await unattended(w, ["run", "--config", config, w.script(touchScript("touch", "marker"))]);
  // The bad thing: the command the rule was written to ask about ran unasked.
  expect(w.exists("marker"), run.all).toBe(false);
  expect(run.code, run.all).toBe(2);
  expect(run.stderr).toContain(problem);
  expect(run.stderr).toContain(fix);
});

it.each(["*", "GET POST"])("a method of %j is refused (exit 2) and nothing is sent", (method) =>
  withServer(async (server) => {
    const w = world();
    const config = w.config([{ action: "net", tier: "always-ask", host: "127.0.0.1:*", method }], { libraryConfig: { networkPermissions: ["127.0.0.1:*"] } });
    const script = w.script(`requestNetwork(["127.0.0.1:*"], (net) => println(net.httpPost(${lit(`${server.origin}/deploy`)}, "ship it")));\n`);
    const run = await unattended(w, ["run", "--config", config, script]);
    // The bad thing: the request the rule was written to ask about reached the server.
    expect(server.received, run.all).toEqual([]);
    expect(run.code, run.all).toBe(2);
    expect(run.stderr).toContain("policy.rules.0.method: is no HTTP method");
    expect(run.stderr).toContain('leave "method" out to match every method');
  }));

it("a rule whose path starts in a directory that does not exist is warned about, naming it, and still applies", async () => {
  const w = world();
  w.file("deploy/prod.conf", "safe\n");
  const config = w.config([
    { action: "fs.write", tier: "always-ask", path: "deplyo/**" },
    { action: "fs.write", tier: "always-ask", path: "deploy/**" },
  ]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  fs.access("deplyo").mkdir();\n` +
      `  try { fs.access("deplyo/x.conf").write("x"); println("wrote"); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  expect(run.stderr).toContain(
    `tacit: warning: policy.rules.0 (fs.write) path "deplyo/**": nothing exists at ${w.at("deplyo")}, so the rule matches nothing there now ` +
      `(a relative path starts at the working directory, ${w.work}); check the spelling`,
  );
  // The rule on a directory that exists is not warned about.
  expect(run.stderr).not.toContain("policy.rules.1");
  // The warned-about rule still asks about what is made there.
  expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.write ${w.at("deplyo/x.conf")}: refused: the policy requires a person's approval (always-ask)`);
  expect(w.exists("deplyo/x.conf")).toBe(false);
});

it("a rule written in NFC on a directory named in NFD is not warned about, and asks about a read there", async () => {
  const w = world();
  // The directory's name in NFD (e + combining acute), as macOS tools and some archives make it; the rule in NFC.
  const nfd = "cafe\u0301";
  w.file(`${nfd}/s.txt`, "canary-nfd-4c1e\n");
  const config = w.config([{ action: "fs.read", tier: "always-ask", path: "caf\u00e9/**" }]);
  const script = w.script(`requestFileSystem(".", (fs) => println(fs.access(${lit(`${nfd}/s.txt`)}).read()));\n`);
  const run = await unattended(w, ["run", "--config", config, script]);
  // Told that the rule matched nothing, an operator would "fix" a rule that works.
  expect(run.stderr).not.toContain("nothing exists at");
  // It does work: the read is asked about, and with nobody to ask, refused.
  expect(run.stdout).not.toContain("canary-nfd-4c1e");
  expect(run.stderr).toContain("the policy requires a person's approval (always-ask)");
});
