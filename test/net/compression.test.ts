// Compressed answers, through the real CLI: a script may ask for one (Accept-Encoding is an
// ordinary header), and servers compress what they echo when asked (Express's compression
// middleware, nginx's gzip, httpbin, Postman Echo). Redaction looks for a secret's forms in the
// text of the answer, so it must be given the text, not the compressed bytes.

import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, type Handler, isEnvFile, lit, permit, perTestResources, tacit, TOKEN_FROM_ENV } from "./fixtures.js";

const resources = perTestResources("tacit-net-compression-");

/** A JSON echo of the request (method, url, headers, body), gzipped when the request accepts gzip. */
const gzippingEcho: Handler = (request, response) => {
  response.setHeader("content-type", "application/json");
  const json = JSON.stringify(request);
  if (/\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""))) {
    response.setHeader("content-encoding", "gzip");
    response.end(gzipSync(json));
  } else {
    response.end(json);
  }
};

/**
 * A compression oracle (CRIME's two tries) on a secret header the server echoes before the
 * body, which the script chooses. The body starts with the part of the secret known so far,
 * then a candidate character c: once as "known c ~^|{}" and once as "known ~^| c {}". Both hold
 * the same characters, so their compressed forms have the same length and differ only where c
 * stands, unless c is right: then the first one's back-reference to the secret is one longer,
 * and everything compressed after it moves. Read as text (bytes past 0x7f are lost), the two
 * answers then stop lining up after that place; for a wrong c they line up again a few
 * characters later. The rest of the body varies the compressor's codes between tries, so the
 * move is not a whole byte every time. `recover()` returns the secret as far as it got.
 */
const ORACLE = `
const HEX = "0123456789abcdef-";
const LETTERS = "ghijklmnopqrstuvwxyzGHIJKLMNOPQRSTUVWXYZ";
const pick = (from: string): string => from[Math.floor(Math.random() * from.length)]!;
function tails(): string[] {
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    let tail = "";
    for (let i = 0; i < 900; i++) tail += pick(LETTERS) + (Math.floor(Math.random() * 3) < k ? pick("0123456789abcdef") : "");
    out.push(tail);
  }
  return out;
}
function realigns(a: string, b: string): boolean {
  let p = 0;
  while (p < a.length && a[p] === b[p]) p++;
  if (p >= Math.min(a.length, b.length) - 80) return true;
  for (let da = 0; da <= 8; da++) for (let db = 0; db <= 8; db++) if (a.slice(p + da, p + da + 64) === b.slice(p + db, p + db + 64)) return true;
  return false;
}
function recover(send: (body: string) => string, known: string, length: number): string {
  while (known.length < length) {
    let scores = [0];
    for (let attempt = 0; attempt < 3 && Math.max(...scores) === 0; attempt++) {
      const round = tails();
      scores = [...HEX].map((c) => round.filter((tail) => !realigns(send(known + c + "~^|{}" + tail), send(known + "~^|" + c + "{}" + tail))).length);
    }
    if (Math.max(...scores) === 0) break;
    known += HEX[scores.indexOf(Math.max(...scores))];
  }
  return known;
}
`;

describe("compressed answers", () => {
  it("a gzipped echo of a secret header is redacted, and its compressed length tells nothing of the secret", async () => {
    const a = await resources.server(gzippingEcho);
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}${ORACLE}
${TOKEN_FROM_ENV}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  const send = (body: string): string =>
    net.httpRequest("POST", ${lit(`${a.origin}/echo`)}, { headers: { "accept-encoding": "gzip" }, secretHeaders: { authorization: token }, body }).body;
  attempt("echoed", () => JSON.parse(send("hello")).headers.authorization);
  println("recovered: " + recover(send, "canary-", ${canary.length}));
});
`,
      [...permit(`127.0.0.1:${a.port}`), "--exec-timeout-ms", "120000"],
    );
    expect(result.code, result.stderr).toBe(0);
    // The secret went out, and the answer came back compressed.
    expect(a.received[0]?.headers.authorization).toBe(canary);
    expect(a.received[0]?.headers["accept-encoding"]).toBe("gzip");
    // The oracle ran, and learnt nothing (not even the secret's first four characters).
    expect(result.stdout).toContain("recovered: canary-");
    expectNoLeak(canary, result, root, isEnvFile);
    const random = canary.slice("canary-".length);
    for (let at = 0; at + 4 <= random.length; at += 2) {
      expect(result.stdout.includes(`canary-${random.slice(0, at + 4)}`), `stdout holds the canary's first ${at + 4} characters`).toBe(false);
    }
    // The script read the answer as text, with the secret redacted.
    expect(attemptOf(attempts(result.stdout), "echoed")).toEqual({ status: "ok", value: "[redacted]" });
  }, 180_000);

  it("deflate and br are decoded too; a coding tacit cannot decode, or a corrupt one, is an error that shows nothing; a bomb is cut at the limit", async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, "x"));
    const a = await resources.server((request, response) => {
      const json = JSON.stringify(request);
      switch (request.url) {
        case "/br":
          response.setHeader("content-encoding", "br");
          response.end(brotliCompressSync(json));
          return;
        case "/deflate":
          response.setHeader("content-encoding", "deflate");
          response.end(deflateSync(json));
          return;
        case "/zstd":
          // Not zstd at all: what matters is that an unknown coding is not passed on as it is.
          response.setHeader("content-encoding", "zstd");
          response.end(json);
          return;
        case "/corrupt":
          response.setHeader("content-encoding", "gzip");
          response.end(gzipSync(json).subarray(0, 40));
          return;
        case "/found-nowhere":
          // A redirect status with no Location is an answer like any other, shown to the script.
          response.statusCode = 302;
          response.setHeader("content-encoding", "gzip");
          response.end(gzipSync(json));
          return;
        case "/bomb":
          response.setHeader("content-encoding", "gzip");
          response.end(bomb);
          return;
        default:
          response.setHeader("content-encoding", "gzip");
          response.end();
      }
    });
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
${TOKEN_FROM_ENV}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  const get = (where: string): string => net.httpGet(${lit(a.origin)} + where, { headers: { "accept-encoding": "gzip, deflate, br, zstd" }, secretHeaders: { authorization: token } });
  attempt("br", () => JSON.parse(get("/br")).headers.authorization);
  attempt("deflate", () => JSON.parse(get("/deflate")).headers.authorization);
  attempt("zstd", () => get("/zstd"));
  attempt("found-nowhere", () => { const answer = net.httpRequest("GET", ${lit(`${a.origin}/found-nowhere`)}, { headers: { "accept-encoding": "gzip" }, secretHeaders: { authorization: token } }); return [answer.status, JSON.parse(answer.body).headers.authorization]; });
  attempt("corrupt", () => get("/corrupt"));
  attempt("empty", () => net.httpRequest("HEAD", ${lit(`${a.origin}/empty`)}, { headers: { "accept-encoding": "gzip" } }));
  attempt("bomb", () => { const body = get("/bomb"); return [body.length, body.indexOf("[tacit: response truncated")]; });
});
`,
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "br")).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "deflate")).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "found-nowhere")).toEqual({ status: "ok", value: [302, "[redacted]"] });
    expect(attemptOf(found, "zstd")).toMatchObject({ status: "Error", value: expect.stringMatching(/content coding tacit does not decode \(zstd\); nothing of the answer was kept/) });
    expect(attemptOf(found, "corrupt")).toMatchObject({ status: "Error", value: expect.stringMatching(/is not valid gzip; nothing of it was kept/) });
    expect(attemptOf(found, "empty")).toEqual({ status: "ok", value: { status: 200, body: "" } });
    const limit = 8 * 1024 * 1024;
    expect(attemptOf(found, "bomb")).toEqual({ status: "ok", value: [limit + "\n[tacit: response truncated at 8388608 bytes]\n".length, limit + 1] });
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(6);
    expectNoLeak(canary, result, root, isEnvFile);
  });

  it("raw deflate (no zlib header, as some servers send deflate) is decoded and redacted too, and a raw-deflate bomb is cut at the limit as the gzip one is", async () => {
    const limit = 8 * 1024 * 1024;
    const bomb = Buffer.alloc(64 * 1024 * 1024, "x");
    const a = await resources.server((request, response) => {
      const json = JSON.stringify(request);
      response.setHeader("content-encoding", "deflate");
      switch (request.url) {
        case "/raw":
          response.end(deflateRawSync(json));
          return;
        case "/wrapped":
          response.end(deflateSync(json));
          return;
        case "/raw-bomb":
          response.end(deflateRawSync(bomb));
          return;
        case "/wrapped-bomb":
          response.end(deflateSync(bomb));
          return;
        case "/raw-corrupt":
          response.end(deflateRawSync(json).subarray(0, 20));
          return;
        case "/one-byte":
          response.end(Buffer.from([0x78]));
          return;
        default:
          response.end();
      }
    });
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
${TOKEN_FROM_ENV}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
  const get = (where: string): string => net.httpGet(${lit(a.origin)} + where, { headers: { "accept-encoding": "deflate" }, secretHeaders: { authorization: token } });
  attempt("raw", () => { const echo = JSON.parse(get("/raw")); return [echo.url, echo.headers.authorization]; });
  attempt("wrapped", () => { const echo = JSON.parse(get("/wrapped")); return [echo.url, echo.headers.authorization]; });
  attempt("raw-echo-text", () => get("/raw"));
  attempt("raw-bomb", () => { const body = get("/raw-bomb"); return [body.length, body.indexOf("[tacit: response truncated")]; });
  attempt("wrapped-bomb", () => { const body = get("/wrapped-bomb"); return [body.length, body.indexOf("[tacit: response truncated")]; });
  attempt("raw-corrupt", () => get("/raw-corrupt"));
  attempt("one-byte", () => get("/one-byte"));
  attempt("empty", () => net.httpRequest("HEAD", ${lit(`${a.origin}/empty`)}, { headers: { "accept-encoding": "deflate" } }));
});
`,
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    // Decoded (the script reads the JSON), and the echoed secret header redacted in it.
    expect(attemptOf(found, "raw")).toEqual({ status: "ok", value: ["/raw", "[redacted]"] });
    expect(attemptOf(found, "wrapped")).toEqual({ status: "ok", value: ["/wrapped", "[redacted]"] });
    expect(attemptOf(found, "raw-echo-text")).toMatchObject({ status: "ok", value: expect.stringContaining('"authorization":"[redacted]"') });
    // The bombs decode to 64 MiB: each is cut at the limit, the same way.
    const cut = [limit + "\n[tacit: response truncated at 8388608 bytes]\n".length, limit + 1];
    expect(attemptOf(found, "wrapped-bomb")).toEqual({ status: "ok", value: cut });
    expect(attemptOf(found, "raw-bomb")).toEqual({ status: "ok", value: cut });
    expect(attemptOf(found, "raw-corrupt")).toMatchObject({ status: "Error", value: expect.stringMatching(/is not valid deflate; nothing of it was kept/) });
    expect(attemptOf(found, "one-byte")).toMatchObject({ status: "Error", value: expect.stringMatching(/is not valid deflate; nothing of it was kept/) });
    expect(attemptOf(found, "empty")).toEqual({ status: "ok", value: { status: 200, body: "" } });
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(7);
    expectNoLeak(canary, result, root, isEnvFile);
  });
});
