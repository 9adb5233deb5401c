// Host patterns in the spellings people write, through the real CLI and a real server on
// 127.0.0.1: a pattern is compared with a URL's host as the URL spells it (an international name
// in its xn-- form, an IPv4 address in dotted decimal, IPv6 shortened), so "bücher.example" and
// "127.1" mean what they say. Compared as written, they matched nothing: an operator's
// "127.1:PORT" refused every request to 127.0.0.1:PORT, and requestNetwork(["bücher.example"])
// under a permission for xn--bcher-kva.example was refused, though both name the same host.

import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, perTestResources, permit, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-spellings-");

describe("host patterns in other spellings of the same host", () => {
  it("an IPv4 address in short or hex form and an international name match the host a URL names, and only that host", async () => {
    const a = await resources.server();
    const other = await resources.server();
    const result = await tacit(
      resources.dir(),
      `${ATTEMPT_PRELUDE}
requestNetwork([${lit(`127.1:${a.port}`)}], (net) => {
  attempt("short", () => JSON.parse(net.httpGet(${lit(`${a.origin}/short`)})).url);
  attempt("short-other-port", () => net.httpGet(${lit(`${other.origin}/other`)}));
  attempt("mapped-v6", () => net.httpGet(${lit(`http://[::ffff:127.0.0.1]:${a.port}/mapped`)}));
});
requestNetwork([${lit(`0x7f.0.0.1:${a.port}`)}], (net) => {
  attempt("hex", () => JSON.parse(net.httpGet(${lit(`http://127.0.0.1:${a.port}/hex`)})).url);
});
attempt("idn-scope", () => requestNetwork(["bücher.example", "BÜCHER.example:8443"], () => "opened"));
attempt("idn-scope-ascii", () => requestNetwork(["xn--bcher-kva.example"], () => "opened"));
attempt("idn-other", () => requestNetwork(["bucher.example"], () => "opened"));
attempt("idn-glob-in-label", () => requestNetwork(["bü*.example"], () => "opened"));
`,
      // The operator's permissions: each spelling as written, the IDN one in Unicode.
      permit(`127.1:${a.port}`, `0x7f.0.0.1:${a.port}`, "bücher.example", "xn--bcher-kva.example:8443"),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "short")).toEqual({ status: "ok", value: "/short" });
    expect(attemptOf(found, "hex")).toEqual({ status: "ok", value: "/hex" });
    expect(attemptOf(found, "idn-scope")).toEqual({ status: "ok", value: "opened" });
    expect(attemptOf(found, "idn-scope-ascii")).toEqual({ status: "ok", value: "opened" });
    // Only that host, on that port.
    expectRefused(found, ["short-other-port"], /not among the hosts this requestNetwork scope asked for/);
    // Another host than 127.0.0.1, the same machine or not: named as a URL names it, brackets and all.
    expectRefused(found, ["mapped-v6"], new RegExp(`\\[::ffff:7f00:1\\]:${a.port} is not among the hosts this requestNetwork scope asked for`));
    expectRefused(found, ["idn-other"], /bucher\.example is not permitted by --network-permissions/);
    expectRefused(found, ["idn-glob-in-label"], /a \* in a label with letters past ASCII cannot match .*write that label whole, or match its xn-- form/);
    expect(a.received.map((r) => r.url)).toEqual(["/short", "/hex"]);
    expect(other.received).toEqual([]);
  });
});

describe("port 0", () => {
  it("is refused, asked for or redirected to: Node sent it to the default port, past checks that judged port 0", async () => {
    const a = await resources.server((request, response) => {
      response.writeHead(302, { location: request.url === "/to-https" ? "https://127.0.0.1:0/next" : "http://127.0.0.1:0/next" });
      response.end();
    });
    const result = await tacit(
      resources.dir(),
      `${ATTEMPT_PRELUDE}
requestNetwork(["127.0.0.1:*"], (net) => {
  attempt("direct", () => net.httpGet("http://127.0.0.1:0/direct"));
  attempt("redirected", () => net.httpGet(${lit(`${a.origin}/to-http`)}));
  attempt("redirected-https", () => net.httpGet(${lit(`${a.origin}/to-https`)}));
});
`,
      permit("127.0.0.1:*"),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "direct")).toEqual({
      status: "Error",
      value:
        "http://127.0.0.1:0/direct: port 0 is no port a server answers on (Node would send the request to port 80 instead); nothing was sent. " +
        "Name the server's port, or leave it out for the default",
    });
    // A redirect's refusal says whose redirect it was.
    expect(String(attemptOf(found, "redirected").value)).toBe(
      `the request to ${a.origin} was redirected to http://127.0.0.1:0/next, which tacit did not follow: ` +
        "http://127.0.0.1:0/next: port 0 is no port a server answers on (Node would send the request to port 80 instead); nothing was sent. " +
        "Name the server's port, or leave it out for the default",
    );
    expect(String(attemptOf(found, "redirected-https").value)).toMatch(/ was redirected to https:\/\/127\.0\.0\.1:0\/next, which tacit did not follow: https:\/\/127\.0\.0\.1:0\/next: port 0 .*to port 443 instead/);
    expect(a.received.map((r) => r.url)).toEqual(["/to-http", "/to-https"]);
  });
});
