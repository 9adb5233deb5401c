// Which hosts a script reaches, through the real CLI: --network-permissions ∩ the scope's
// hosts, ports, credentials in URLs, schemes, revocation after the block, and restricted
// addresses (reachable only when a permission names the host or address literally). Every
// "nothing was sent" is judged by the recording server, never by the script. Names other
// than "localhost" are only ever used where policy refuses them before any lookup.

import { describe, expect, it } from "vitest";
import {
  ATTEMPT_PRELUDE,
  attemptOf,
  attempts,
  configFile,
  expectRefused,
  lit,
  permit,
  tacit,
  unusedPort,
  perTestResources,
} from "./fixtures.js";

const resources = perTestResources("tacit-net-policy-");
const server = resources.server;
const workDir = resources.dir;

describe("network permissions and scopes", () => {
  it("with --network-permissions unset, requestNetwork is refused, naming the flag, and nothing is sent", async () => {
    const a = await server();
    const result = await tacit(
      workDir(),
      `${ATTEMPT_PRELUDE}
attempt("open", () => requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => net.httpGet(${lit(`${a.origin}/`)})));
attempt("open-glob", () => requestNetwork(["*"], (net) => net.httpGet(${lit(`${a.origin}/`)})));
`,
    );
    expect(result.code, result.stderr).toBe(0);
    expectRefused(attempts(result.stdout), ["open", "open-glob"], /--network-permissions/);
    expect(a.received).toEqual([]);
  });

  it("a URL must match the scope's hosts and the permissions; otherwise nothing reaches any server", async () => {
    const a = await server();
    const b = await server();
    const closed = await unusedPort();
    const A = `127.0.0.1:${a.port}`;
    const result = await tacit(
      workDir(),
      `${ATTEMPT_PRELUDE}
requestNetwork([${lit(A)}], (net) => {
  attempt("allowed", () => JSON.parse(net.httpGet(${lit(`${a.origin}/allowed?x=1`)})).url);
  attempt("uppercase-scheme", () => JSON.parse(net.httpGet(${lit(`HTTP://127.0.0.1:${a.port}/upper`)})).url);
  // B is permitted by the operator, but not asked for by this scope.
  attempt("outside-scope", () => net.httpGet(${lit(`${b.origin}/`)}));
  attempt("credentials", () => net.httpGet(${lit(`http://user:pass@${A}/creds`)}));
  attempt("username-only", () => net.httpGet(${lit(`http://user@${A}/creds`)}));
  attempt("file", () => net.httpGet("file:///etc/passwd"));
  attempt("ftp", () => net.httpGet(${lit(`ftp://${A}/`)}));
  attempt("https-same-port", () => net.httpGet(${lit(`https://${A}/`)}));
  attempt("not-a-url", () => net.httpGet("/relative"));
});
requestNetwork(["127.0.0.1:*"], (net) => {
  // The scope asks for any port; the permissions name only A's (B's separately).
  attempt("port-not-permitted", () => net.httpGet(${lit(`http://127.0.0.1:${closed}/`)}));
  attempt("b-allowed", () => JSON.parse(net.httpGet(${lit(`${b.origin}/b`)})).url);
});
requestNetwork(["localhost:*"], (net) => {
  // "localhost" is permitted without a port: only port 80 would match. Refused before any lookup.
  attempt("default-port-only", () => net.httpGet(${lit(`http://localhost:${a.port}/`)}));
});
requestNetwork(["*.example.com"], (net) => {
  // Globs in the scope: names the glob does not match are refused before any lookup.
  attempt("bare-domain", () => net.httpGet("http://example.com/"));
  attempt("dash-lookalike", () => net.httpGet("http://evil-example.com/"));
  attempt("suffix-lookalike", () => net.httpGet("http://api.example.com.evil.example/"));
  attempt("two-labels", () => net.httpGet("http://a.b.example.com/"));
  attempt("other-port", () => net.httpGet("http://api.example.com:8080/"));
});
attempt("scope-unpermitted-name", () => requestNetwork(["evil.example"], () => "opened"));
attempt("scope-unpermitted-address", () => requestNetwork(["10.0.0.1"], () => "opened"));
attempt("scope-empty", () => requestNetwork([], () => "opened"));
attempt("scope-url", () => requestNetwork([${lit(`http://${A}/`)}], () => "opened"));
attempt("scope-credentials", () => requestNetwork([${lit(`user@${A}`)}], () => "opened"));
let saved: Network | undefined;
requestNetwork([${lit(A)}], (net) => { saved = net; });
attempt("revoked", () => saved!.httpGet(${lit(`${a.origin}/late`)}));
`,
      permit(A, `127.0.0.1:${b.port}`, "localhost", "*.example.com"),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "allowed")).toEqual({ status: "ok", value: "/allowed?x=1" });
    expect(attemptOf(found, "uppercase-scheme")).toEqual({ status: "ok", value: "/upper" });
    expect(attemptOf(found, "b-allowed")).toEqual({ status: "ok", value: "/b" });
    expectRefused(found, ["outside-scope"], /not among the hosts this requestNetwork scope asked for/);
    expectRefused(found, ["credentials", "username-only"], /credentials in a URL are refused/);
    expectRefused(found, ["file", "ftp"], /only http and https/);
    expectRefused(found, ["port-not-permitted", "default-port-only"], /not permitted by --network-permissions/);
    expectRefused(found, ["bare-domain", "dash-lookalike", "suffix-lookalike", "two-labels", "other-port"], /not among the hosts/);
    expectRefused(found, ["scope-unpermitted-name", "scope-unpermitted-address"], /not permitted by --network-permissions/);
    expectRefused(found, ["scope-url", "scope-credentials"], /not a host pattern/);
    expect(attemptOf(found, "scope-empty").status).not.toBe("ok");
    expect(attemptOf(found, "not-a-url").status).not.toBe("ok");
    // https to A's port reaches A (a TLS hello to a plain-HTTP server) or fails; it is not ok.
    expect(attemptOf(found, "https-same-port").status).not.toBe("ok");
    expectRefused(found, ["revoked"], /outside its requestNetwork scope/);
    // What the servers saw: exactly the allowed requests (and perhaps a TLS hello on A).
    expect(a.received.map((r) => r.url).filter((u) => u !== "")).toEqual(["/allowed?x=1", "/upper"]);
    expect(b.received.map((r) => r.url)).toEqual(["/b"]);
    expect(result.stdout + result.stderr).not.toContain("pass@");
  });
});

describe("restricted addresses", () => {
  it("a glob never unlocks loopback, private or link-local addresses: refused before connecting, at once", async () => {
    const a = await server();
    const P = a.port;
    const result = await tacit(
      workDir(),
      `${ATTEMPT_PRELUDE}
requestNetwork(["*.*.*.*:*", "*.*:*", "local*:*", "*:*"], (net) => {
  attempt("loopback", () => net.httpGet("http://127.0.0.1:${P}/"));
  attempt("loopback-other", () => net.httpGet("http://127.0.0.2:${P}/"));
  attempt("metadata", () => net.httpGet("http://169.254.169.254/latest/meta-data/"));
  attempt("metadata-port", () => net.httpGet("http://169.254.169.254:${P}/"));
  attempt("private-10", () => net.httpGet("http://10.0.0.1:${P}/"));
  attempt("private-172", () => net.httpGet("http://172.16.0.1/"));
  attempt("private-192", () => net.httpGet("http://192.168.1.1/"));
  attempt("cgnat", () => net.httpGet("http://100.64.0.1/"));
  attempt("unspecified", () => net.httpGet("http://0.0.0.0:${P}/"));
  // Spellings the URL parser turns into 127.0.0.1 / 169.254.169.254.
  attempt("decimal", () => net.httpGet("http://2130706433:${P}/"));
  attempt("hex", () => net.httpGet("http://0x7f000001:${P}/"));
  attempt("short", () => net.httpGet("http://127.1:${P}/"));
  attempt("octal", () => net.httpGet("http://0177.0.0.1:${P}/"));
  attempt("metadata-decimal", () => net.httpGet("http://2852039166/"));
  // An allowed name that resolves to loopback.
  attempt("localhost", () => net.httpGet("http://localhost:${P}/"));
  attempt("localhost-upper", () => net.httpGet("http://LOCALHOST:${P}/"));
  // IPv6 spellings: no glob matches them, so they are refused by the permissions.
  attempt("ipv6-loopback", () => net.httpGet("http://[::1]:${P}/"));
  attempt("ipv6-mapped", () => net.httpGet("http://[::ffff:127.0.0.1]:${P}/"));
  attempt("ipv6-metadata", () => net.httpGet("http://[::ffff:169.254.169.254]/"));
});
`,
      [...permit("*.*.*.*:*", "*.*:*", "local*:*", "*:*"), "--exec-timeout-ms", "20000"],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expectRefused(
      found,
      [
        "loopback",
        "loopback-other",
        "metadata",
        "metadata-port",
        "private-10",
        "private-172",
        "private-192",
        "cgnat",
        "unspecified",
        "decimal",
        "hex",
        "short",
        "octal",
        "metadata-decimal",
      ],
      /loopback, private or link-local address; it is reachable only when --network-permissions names it literally/,
    );
    expectRefused(found, ["localhost", "localhost-upper"], /localhost resolves to 127\.0\.0\.1.*names the host or address literally/);
    expectRefused(found, ["ipv6-loopback", "ipv6-mapped", "ipv6-metadata"]);
    expect(a.received).toEqual([]);
    // Refused before any connection was tried, shown without a clock: the loopback spellings
    // above all lead to this server, which accepted no connection at all (not only no
    // request); a connection tried to an unroutable address would end in a network error or
    // the network timeout, not in the refusals asserted above.
    expect(a.connections).toBe(0);
  });

  it("an IPv6 glob never unlocks addresses that carry an IPv4 one to a translator (NAT64 local-use, SIIT) or are site-local: refused at once", async () => {
    const result = await tacit(
      workDir(),
      `${ATTEMPT_PRELUDE}
requestNetwork(["[64:ff9b:1::a9fe:*]:*", "[::ffff:0:7f00:*]:*", "[fec0::*]:*"], (net) => {
  attempt("nat64-local-metadata", () => net.httpGet("http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/"));
  attempt("siit-loopback", () => net.httpGet("http://[::ffff:0:7f00:1]:8080/"));
  attempt("site-local", () => net.httpGet("http://[fec0::1]/"));
});
`,
      [...permit("[64:ff9b:1::a9fe:*]:*", "[::ffff:0:7f00:*]:*", "[fec0::*]:*"), "--config", configFile(workDir(), { networkTimeoutMs: 3000 }), "--exec-timeout-ms", "20000"],
    );
    expect(result.code, result.stderr).toBe(0);
    expectRefused(
      attempts(result.stdout),
      ["nat64-local-metadata", "siit-loopback", "site-local"],
      /loopback, private or link-local address; it is reachable only when --network-permissions names it literally/,
    );
    // Refused before any connection was tried: one would end in a network error or "no answer
    // within 3000 ms", not in the refusal asserted above (no clock needed).
  });

  it("an IPv6 glob never unlocks a 6to4, Teredo or ISATAP address that carries a restricted IPv4 one: refused at once", async () => {
    // Each matches a glob permission, never a literal one; each carries loopback, a private or the
    // metadata address for a relay or tunnel to reach. 6to4 of 127.0.0.0 written with its zeros
    // compressed passed before: the check read the IPv4 address from the text with a regex.
    const globs = ["[2002:7f00::*]:*", "[2002:a9fe:a9fe::*]:*", "[2001:0:7f00:*::]:*", "[2001:0:808:808::*:5601]:*", "[2001:0:808:808::f5ff:*]:*", "[2001:db9::5efe:7f00:*]:*"];
    const result = await tacit(
      workDir(),
      `${ATTEMPT_PRELUDE}
requestNetwork(${JSON.stringify(globs)}, (net) => {
  attempt("6to4-loopback-compressed", () => net.httpGet("http://[2002:7f00::1]:8080/"));
  attempt("6to4-metadata", () => net.httpGet("http://[2002:a9fe:a9fe::1]/latest/meta-data/"));
  attempt("teredo-server-loopback", () => net.httpGet("http://[2001:0:7f00:1::]/"));
  attempt("teredo-client-metadata", () => net.httpGet("http://[2001:0:808:808::5601:5601]/latest/meta-data/"));
  attempt("teredo-client-private", () => net.httpGet("http://[2001:0:808:808::f5ff:fffe]/"));
  attempt("isatap-loopback", () => net.httpGet("http://[2001:db9::5efe:7f00:1]/"));
});
`,
      [...permit(...globs), "--config", configFile(workDir(), { networkTimeoutMs: 3000 }), "--exec-timeout-ms", "20000"],
    );
    expect(result.code, result.stderr).toBe(0);
    expectRefused(
      attempts(result.stdout),
      ["6to4-loopback-compressed", "6to4-metadata", "teredo-server-loopback", "teredo-client-metadata", "teredo-client-private", "isatap-loopback"],
      /loopback, private or link-local address; it is reachable only when --network-permissions names it literally/,
    );
    // Refused before any connection was tried: these addresses are not routed here, and a
    // connection tried would end in a network error or "no answer within 3000 ms", not in the
    // refusal asserted above (no clock needed).
  });

  it("a permission that names the host or address literally unlocks it, whatever the scope's spelling", async () => {
    const a = await server();
    const P = a.port;
    const result = await tacit(
      workDir(),
      `${ATTEMPT_PRELUDE}
requestNetwork(["*.*.*.*:*", "localhost:${P}"], (net) => {
  attempt("address", () => JSON.parse(net.httpGet("http://127.0.0.1:${P}/address")).headers.host);
  attempt("name", () => JSON.parse(net.httpGet("http://localhost:${P}/name")).headers.host);
  // Only the literal one unlocks: 127.0.0.2 matches the glob permission alone.
  attempt("glob-only", () => net.httpGet("http://127.0.0.2:${P}/glob"));
});
`,
      permit(`127.0.0.1:${P}`, `localhost:${P}`, "*.*.*.*:*"),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "address")).toEqual({ status: "ok", value: `127.0.0.1:${P}` });
    expect(attemptOf(found, "name")).toEqual({ status: "ok", value: `localhost:${P}` });
    expectRefused(found, ["glob-only"], /loopback, private or link-local/);
    expect(a.received.map((r) => r.url)).toEqual(["/address", "/name"]);
  });
});
