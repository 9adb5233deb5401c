// Proxy variables in tacit's environment do not route a script's requests: a proxy sees every
// header it forwards, secret ones included, and a request sent through it is checked against
// the proxy's address, not the permitted host's. Node's own client ignores them on Node 20;
// Node 24 reads them (NODE_USE_ENV_PROXY=1, --use-env-proxy) for its global agent, which
// tacit's requests do not use (each has an agent of its own). The "proxy" is a recording
// server on 127.0.0.1 that must accept no connection at all.

import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, perTestResources, permit, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-proxy-env-");

describe("proxy variables in tacit's environment", () => {
  it("are not honoured: the request, its secret header with it, goes to the permitted host, and the proxy sees nothing", async () => {
    const target = await resources.server();
    const proxy = await resources.server();
    const at = proxy.origin;
    const result = await tacit(
      resources.dir(),
      `${ATTEMPT_PRELUDE}
requestNetwork([${lit(`127.0.0.1:${target.port}`)}], (net) => {
  attempt("direct", () => JSON.parse(net.httpGet(${lit(`${target.origin}/through`)}, { secretHeaders: { authorization: classify("Bearer proxy-canary-51c8e2") } })).url);
});
`,
      permit(`127.0.0.1:${target.port}`),
      {
        HTTP_PROXY: at, HTTPS_PROXY: at, ALL_PROXY: at, http_proxy: at, https_proxy: at, all_proxy: at,
        NO_PROXY: "", no_proxy: "", NODE_USE_ENV_PROXY: "1", GLOBAL_AGENT_HTTP_PROXY: at,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(attemptOf(attempts(result.stdout), "direct")).toEqual({ status: "ok", value: "/through" });
    expect(target.received.map((request) => [request.url, request.headers.authorization])).toEqual([["/through", "Bearer proxy-canary-51c8e2"]]);
    expect(proxy.connections).toBe(0);
  });
});
