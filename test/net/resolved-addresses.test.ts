// The addresses a permitted name resolves to, each judged: a name with several records of which
// one is restricted (a public A record beside 127.0.0.1, a public AAAA beside ::1), and names
// whose one record is loopback written in an IPv6 form (IPv4-mapped, dotted or in hex, NAT64,
// IPv4-compatible, zeros written out, a link-local address with its zone, 6to4 of the metadata
// address). The names resolve through a preload that answers Node's dns.lookup, the function the
// host's connection looks its address up with, for a made-up top-level domain only: the
// machine's resolver and /etc/hosts are shared and left alone, and no record points anywhere but
// this machine's loopback, so a refusal that failed would reach the recording server, not the internet.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, perTestResources, permit, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-resolved-", { concurrent: true });

/** Each made-up name and the records the preload answers for it, in order. */
const RECORDS: Record<string, Array<{ address: string; family: 4 | 6 }>> = {
  "several.tacit-test": [{ address: "93.184.215.14", family: 4 }, { address: "127.0.0.1", family: 4 }],
  "several-v6.tacit-test": [{ address: "2606:4700:4700::1111", family: 6 }, { address: "::1", family: 6 }],
  "mapped.tacit-test": [{ address: "::ffff:127.0.0.1", family: 6 }],
  "mapped-hex.tacit-test": [{ address: "::ffff:7f00:1", family: 6 }],
  "nat64.tacit-test": [{ address: "64:ff9b::7f00:1", family: 6 }],
  "compatible.tacit-test": [{ address: "::127.0.0.1", family: 6 }],
  "expanded.tacit-test": [{ address: "0:0:0:0:0:0:0:1", family: 6 }],
  "zoned.tacit-test": [{ address: "fe80::1%lo", family: 6 }],
  "metadata-6to4.tacit-test": [{ address: "2002:a9fe:a9fe::1", family: 6 }],
  "loop.tacit-test": [{ address: "127.0.0.1", family: 4 }],
};

/**
 * The preload: dns.lookup answers RECORDS for their names (all records, or the first), and the
 * real lookup for any other; each lookup of a made-up name is logged to lookups.log in `dir`.
 */
function resolverPreload(dir: string): string {
  const file = path.join(dir, "records.mjs");
  writeFileSync(
    file,
    `import dns from "node:dns";
import { appendFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const records = ${JSON.stringify(RECORDS)};
const real = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (typeof options === "function") [callback, options] = [options, {}];
  const found = records[String(host).toLowerCase()];
  if (found === undefined) return real.call(this, host, options, callback);
  appendFileSync(${JSON.stringify(path.join(dir, "lookups.log"))}, host + "\\n");
  const all = typeof options === "object" && options !== null && options.all === true;
  process.nextTick(() => (all ? callback(null, found) : callback(null, found[0].address, found[0].family)));
};
syncBuiltinESMExports();
`,
  );
  return file;
}

describe.concurrent("the addresses a permitted name resolves to", () => {
  it("a name permitted by a glob is refused when any of its addresses is restricted, however it is written; nothing connects", async () => {
    const server = await resources.server();
    const dir = resources.dir();
    const restricted = Object.keys(RECORDS).filter((name) => name !== "loop.tacit-test");
    const result = await tacit(
      dir,
      `${ATTEMPT_PRELUDE}
requestNetwork(["*.tacit-test:${server.port}"], (net) => {
  for (const name of ${JSON.stringify(restricted)}) attempt(name, () => net.httpGet("http://" + name + ":${server.port}/"));
  // https connects through TLS's own connect, which must take the same lookup.
  attempt("https", () => net.httpGet("https://several.tacit-test:${server.port}/"));
});
`,
      permit("*.tacit-test:*"),
      { NODE_OPTIONS: `--import=${resolverPreload(dir)}` },
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    for (const name of restricted) {
      const address = RECORDS[name]!.find((record) => record.address !== "93.184.215.14" && record.address !== "2606:4700:4700::1111")!.address;
      expectRefused(found, [name], new RegExp(`^${name.replace(/\./g, "\\.")} resolves to ${address.replace(/[.]/g, "\\.")}, a loopback, private or link-local address`));
    }
    expectRefused(found, ["https"], /^several\.tacit-test resolves to 127\.0\.0\.1, a loopback/);
    expect(server.connections).toBe(0);
  });

  // What DNS rebinding needs (a name that answers one address to the check and another to the
  // connection) cannot happen with one lookup per connection: the check is made in it.
  it("named literally, the name is looked up once for its connection, and the address it answered is the one connected to", async () => {
    const server = await resources.server();
    const dir = resources.dir();
    const result = await tacit(
      dir,
      `${ATTEMPT_PRELUDE}
requestNetwork(["loop.tacit-test:${server.port}"], (net) => attempt("literal", () => JSON.parse(net.httpGet("http://loop.tacit-test:${server.port}/here")).url));
`,
      permit(`loop.tacit-test:${server.port}`),
      { NODE_OPTIONS: `--import=${resolverPreload(dir)}` },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(attemptOf(attempts(result.stdout), "literal")).toEqual({ status: "ok", value: "/here" });
    expect(server.received.map((request) => request.url)).toEqual(["/here"]);
    expect(readFileSync(path.join(dir, "lookups.log"), "utf8")).toBe("loop.tacit-test\n");
  });
});
