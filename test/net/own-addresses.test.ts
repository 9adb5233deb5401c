// This machine's own addresses, through the real CLI. A server that listens on all addresses
// (0.0.0.0) answers on each of the machine's interface addresses as on 127.0.0.1, firewalled from
// the internet or not; a glob meant for public hosts ("*.*.*.*:*") reached one through the
// machine's eth0 address (192.0.2.2 here: a documentation range, which no internal range held).

import http from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attempts, configFile, expectRefused, realTempDir, tacit } from "./fixtures.js";

const { dir, cleanup } = realTempDir("tacit-net-own-addresses-");
afterAll(cleanup);

/** The machine's IPv4 interface addresses but loopback's. */
const ownIPv4 = Object.values(networkInterfaces())
  .flatMap((entries) => entries ?? [])
  .filter((entry) => entry.family === "IPv4" && !entry.internal)
  .map((entry) => entry.address);

describe("this machine's own addresses and the documentation ranges", () => {
  it("are refused under a glob, before connecting, as loopback is: only a literal permission unlocks them", async () => {
    let connections = 0;
    const server = http.createServer((_request, response) => response.end("internal service"));
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const targets = [...ownIPv4.map((address) => `http://${address}:${port}/`), "http://192.0.2.1/", "http://198.51.100.7:8080/", "http://203.0.113.9/"];
      // A short timeout: before the fix, a documentation address was tried until it ran out.
      const config = configFile(dir, { networkPermissions: ["*.*.*.*:*"], networkTimeoutMs: 3000 });
      const result = await tacit(
        dir,
        `${ATTEMPT_PRELUDE}
requestNetwork(["*.*.*.*:*"], (net) => {
  for (const url of ${JSON.stringify(targets)}) attempt(url, () => net.httpGet(url));
});
`,
        ["--config", config],
      );
      expect(result.code, result.stderr).toBe(0);
      expectRefused(attempts(result.stdout), targets, /is (a loopback, private or link-local address|an address of this machine's own \(.*\)); it is reachable only when --network-permissions names it literally/);
      expect(connections).toBe(0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
