// A secret header echoed in base64 wrapped across lines, through the real CLI: a request-inspection
// service that gives the raw request back as Python's base64.encodebytes writes it (76 characters a
// line) or as MIME does (CRLF). Redaction looked for a secret's base64 forms whole, and a script that
// joined the lines and decoded them printed the secret.

import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { attemptOf, attempts, configFile, isEnvFile, lit, permit, perTestResources, secretNetScript, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-wrapped-base64-", { concurrent: true });

/** `bytes` in base64, in lines of `width` ended by `lineBreak` (Python's encodebytes: 76, "\n"). */
function wrapped(bytes: Buffer, width: number, lineBreak: string): string {
  const base64 = bytes.toString("base64");
  let out = "";
  for (let at = 0; at < base64.length; at += width) out += base64.slice(at, at + width) + lineBreak;
  return out;
}

describe.concurrent("a secret header echoed in wrapped base64", () => {
  it("is masked, wherever in its group of three the secret starts and however the lines break; the script decodes no piece of it", async () => {
    const a = await resources.server((request, response) => {
      const { width, lineBreak, pad } = JSON.parse(decodeURIComponent(request.url.slice(1))) as { width: number; lineBreak: string; pad: number };
      const raw = Buffer.from(`${"x".repeat(pad)}GET / HTTP/1.1\r\nauthorization: ${String(request.headers.authorization)}\r\n\r\n`);
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ raw: wrapped(raw, width, lineBreak) }));
    });
    const { root, canary } = resources.projectWithSecret();
    const shapes = [0, 1, 2].flatMap((pad) => [
      { width: 76, lineBreak: "\n", pad },
      { width: 64, lineBreak: "\r\n", pad },
      { width: 12, lineBreak: "\n", pad },
    ]);
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  for (const shape of ${JSON.stringify(shapes)}) {
    attempt(JSON.stringify(shape), () => {
      const raw: string = JSON.parse(net.httpGet(${lit(a.origin)} + "/" + encodeURIComponent(JSON.stringify(shape)), { secretHeaders: { authorization: token } })).raw;
      // What the script makes of it: the lines joined, decoded from each place a group can start.
      const joined = raw.replace(/\\s/g, "");
      return [raw.includes("[redacted]"), ...[0, 1, 2, 3].map((skip) => { try { return atob(joined.slice(skip).replace(/[^A-Za-z0-9+/]/g, "").slice(0, Math.floor(joined.slice(skip).replace(/[^A-Za-z0-9+/]/g, "").length / 4) * 4)); } catch { return ""; } })];
    });
  }
`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    for (const shape of shapes) {
      const seen = attemptOf(found, JSON.stringify(shape));
      expect(seen.status, JSON.stringify(seen)).toBe("ok");
      // The echo came back masked.
      expect((seen.value as unknown[])[0], JSON.stringify(shape)).toBe(true);
    }
    // The requests went out with the secret.
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(shapes.length);
    // The bad thing: a piece of the canary in what the script printed or decoded.
    const random = canary.slice("canary-".length);
    for (let at = 0; at + 8 <= random.length; at++) expect(result.stdout).not.toContain(random.slice(at, at + 8));
    expectNoLeak(canary, result, root, isEnvFile);
  });

  it("cut by the size limit partway into the secret's form, shows no beginning of it there", async () => {
    const limit = 4096;
    // Where the cut falls in the wrapped text: the secret's form runs from about its 43rd character to its 101st, a break at 76.
    const cuts = [50, 60, 70, 76, 77, 80, 90, 100];
    const a = await resources.server((request, response) => {
      const n = Number(new URL(request.url, "http://x").searchParams.get("n"));
      const raw = Buffer.from(`GET / HTTP/1.1\r\nauthorization: ${String(request.headers.authorization)}\r\n\r\n`);
      response.setHeader("content-type", "text/plain");
      response.end(`${"f".repeat(limit - n - 1)} ${wrapped(raw, 76, "\n")}`);
    });
    const { root, canary } = resources.projectWithSecret();
    const config = configFile(resources.dir(), { networkPermissions: [`127.0.0.1:${a.port}`], networkResponseLimitBytes: limit });
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  for (const n of ${JSON.stringify(cuts)}) {
    attempt(String(n), () => {
      const tail = net.httpGet(${lit(a.origin)} + "/?n=" + n, { secretHeaders: { authorization: token } }).split(" ")[1]!.split("\\n[tacit:")[0]!;
      const joined = tail.replace(/\\s/g, "").replace(/\\[redacted\\].*/, "");
      return [tail, ...[0, 1, 2, 3].map((skip) => { const run = joined.slice(skip); try { return atob(run.slice(0, Math.floor(run.length / 4) * 4)); } catch { return ""; } })];
    });
  }
`),
      ["--config", config],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    for (const n of cuts) expect(attemptOf(found, String(n)).status, String(n)).toBe("ok");
    // Each cut falls inside the form or past it: what is left of the secret there is masked, but for
    // its last bytes, which the base64 forms leave out (up to two at each end: see base64Forms).
    for (const n of cuts) expect((attemptOf(found, String(n)).value as string[])[0], String(n)).toMatch(/\[redacted\]\n?[A-Za-z0-9+/]{0,4}$/);
    const random = canary.slice("canary-".length);
    for (let at = 0; at + 4 <= random.length; at++) expect(result.stdout, random.slice(at, at + 4)).not.toContain(random.slice(at, at + 4));
    expectNoLeak(canary, result, root, isEnvFile);
  });
});
