// A net rule holds however a script names the host it is on. Matched on text alone, an
// always-ask rule on POST to `localhost` let a script POST to the same server as 127.0.0.1,
// 127.1, [::ffff:127.0.0.1] or 0.0.0.0 with no question, each permitted beside localhost by
// --network-permissions; and one on 127.0.0.1 (or the glob 127.0.0.*) let it POST to localhost.
// Each spelling's GET (which the rule does not name) shows that it reaches the server.

import { expect, it } from "vitest";
import { lit, onTerminal, PROMPT, unattended, withServer, worlds } from "./fixtures.js";

const world = worlds("tacit-net-rule-places-");

/** The URL hosts tried, each with the --network-permissions pattern that permits it. */
const SPELLINGS: Array<{ host: string; permission: string }> = [
  { host: "localhost", permission: "localhost" },
  { host: "127.0.0.1", permission: "127.0.0.1" },
  { host: "127.1", permission: "127.1" },
  { host: "0x7f000001", permission: "127.0.0.1" },
  { host: "[::ffff:127.0.0.1]", permission: "[::ffff:127.0.0.1]" },
  { host: "0.0.0.0", permission: "0.0.0.0" },
];

it.each(["localhost", "127.0.0.1", "[::1]", "127.0.0.*"])("an always-ask rule on POST to %s asks about a POST to the same machine by any other name", (ruleHost) =>
  withServer(async (server) => {
    const w = world();
    const permissions = [...new Set(SPELLINGS.map(({ permission }) => `${permission}:${server.port}`))];
    const config = w.config([{ action: "net", host: ruleHost, method: "POST", tier: "always-ask" }], {
      libraryConfig: { networkPermissions: permissions },
    });
    const script = w.script(
      `for (const host of ${JSON.stringify(SPELLINGS.map(({ host }) => host))}) {\n` +
        `  const origin = "http://" + host + ":${server.port}";\n` +
        `  requestNetwork([host + ":${server.port}"], (net) => {\n` +
        `    try { println("got", host, JSON.parse(net.httpGet(origin + "/get")).url); } catch (e) { println("get failed:", host, String(e)); }\n` +
        `    try { println("posted", host, net.httpPost(origin + "/post", "ship it")); } catch (e) { println("refused:", String(e)); }\n` +
        `  });\n` +
        `}\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    // The bad thing: a POST the rule asks about every time reached the server unasked.
    expect(server.received.filter((r) => r.method === "POST"), run.all).toEqual([]);
    for (const { host } of SPELLINGS) {
      const named = new URL(`http://${host}:${server.port}`).host;
      expect(run.stdout, run.all).toContain(`refused: SecurityError: net POST http://${named}: refused: the policy requires a person's approval (always-ask)`);
    }
    // Every spelling reaches the server: a GET, which the rule does not name, went through each.
    expect(server.received.filter((r) => r.method === "GET").length, run.all).toBe(SPELLINGS.length);
    expect(run.code, run.all).toBe(0);
  }));

/** A POST rule on `localhost` at `tier`, and a script that POSTs to 127.0.0.1 (permitted), saying whether it was refused. */
function postTo127UnderLocalhostRule(w: ReturnType<typeof world>, port: number, tier: "always-ask" | "approve-once"): { config: string; script: string } {
  const config = w.config([{ action: "net", host: "localhost", method: "POST", tier }], {
    libraryConfig: { networkPermissions: [`127.0.0.1:${port}`] },
  });
  const script = w.script(
    `requestNetwork(["127.0.0.1:${port}"], (net) => {\n` +
      `  try { println("posted", net.httpPost("http://127.0.0.1:${port}/post", "ship it")); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  return { config, script };
}

// Asked about under a rule on another name for the host, the refusal said only the rule's tier:
// nothing told why a POST to 127.0.0.1 was asked about under a policy whose rules name only
// localhost. It now names the rule and says the host leads to the same place.
it("a refusal under a rule on another name for the host names the rule and says it is the same place", () =>
  withServer(async (server) => {
    const w = world();
    const { config, script } = postTo127UnderLocalhostRule(w, server.port, "always-ask");
    const run = await unattended(w, ["run", "--config", config, script]);
    // The bad thing: a POST the rule asks about every time reached the server unasked.
    expect(server.received.filter((r) => r.method === "POST"), run.all).toEqual([]);
    expect(run.stdout, run.all).toContain(`refused: SecurityError: net POST http://127.0.0.1:${server.port}: refused: the policy requires a person's approval (always-ask)`);
    expect(run.stdout, run.all).toContain(
      `(127.0.0.1:${server.port} is asked about under the rule on \`localhost\` (always-ask): it leads to the same place as \`localhost\`, another name or address for that host`,
    );
    expect(run.stdout, run.all).toContain("always-ask holds under every name: no grant pre-approves it");
    expect(run.code, run.all).toBe(0);
  }));

it("the question a person reads on a terminal names the rule a host's other name was asked about under", () =>
  withServer(async (server) => {
    const w = world();
    const { config, script } = postTo127UnderLocalhostRule(w, server.port, "approve-once");
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["n"], size: { rows: 50, columns: 400 } });
    expect(run.prompts, run.all).toBe(1);
    // The bad thing: the POST went out although the person said no.
    expect(server.received.filter((r) => r.method === "POST"), run.all).toEqual([]);
    const question = run.stdout.slice(0, run.stdout.indexOf(PROMPT.trim()));
    expect(question.replace(/\s+/g, " "), run.all).toContain(
      `(127.0.0.1:${server.port} is asked about under the rule on \`localhost\` (approve-once): it leads to the same place as \`localhost\``,
    );
    expect(question.replace(/\s+/g, " "), run.all).toContain(`pre-approve it as named here, \`tacit approvals grant 'net POST http://127.0.0.1:${server.port}'\``);
  }));
