// Parts of answers, through the real CLI: a server that serves byte ranges of whatever it
// answers (Apache httpd's byterange filter does so for CGI and PHP output, an echo included)
// gives back a part of an echo of a secret header that starts inside the secret, which no form
// redaction looks for holds. With secret headers, a request for a part is refused before
// anything is sent, and a part the server sends anyway is not kept.

import { describe, expect, it } from "vitest";
import { attemptOf, attempts, expectRefused, type Handler, isEnvFile, lit, permit, perTestResources, secretNetScript, tacit } from "./fixtures.js";
import { expectNoLeak } from "../files/fixtures.js";

const resources = perTestResources("tacit-net-partial-");

/**
 * A JSON echo of the request whose answer honours Range (Request-Range, as Apache reads it, and
 * Azure Storage's x-ms-range too): one range "bytes=A-B" or "bytes=A-", as 206 Partial Content.
 */
const rangingEcho: Handler = (request, response) => {
  const whole = Buffer.from(JSON.stringify(request));
  const asked = request.headers.range ?? request.headers["request-range"] ?? request.headers["x-ms-range"];
  const range = /^bytes=(\d+)-(\d*)$/.exec(String(asked ?? ""));
  if (range === null) {
    response.setHeader("content-type", "application/json");
    response.end(whole);
    return;
  }
  const from = Number(range[1]);
  const to = range[2] === "" ? whole.length - 1 : Math.min(Number(range[2]), whole.length - 1);
  response.writeHead(206, { "content-type": "application/json", "content-range": `bytes ${from}-${to}/${whole.length}` });
  response.end(whole.subarray(from, to + 1));
};

describe("parts of answers", () => {
  it("a request for part of an answer is refused with secret headers, and a part sent anyway is not kept; without secrets a range is served", async () => {
    const a = await resources.server(rangingEcho);
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  const echo = (name: string, value: string): string =>
    net.httpGet(${lit(`${a.origin}/echo`)}, { headers: { [name]: value }, secretHeaders: { authorization: token } });
  // A header of the same length first, with nothing to ask: the secret sits at the same place in
  // its echo ("[redacted]" there) as in the next one's, which asks for the echo from three characters into it.
  const fromInside = (name: string): string => {
    const whole = echo("x".repeat(name.length), "bytes=00000-");
    return echo(name, "bytes=" + String(whole.indexOf("[redacted]") + 3).padStart(5, "0") + "-");
  };
  attempt("whole", () => echo("x-pad", "bytes=00000-"));
  attempt("range", () => fromInside("range"));
  attempt("Range", () => fromInside("Range"));
  attempt("request-range", () => fromInside("request-range"));
  attempt("secret-range", () =>
    net.httpGet(${lit(`${a.origin}/echo`)}, { secretHeaders: { authorization: token, range: classify("bytes=00070-") } }));
  attempt("x-ms-range", () => fromInside("x-ms-range"));
  attempt("plain-range", () => net.httpGet(${lit(`${a.origin}/echo`)}, { headers: { range: "bytes=2-8" } }));
`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(String(attemptOf(found, "whole").value)).toContain('"authorization":"[redacted]"');
    expectRefused(found, ["range", "Range", "request-range", "secret-range"], /header is refused on a request with secretHeaders: a part of an answer can start inside an echoed secret.*nothing was sent/);
    expectRefused(found, ["x-ms-range"], /answered with a part of its answer \(206 Partial Content\) to a request with secretHeaders.*nothing of it was kept/);
    expect(attemptOf(found, "plain-range")).toEqual({ status: "ok", value: 'method"' });
    // Nothing was sent for the refused ones: the whole echo, four with a header of a name's length, the x-ms-range one, the plain range.
    expect(a.received.map((r) => r.headers.authorization)).toEqual([...Array(6).fill(canary), undefined]);
    expectNoLeak(canary, result, root, isEnvFile);
    // Not even the secret past its first characters.
    expect(result.stdout).not.toContain(canary.slice(3));
  });
});
