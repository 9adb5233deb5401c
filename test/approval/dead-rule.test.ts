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
