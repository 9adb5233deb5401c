// A deflate answer with bytes after the end of its stream, through the real CLI. The inflater
// ends its output where the stream ends, before the answer's last byte came: tacit waited for an
// end that had come already, and the request hung past networkTimeoutMs (whose timer only
// destroyed a request whose answer had all come) until the evaluation's time limit killed the
// script: a security review's server held a script 30 s under a 3 s request limit with a zlib
// stream and a few bytes after it, whatever the script caught. Node's own inflateSync (and its
// gunzip) leave bytes past a stream's end, and so does tacit now: the answer is the stream's text.

import { deflateRawSync, deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { attemptOf, attempts, configFile, isEnvFile, lit, perTestResources, secretNetScript, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-deflate-trailing-");

/** The request limit the test sets: far under the evaluation's, which killed the script before. */
const REQUEST_LIMIT_MS = 3000;

describe("a deflate answer with bytes after its stream's end", () => {
  it("is its stream's text, redacted as any other, within the request's time limit", async () => {
    const a = await resources.server((request, response) => {
      const json = JSON.stringify(request);
      response.setHeader("content-type", "application/json");
      response.setHeader("content-encoding", "deflate");
      switch (new URL(request.url, "http://x").pathname) {
        case "/zlib":
          // A line break after the stream, in the same write (one chunk).
          response.end(Buffer.concat([deflateSync(json), Buffer.from("\r\n")]));
          return;
        case "/raw":
          response.end(Buffer.concat([deflateRawSync(json), Buffer.from("\r\n")]));
          return;
        case "/zlib-later":
          // The stream whole, then more bytes a while later: another chunk.
          response.write(deflateSync(json));
          setTimeout(() => response.end(Buffer.from("trailing bytes")), 50);
          return;
        case "/twice":
          // The stream twice over (a server that compressed what it had compressed already, and sent both).
          response.end(Buffer.concat([deflateSync(json), deflateSync(json)]));
          return;
        default:
          response.end(deflateSync(json));
      }
    });
    const { root, canary } = resources.projectWithSecret();
    const config = configFile(resources.dir(), { networkPermissions: [`127.0.0.1:${a.port}`], networkTimeoutMs: REQUEST_LIMIT_MS });
    const started = Date.now();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  const get = (where: string): string => net.httpGet(${lit(a.origin)} + where, { headers: { "accept-encoding": "deflate" }, secretHeaders: { authorization: token } });
  for (const where of ["/zlib", "/raw", "/zlib-later", "/twice", "/plain"]) {
    attempt(where, () => { const echo = JSON.parse(get(where)); return [echo.url, echo.headers.authorization]; });
  }
`),
      ["--config", config, "--exec-timeout-ms", "25000"],
    );
    const elapsed = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    for (const where of ["/zlib", "/raw", "/zlib-later", "/twice", "/plain"]) {
      expect(attemptOf(found, where), where).toEqual({ status: "ok", value: [where, "[redacted]"] });
    }
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(5);
    // No request waited for its limit, let alone the evaluation's.
    expect(elapsed).toBeLessThan(15_000);
    expectNoLeak(canary, result, root, isEnvFile);
  }, 40_000);
});
