// Answers in UTF-16, through the real CLI: a server that honours the charset a request asks for
// (Spring MVC with Jackson writes JSON in the charset of the media type it negotiated, UTF-16 and
// UTF-32 included) echoes a secret header in it. Redaction looks for a secret's forms in the
// answer's text, so the text must be read in the charset the answer declares.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { attemptOf, attempts, configFile, expectRefused, type Handler, isEnvFile, lit, makeCanary, permit, perTestResources, secretCutMarker, secretNetScript, tacit, writeTree } from "./fixtures.js";

const resources = perTestResources("tacit-net-charset-", { concurrent: true });

/** The text in `charset` as Java writes it ("UTF-16": big-endian after a byte order mark). */
function encode(text: string, charset: string): Buffer {
  const le = Buffer.from(text, "utf16le");
  switch (charset) {
    case "utf-16le":
      return le;
    case "utf-16be":
      return Buffer.from(le).swap16();
    case "utf-16":
      return Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(le).swap16()]);
    case "x-utf-16le-bom":
      return Buffer.concat([Buffer.from([0xff, 0xfe]), le]);
    case "utf-32be": {
      const points = [...text].map((c) => c.codePointAt(0)!);
      const out = Buffer.alloc(points.length * 4);
      points.forEach((point, i) => out.writeUInt32BE(point, i * 4));
      return out;
    }
    default:
      return Buffer.from(text, "utf8");
  }
}

/**
 * A JSON echo of the request, in the charset its Accept header asks for (UTF-8 otherwise), named
 * in the Content-Type unless Accept says "undeclared" (JSON in UTF-16 or UTF-32 as RFC 4627 let
 * it be, told by its first bytes).
 */
const negotiatingEcho: Handler = (request, response) => {
  const accept = String(request.headers.accept ?? "");
  const charset = /charset=([\w-]+)/i.exec(accept)?.[1]?.toLowerCase() ?? "utf-8";
  response.setHeader("content-type", accept.includes("undeclared") ? "application/json" : `application/json;charset=${charset.toUpperCase()}`);
  response.end(encode(JSON.stringify(request), charset));
};

describe.concurrent("answers in another charset", () => {
  it("a UTF-16 echo of a secret header is read as UTF-16 and redacted; a UTF-32 one is refused", async () => {
    const a = await resources.server(negotiatingEcho);
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  const echoed = (charset: string): string => {
    const body = net.httpGet(${lit(`${a.origin}/echo`)}, { headers: { accept: "application/json;charset=" + charset }, secretHeaders: { authorization: token } });
    // Read as UTF-8, an ASCII text in UTF-16 or UTF-32 is itself with NULs between its characters.
    return JSON.parse(body.replace(/[\\u0000\\ufffd]/g, "")).headers.authorization;
  };
  for (const charset of ["utf-8", "utf-16le", "utf-16be", "utf-16", "x-utf-16le-bom", "utf-32be"]) attempt(charset, () => echoed(charset));
  for (const charset of ["utf-16le", "utf-16be", "utf-32be"]) attempt("undeclared-" + charset, () => echoed(charset + ";undeclared"));
  attempt("head-utf-32be", () => net.httpRequest("HEAD", ${lit(`${a.origin}/echo`)}, { headers: { accept: "application/json;charset=utf-32be" } }));
`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(a.received.map((r) => r.headers.authorization)).toEqual([...Array(9).fill(canary), undefined]);
    // An answer without a body has no text to read, whatever charset it names.
    expect(attemptOf(attempts(result.stdout), "head-utf-32be")).toEqual({ status: "ok", value: { status: 200, body: "" } });
    expectNoLeak(canary, result, root, isEnvFile);
    const found = attempts(result.stdout);
    for (const charset of ["utf-8", "utf-16le", "utf-16be", "utf-16", "x-utf-16le-bom"]) expect(attemptOf(found, charset), charset).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "utf-32be")).toMatchObject({ status: "Error", value: expect.stringMatching(/UTF-32BE, which tacit does not read; nothing of the answer was kept/) });
    for (const charset of ["utf-16le", "utf-16be"]) expect(attemptOf(found, `undeclared-${charset}`), charset).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "undeclared-utf-32be")).toMatchObject({ status: "Error", value: expect.stringMatching(/UTF-32BE, which tacit does not read/) });
  });

  it("a UTF-16 answer cut by the size limit inside an echoed secret, at an odd byte, shows no piece of it", async () => {
    const limit = 4097;
    // The cut falls `keep` characters into the secret, and one byte into the character after.
    const a = await resources.server((request, response) => {
      const keep = Number(new URL(request.url, "http://x").searchParams.get("keep"));
      response.setHeader("content-type", "text/plain; charset=utf-16le");
      response.end(encode("x".repeat((limit - 1) / 2 - keep) + String(request.headers.authorization) + "y".repeat(100), "utf-16le"));
    });
    const { root, canary } = resources.projectWithSecret();
    const keeps = [8, 20, canary.length - 4];
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  for (const keep of ${JSON.stringify(keeps)}) {
    attempt("keep-" + keep, () => net.httpGet(${lit(`${a.origin}/pad?keep=`)} + keep, { secretHeaders: { authorization: token } }).replace(/^x+/, ""));
  }
`),
      [...permit(`127.0.0.1:${a.port}`), "--config", configFile(root, { networkResponseLimitBytes: limit })],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    for (const keep of keeps) {
      expect(attemptOf(found, `keep-${keep}`), `keep-${keep}`).toEqual({ status: "ok", value: `[redacted]${secretCutMarker(limit)}` });
    }
    expectNoLeak(canary, result, root, isEnvFile);
  });
});

/**
 * Java's names (Charset.forName, which Spring's StringHttpMessageConverter uses to write a String
 * in the charset of the media type it chose) for the charsets `encode` writes: UTF_16 and UnicodeBig are UTF-16 (big-endian after a mark),
 * UTF_16LE and UnicodeLittleUnmarked UTF-16LE, UTF_32 UTF-32 (big-endian, no mark), and
 * unicode-1-1-utf-8 UTF-8.
 */
const JAVA_ALIASES: Record<string, string> = {
  utf_16: "utf-16",
  unicodebig: "utf-16",
  utf_16le: "utf-16le",
  unicodelittleunmarked: "utf-16le",
  utf_32: "utf-32be",
  utf_32be_bom: "utf-32be",
  "unicode-1-1-utf-8": "utf-8",
};

/** negotiatingEcho with Java's names: the Content-Type names the charset as asked, the body is in the charset it stands for. */
const javaNamingEcho: Handler = (request, response) => {
  const asked = /charset=([\w-]+)/i.exec(String(request.headers.accept ?? ""))?.[1] ?? "UTF-8";
  response.setHeader("content-type", `application/json;charset=${asked}`);
  response.end(encode(JSON.stringify(request), JAVA_ALIASES[asked.toLowerCase()] ?? asked.toLowerCase()));
};

describe.concurrent("charsets by other names", () => {
  it("an echo in UTF-16 or UTF-32 by Java's names for them is read as UTF-16 or refused, and one in UTF-8 by a name with 'unicode' in it is read as UTF-8", async () => {
    const a = await resources.server(javaNamingEcho);
    const { root, canary } = resources.projectWithSecret();
    const names = Object.keys(JAVA_ALIASES).map((name) => name.toUpperCase());
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  for (const charset of ${JSON.stringify(names)}) {
    attempt(charset, () => {
      const body = net.httpGet(${lit(`${a.origin}/echo`)}, { headers: { accept: "application/json;charset=" + charset }, secretHeaders: { authorization: token } });
      // Read as UTF-8, a text in UTF-16 or UTF-32 is itself with NULs between its characters;
      // read as UTF-16, a text in UTF-8 is its bytes two to a unit.
      const asBytes = [...body].flatMap((c) => [c.charCodeAt(0) & 255, c.charCodeAt(0) >> 8]).map((b) => String.fromCharCode(b)).join("");
      const authorization = (text: string): unknown => JSON.parse(text.replace(/[\\u0000\\ufffd]/g, "")).headers.authorization;
      try {
        return authorization(body);
      } catch {
        return authorization(asBytes);
      }
    });
  }
`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(a.received.map((r) => r.headers.authorization)).toEqual(names.map(() => canary));
    expectNoLeak(canary, result, root, isEnvFile);
    const found = attempts(result.stdout);
    for (const charset of ["UTF_16", "UNICODEBIG", "UTF_16LE", "UNICODELITTLEUNMARKED", "UNICODE-1-1-UTF-8"]) {
      expect(attemptOf(found, charset), charset).toEqual({ status: "ok", value: "[redacted]" });
    }
    for (const charset of ["UTF_32", "UTF_32BE_BOM"]) {
      expect(attemptOf(found, charset), charset).toMatchObject({ status: "Error", value: expect.stringMatching(new RegExp(`answered in ${charset}, which tacit does not read; nothing of the answer was kept`)) });
    }
  });
});

/**
 * Spring MVC with Jackson: the Content-Type names the charset the request asked for, and the body
 * is in Jackson's encoding of that name, which knows UTF-16BE and UTF-16LE but not a bare UTF-16:
 * for that one it writes UTF-8. Asked for "undeclared", UTF-16LE with a byte order mark, as text
 * that names no charset (.NET's Encoding.Unicode writes the mark).
 */
const jacksonEcho: Handler = (request, response) => {
  const asked = /charset=([\w-]+)/i.exec(String(request.headers.accept ?? ""))?.[1] ?? "UTF-8";
  if (asked === "undeclared") {
    response.setHeader("content-type", "text/plain");
    response.end(encode(JSON.stringify(request), "x-utf-16le-bom"));
    return;
  }
  response.setHeader("content-type", `application/json;charset=${asked}`);
  const written = asked.toLowerCase();
  response.end(encode(JSON.stringify(request), written === "utf-16le" || written === "utf-16be" ? written : "utf-8"));
};

describe.concurrent("charsets a server names but does not write", () => {
  it("an echo of a secret in bytes that another reading than the named one shows is refused, nothing of it kept", async () => {
    const a = await resources.server(jacksonEcho);
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  for (const charset of ["UTF-16", "utf-16", "UTF-16LE", "UTF-16BE", "undeclared"]) {
    attempt(charset, () => {
      const body = net.httpGet(${lit(`${a.origin}/echo`)}, { headers: { accept: "application/json;charset=" + charset }, secretHeaders: { authorization: token } });
      // Read as UTF-16, a text in UTF-8 is its bytes two to a unit; read as UTF-8, one in UTF-16 has NULs.
      const asBytes = [...body].flatMap((c) => [c.charCodeAt(0) & 255, c.charCodeAt(0) >> 8]).map((b) => String.fromCharCode(b)).join("");
      const authorization = (text: string): unknown => JSON.parse(text.replace(/^[^{]*/, "").replace(/[\\u0000\\ufffd]/g, "")).headers.authorization;
      try {
        return authorization(body);
      } catch {
        return authorization(asBytes);
      }
    });
  }
  attempt("no-secret", () => net.httpGet(${lit(`${a.origin}/echo`)}, { headers: { accept: "application/json;charset=UTF-16" } }).length > 0);
`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(a.received.map((r) => r.headers.authorization)).toEqual([...Array(5).fill(canary), undefined]);
    expectNoLeak(canary, result, root, isEnvFile);
    const found = attempts(result.stdout);
    expectRefused(found, ["UTF-16", "utf-16", "undeclared"], /answered in bytes that, read another way than as its Content-Type says, hold a secret this request carried.*nothing of the answer was kept/);
    for (const charset of ["UTF-16LE", "UTF-16BE"]) expect(attemptOf(found, charset), charset).toEqual({ status: "ok", value: "[redacted]" });
    // Without a secret there is nothing to find: the answer is read as its Content-Type says.
    expect(attemptOf(found, "no-secret")).toEqual({ status: "ok", value: true });
  });
});

/**
 * IBM037, EBCDIC as Java writes it (Spring's StringHttpMessageConverter writes a String in the
 * charset the request asked for by any name Java knows): letters, digits and the punctuation of a
 * JSON echo; anything else as "?".
 */
const IBM037: ReadonlyMap<string, number> = new Map([
  ...[..."abcdefghi"].map((c, i): [string, number] => [c, 0x81 + i]),
  ...[..."jklmnopqr"].map((c, i): [string, number] => [c, 0x91 + i]),
  ...[..."stuvwxyz"].map((c, i): [string, number] => [c, 0xa2 + i]),
  ...[..."ABCDEFGHI"].map((c, i): [string, number] => [c, 0xc1 + i]),
  ...[..."JKLMNOPQR"].map((c, i): [string, number] => [c, 0xd1 + i]),
  ...[..."STUVWXYZ"].map((c, i): [string, number] => [c, 0xe2 + i]),
  ...[..."0123456789"].map((c, i): [string, number] => [c, 0xf0 + i]),
  ...Object.entries({ " ": 0x40, ".": 0x4b, "(": 0x4d, "+": 0x4e, "-": 0x60, "/": 0x61, ",": 0x6b, "_": 0x6d, ":": 0x7a, "=": 0x7e, '"': 0x7f, "{": 0xc0, "}": 0xd0 }),
]);

/** A JSON echo of the request in IBM037 when its Accept header asks for it, else in UTF-8, named as asked. */
const ebcdicEcho: Handler = (request, response) => {
  const asked = /charset=([\w-]+)/i.exec(String(request.headers.accept ?? ""))?.[1] ?? "UTF-8";
  response.setHeader("content-type", `application/json;charset=${asked}`);
  const text = JSON.stringify(request);
  response.end(/^(ibm0?37|cp037)$/i.test(asked) ? Buffer.from([...text].map((c) => IBM037.get(c) ?? 0x6f)) : Buffer.from(text, "utf8"));
};

describe.concurrent("charsets tacit does not read", () => {
  it("an echo of a secret header in EBCDIC (IBM037), which read as UTF-8 keeps much of it, is refused, nothing of it kept; one in a charset tacit knows is read", async () => {
    const a = await resources.server(ebcdicEcho);
    const root = path.join(resources.dir(), "work");
    // A key of upper- and lower-case letters, as many are: in IBM037 an upper-case letter followed
    // by a lower-case one is a whole UTF-8 character, which a script reads back.
    const key = [...makeCanary().replace(/[^0-9a-f]/g, "")].map((digit) => "BCDEFGHIJKLMNOPQ"[parseInt(digit, 16)]! + "abcdefghijklmnop"[parseInt(digit, 16)]!).join("");
    writeTree(root, { ".env": `${key}\n` });
    const fromEbcdic = Object.fromEntries([...IBM037].map(([c, byte]) => [byte, c]));
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  const get = (charset: string, secret: boolean): string =>
    net.httpGet(${lit(`${a.origin}/echo`)}, { headers: { accept: "application/json;charset=" + charset }, ...(secret ? { secretHeaders: { authorization: token } } : {}) });
  // Each character that came through whole is its UTF-8 bytes, each an EBCDIC character.
  const asEbcdic = (text: string): string => [...text].map((c) => [...new TextEncoder().encode(c)].map((byte) => fromEbcdic[byte] ?? "?").join("")).join("");
  attempt("IBM037", () => asEbcdic(get("IBM037", true)));
  attempt("windows-1252", () => JSON.parse(get("windows-1252", true)).headers.authorization);
  attempt("no-secret", () => get("IBM037", false).length > 0);
`, { setup: `const fromEbcdic: Record<number, string> = ${JSON.stringify(fromEbcdic)};
` }),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(a.received.map((r) => r.headers.authorization)).toEqual([key, key, undefined]);
    expectNoLeak(key, result, root, isEnvFile);
    for (let at = 0; at + 8 <= key.length; at += 4) expect(result.stdout, "a piece of the key").not.toContain(key.slice(at, at + 8));
    const found = attempts(result.stdout);
    expectRefused(found, ["IBM037"], /answered in ibm037, a charset tacit does not read.*nothing of the answer was kept\. Ask for UTF-8/);
    // A charset whose bytes tacit knows (ASCII as ASCII) is read as before, and without a secret there is nothing to find.
    expect(attemptOf(found, "windows-1252")).toEqual({ status: "ok", value: "[redacted]" });
    expect(attemptOf(found, "no-secret")).toEqual({ status: "ok", value: true });
  });
});
