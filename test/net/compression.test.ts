// Compressed answers, through the real CLI: a script may ask for one (Accept-Encoding is an
// ordinary header), and servers compress what they echo when asked (Express's compression
// middleware, nginx's gzip, httpbin, Postman Echo). Redaction looks for a secret's forms in the
// text of the answer, so it must be given the text, not the compressed bytes.

import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { attemptOf, attempts, configFile, CUT_END_CHARS, type Handler, isEnvFile, lit, permit, perTestResources, secretCutMarker, secretNetScript, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-compression-", { concurrent: true });

/**
 * The answer size limit the bomb tests set (libraryConfig.networkResponseLimitBytes): 1 MiB, not
 * the default 8 MiB (whose cut http.test.ts shows), so that each bomb costs tacit an eighth of the
 * decoding, masking and copying to reach it; each bomb decodes to BOMB_BYTES, eight times past it.
 */
const LIMIT = 1024 * 1024;
const BOMB_BYTES = 8 * LIMIT;
/**
 * What a script reads of an answer cut at LIMIT, to a request with a secret header: its length, and
 * where the marker begins (its last CUT_END_CHARS characters, no mask among them, left out).
 */
const CUT = [LIMIT - CUT_END_CHARS + secretCutMarker(LIMIT).length, LIMIT - CUT_END_CHARS + 1];

/** `--config` with the answer size limit at LIMIT (in a directory of its own, outside the script's root). */
const limitConfig = (): string[] => ["--config", configFile(resources.dir(), { networkResponseLimitBytes: LIMIT })];

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

describe.concurrent("compressed answers", () => {
  it("a gzipped echo of a secret header is redacted, and its compressed length tells nothing of the secret", async () => {
    const a = await resources.server(gzippingEcho);
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  const send = (body: string): string =>
    net.httpRequest("POST", ${lit(`${a.origin}/echo`)}, { headers: { "accept-encoding": "gzip" }, secretHeaders: { authorization: token }, body }).body;
  attempt("echoed", () => JSON.parse(send("hello")).headers.authorization);
  println("recovered: " + recover(send, "canary-", ${canary.length}));
`, { setup: `${ORACLE}
` }),
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
    const bomb = gzipSync(Buffer.alloc(BOMB_BYTES, "x"));
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
      secretNetScript([`127.0.0.1:${a.port}`], `
  const get = (where: string): string => net.httpGet(${lit(a.origin)} + where, { headers: { "accept-encoding": "gzip, deflate, br, zstd" }, secretHeaders: { authorization: token } });
  attempt("br", () => JSON.parse(get("/br")).headers.authorization);
  attempt("deflate", () => JSON.parse(get("/deflate")).headers.authorization);
  attempt("zstd", () => get("/zstd"));
  attempt("found-nowhere", () => { const answer = net.httpRequest("GET", ${lit(`${a.origin}/found-nowhere`)}, { headers: { "accept-encoding": "gzip" }, secretHeaders: { authorization: token } }); return [answer.status, JSON.parse(answer.body).headers.authorization]; });
  attempt("corrupt", () => get("/corrupt"));
  attempt("empty", () => net.httpRequest("HEAD", ${lit(`${a.origin}/empty`)}, { headers: { "accept-encoding": "gzip" } }));
  attempt("bomb", () => { const body = get("/bomb"); return [body.length, body.indexOf("[tacit: response truncated")]; });
`),
      [...permit(`127.0.0.1:${a.port}`), ...limitConfig()],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "br")).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "deflate")).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "found-nowhere")).toEqual({ status: "ok", value: [302, "[redacted]"] });
    expect(attemptOf(found, "zstd")).toMatchObject({ status: "Error", value: expect.stringMatching(/content coding tacit does not decode \(zstd\); nothing of the answer was kept/) });
    expect(attemptOf(found, "corrupt")).toMatchObject({ status: "Error", value: expect.stringMatching(/is not valid gzip; nothing of it was kept/) });
    expect(attemptOf(found, "empty")).toEqual({ status: "ok", value: { status: 200, body: "" } });
    expect(attemptOf(found, "bomb")).toEqual({ status: "ok", value: CUT });
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(6);
    expectNoLeak(canary, result, root, isEnvFile);
  });

  it("raw deflate (no zlib header, as some servers send deflate) is decoded and redacted too, and a raw-deflate bomb is cut at the limit as the gzip one is", async () => {
    const bomb = Buffer.alloc(BOMB_BYTES, "x");
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
      secretNetScript([`127.0.0.1:${a.port}`], `
  const get = (where: string): string => net.httpGet(${lit(a.origin)} + where, { headers: { "accept-encoding": "deflate" }, secretHeaders: { authorization: token } });
  attempt("raw", () => { const echo = JSON.parse(get("/raw")); return [echo.url, echo.headers.authorization]; });
  attempt("wrapped", () => { const echo = JSON.parse(get("/wrapped")); return [echo.url, echo.headers.authorization]; });
  attempt("raw-echo-text", () => get("/raw"));
  attempt("raw-bomb", () => { const body = get("/raw-bomb"); return [body.length, body.indexOf("[tacit: response truncated")]; });
  attempt("wrapped-bomb", () => { const body = get("/wrapped-bomb"); return [body.length, body.indexOf("[tacit: response truncated")]; });
  attempt("raw-corrupt", () => get("/raw-corrupt"));
  attempt("one-byte", () => get("/one-byte"));
  attempt("empty", () => net.httpRequest("HEAD", ${lit(`${a.origin}/empty`)}, { headers: { "accept-encoding": "deflate" } }));
`),
      [...permit(`127.0.0.1:${a.port}`), ...limitConfig()],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    // Decoded (the script reads the JSON), and the echoed secret header redacted in it.
    expect(attemptOf(found, "raw")).toEqual({ status: "ok", value: ["/raw", "[redacted]"] });
    expect(attemptOf(found, "wrapped")).toEqual({ status: "ok", value: ["/wrapped", "[redacted]"] });
    expect(attemptOf(found, "raw-echo-text")).toMatchObject({ status: "ok", value: expect.stringContaining('"authorization":"[redacted]"') });
    // The bombs decode to eight times the limit: each is cut at the limit, the same way.
    expect(attemptOf(found, "wrapped-bomb")).toEqual({ status: "ok", value: CUT });
    expect(attemptOf(found, "raw-bomb")).toEqual({ status: "ok", value: CUT });
    expect(attemptOf(found, "raw-corrupt")).toMatchObject({ status: "Error", value: expect.stringMatching(/is not valid deflate; nothing of it was kept/) });
    expect(attemptOf(found, "one-byte")).toMatchObject({ status: "Error", value: expect.stringMatching(/is not valid deflate; nothing of it was kept/) });
    expect(attemptOf(found, "empty")).toEqual({ status: "ok", value: { status: 200, body: "" } });
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(7);
    expectNoLeak(canary, result, root, isEnvFile);
  });

  it("raw deflate whose first two bytes pass for a zlib header is read as raw when zlib fails, as browsers read it; a bomb behind such a head is still cut at the limit", async () => {
    const a = await resources.server((request, response) => {
      response.setHeader("content-encoding", "deflate");
      const json = JSON.stringify(request);
      switch (new URL(request.url, "http://x").pathname) {
        case "/disguised":
          response.end(disguisedRawDeflate(json));
          return;
        case "/disguised-dictionary":
          // FDICT set in the would-be header: zlib asks for a dictionary, raw DEFLATE needs none.
          response.end(disguisedRawDeflate(json, { dictionaryFlag: true }));
          return;
        case "/disguised-in-pieces": {
          // The head a byte at a time, then the rest in pieces: the bytes zlib was given are read again whole.
          const stream = disguisedRawDeflate(json, { tail: "x".repeat(40_000) });
          response.write(stream.subarray(0, 1));
          setTimeout(() => {
            response.write(stream.subarray(1, 2));
            for (let at = 2; at < stream.length; at += 1000) response.write(stream.subarray(at, at + 1000));
            response.end();
          }, 20);
          return;
        }
        case "/disguised-bomb":
          response.end(disguisedRawDeflate("x", { tail: Buffer.alloc(BOMB_BYTES, "x") }));
          return;
        case "/neither":
          // Passes for a zlib header, and is no deflate stream either way.
          response.end(Buffer.concat([Buffer.from([0x78, 0x5e]), Buffer.from("not deflate in any way, not at all".repeat(30))]));
          return;
        default:
          response.end(deflateSync(json));
      }
    });
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  const get = (where: string): string => net.httpGet(${lit(a.origin)} + where, { headers: { "accept-encoding": "deflate" }, secretHeaders: { authorization: token } });
  attempt("disguised", () => { const echo = JSON.parse(get("/disguised")); return [echo.url, echo.headers.authorization]; });
  attempt("disguised-dictionary", () => { const echo = JSON.parse(get("/disguised-dictionary")); return [echo.url, echo.headers.authorization]; });
  attempt("disguised-in-pieces", () => { const body = get("/disguised-in-pieces"); return [body.length, body.includes("[redacted]"), body.endsWith("x".repeat(40_000))]; });
  attempt("disguised-bomb", () => { const body = get("/disguised-bomb"); return [body.length, body.indexOf("[tacit: response truncated")]; });
  attempt("neither", () => get("/neither"));
  attempt("wrapped", () => JSON.parse(get("/wrapped")).url);
`),
      [...permit(`127.0.0.1:${a.port}`), ...limitConfig()],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "disguised")).toEqual({ status: "ok", value: ["/disguised", "[redacted]"] });
    expect(attemptOf(found, "disguised-dictionary")).toEqual({ status: "ok", value: ["/disguised-dictionary", "[redacted]"] });
    const pieces = attemptOf(found, "disguised-in-pieces");
    expect(pieces.status).toBe("ok");
    expect((pieces.value as unknown[]).slice(1)).toEqual([true, true]);
    expect(attemptOf(found, "disguised-bomb")).toEqual({ status: "ok", value: CUT });
    expect(attemptOf(found, "neither")).toMatchObject({ status: "Error", value: expect.stringMatching(/is not valid deflate; nothing of it was kept/) });
    expect(attemptOf(found, "wrapped")).toEqual({ status: "ok", value: "/wrapped" });
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(6);
    expectNoLeak(canary, result, root, isEnvFile);
  });
});

/**
 * A raw DEFLATE stream whose first two bytes pass the zlib header check (CM 8, a window of at
 * most 32 KiB, a multiple of 31): its first block is a stored one, not the last, whose padding
 * bits (ignored by raw DEFLATE) make the first byte 0x78, and whose length's low byte makes the
 * second byte complete the check (the text is padded with spaces to such a length). The bytes
 * that follow are the stored text, and `tail` compressed as the last block. Checked here both
 * ways: raw DEFLATE reads it whole, zlib fails on it.
 */
function disguisedRawDeflate(text: string, options: { dictionaryFlag?: boolean; tail?: string | Buffer } = {}): Buffer {
  const fits = (length: number): boolean => ((0x78 << 8) | (length & 0xff)) % 31 === 0 && (length & 0x20) !== 0 === (options.dictionaryFlag ?? false);
  let length = Buffer.byteLength(text);
  while (!fits(length)) length++;
  const stored = Buffer.from(text.padEnd(text.length + length - Buffer.byteLength(text), " "));
  const head = Buffer.from([0x78, length & 0xff, length >> 8, ~length & 0xff, (~length >> 8) & 0xff]);
  const stream = Buffer.concat([head, stored, deflateRawSync(options.tail ?? "")]);
  expect((stream[0]! << 8) | stream[1]!).toSatisfy((header: number) => header % 31 === 0 && (header >> 8 & 0x0f) === 8);
  expect(inflateRawSync(stream).subarray(0, length).toString()).toBe(stored.toString());
  expect(() => inflateSync(stream)).toThrow();
  return stream;
}
