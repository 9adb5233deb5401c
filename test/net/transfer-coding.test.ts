// Transfer codings, through the real CLI. Node's HTTP parser undoes chunked and nothing else: an
// answer sent "Transfer-Encoding: gzip, chunked" reached the script as its compressed bytes, where
// redaction finds no form of an echoed secret header and the bytes and their size are the
// compression oracle that compression.test.ts shows reading a secret back (its content codings
// are decoded for that reason). A server sends such a coding only when the request's TE header
// asked for one (RFC 9112 6.1); tacit refuses TE from scripts, so none does.

import { deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { attemptOf, attempts, isEnvFile, lit, permit, perTestResources, secretNetScript, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-transfer-coding-", { concurrent: true });

describe.concurrent("an answer in a transfer coding other than chunked", () => {
  it("is refused, nothing of its bytes kept, whether or not it echoes a secret header; chunked alone still reads", async () => {
    const a = await resources.server((request, response) => {
      const json = Buffer.from(JSON.stringify(request));
      switch (request.url) {
        case "/gzip":
          response.setHeader("transfer-encoding", "gzip, chunked");
          response.end(gzipSync(json));
          return;
        case "/deflate":
          response.setHeader("transfer-encoding", "Deflate , chunked");
          response.end(deflateSync(json));
          return;
        default:
          response.setHeader("transfer-encoding", "chunked");
          response.end(json);
      }
    });
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  const get = (where: string, secret: boolean): string =>
    net.httpRequest("GET", ${lit(a.origin)} + where, secret ? { secretHeaders: { authorization: token } } : {}).body;
  attempt("gzip", () => get("/gzip", true));
  attempt("deflate", () => get("/deflate", true));
  attempt("gzip without secrets", () => get("/gzip", false));
  attempt("chunked", () => JSON.parse(get("/chunked", true)).headers.authorization);
`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    const refusal = (coding: string) => ({
      status: "Error",
      value: expect.stringMatching(new RegExp(`answered in a transfer coding tacit does not decode \\(${coding}\\).*nothing of the answer was kept`)),
    });
    expect(attemptOf(found, "gzip")).toMatchObject(refusal("gzip"));
    expect(attemptOf(found, "deflate")).toMatchObject(refusal("Deflate"));
    expect(attemptOf(found, "gzip without secrets")).toMatchObject(refusal("gzip"));
    expect(attemptOf(found, "chunked")).toEqual({ status: "ok", value: "[redacted]" });
    // The requests went out, secret included: the refusal is of the answers.
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(3);
    // No compressed byte reached the script: a gzip stream begins 1f 8b, a zlib one 78.
    expect(result.stdout).not.toMatch(/\\u001f|\uFFFD/);
    expectNoLeak(canary, result, root, isEnvFile);
  });
});
