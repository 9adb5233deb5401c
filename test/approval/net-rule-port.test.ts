// A net rule that names a host without a port asks about that host on every port the
// allowlists let a script reach. Read as networkPermissions reads a pattern (no port: the
// default ports alone), an always-ask rule on POST to a host let a script POST to it on another
// port, `host:*` permitted, with no question: the rule was dodged by naming the port.

import { expect, it } from "vitest";
import { lit, unattended, withServer, worlds } from "./fixtures.js";

const world = worlds("tacit-net-rule-port-");

it("an always-ask rule on a host with no port asks about a request to it on an explicit port", () =>
  withServer(async (server) => {
    const w = world();
    const config = w.config([{ action: "net", host: "127.0.0.1", method: "POST", tier: "always-ask" }], {
      libraryConfig: { networkPermissions: ["127.0.0.1:*"] },
    });
    const url = `${server.origin}/deploy`;
    const script = w.script(
      `requestNetwork(["127.0.0.1:*"], (net) => {\n` +
        `  try { println("posted", net.httpPost(${lit(url)}, "ship it")); } catch (e) { println("refused:", String(e)); }\n` +
        `  println("got", JSON.parse(net.httpGet(${lit(`${server.origin}/status`)})).url);\n` +
        `});\n`,
    );
    const run = await unattended(w, ["run", "--config", config, script]);
    // The bad thing: the POST the rule asks about every time reached the server unasked.
    expect(server.received.filter((r) => r.method === "POST"), run.all).toEqual([]);
    expect(run.stdout, run.all).toContain(`refused: SecurityError: net POST http://127.0.0.1:${server.port}: refused: the policy requires a person's approval (always-ask)`);
    // A GET, which the rule does not name, still goes through on that port.
    expect(run.stdout, run.all).toContain("got /status");
    expect(run.code, run.all).toBe(0);
  }));
