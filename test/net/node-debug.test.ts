// NODE_DEBUG in tacit's environment: Node's debug output for http, https or net prints each
// request's connection options to stderr, its headers among them, and so printed a script's
// secret headers in plaintext where whoever reads tacit's output (an agent that ran it from a
// shell) read them. A request with secret headers is refused while it is on; one without is sent.

import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, perTestResources, permit, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-node-debug-", { concurrent: true });
const CANARY = "Bearer node-debug-canary-93d0b7";

describe.concurrent("NODE_DEBUG in tacit's environment", () => {
  for (const sections of ["http", "net", "https,tls", "*"]) {
    it(`with ${JSON.stringify(sections)}, a request with secret headers is refused and its secret printed nowhere; one without is sent`, async () => {
      const server = await resources.server();
      const result = await tacit(
        resources.dir(),
        `${ATTEMPT_PRELUDE}
requestNetwork([${lit(`127.0.0.1:${server.port}`)}], (net) => {
  attempt("secret", () => net.httpGet(${lit(`${server.origin}/secret`)}, { secretHeaders: { authorization: classify(${lit(CANARY)}) } }));
  attempt("plain", () => JSON.parse(net.httpGet(${lit(`${server.origin}/plain`)})).url);
});
`,
        permit(`127.0.0.1:${server.port}`),
        { NODE_DEBUG: sections },
      );
      expect(result.code, result.stderr).toBe(0);
      const found = attempts(result.stdout);
      expectRefused(found, ["secret"], /^NODE_DEBUG in tacit's environment .*prints each request's headers to stderr.*nothing was sent/);
      expect(attemptOf(found, "plain")).toEqual({ status: "ok", value: "/plain" });
      expect(result.stdout + result.stderr).not.toContain("node-debug-canary");
      expect(server.received.map((request) => request.url)).toEqual(["/plain"]);
    });
  }
});
