// A secret header with characters past ASCII, echoed as the bytes it went out as, through the real
// CLI. A header goes out one byte per character (latin-1): "pässwörd-<canary>" is the bytes 70 e4
// 73 73 …, not the value's UTF-8. Redaction knew that value's UTF-8 in percent-escapes, base64 and
// hex, and the bytes read as UTF-8 only as they are; a server that escapes a string of bytes (PHP's
// urlencode, Python's quote of bytes) or shows the raw request in base64 or hex gave back the
// canary in plaintext, or in a form the script decoded.

import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { echoedNonAsciiSecret, perTestResources } from "./fixtures.js";

const resources = perTestResources("tacit-net-header-bytes-", { concurrent: true });

/** Each byte past ASCII as %XX (upper-case hex), ASCII bytes as they are: PHP's urlencode of a byte string, less its escapes of ASCII punctuation. */
const percentEscaped = (bytes: Buffer): string => [...bytes].map((byte) => (byte < 0x80 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase()}`)).join("");

/** What a server gives back of the header's bytes (`wire`: as received; `utf8`: those bytes read as UTF-8, each that is not UTF-8 a U+FFFD). */
const SHAPES: Record<string, (wire: Buffer) => string> = {
  "percent-bytes": (wire) => percentEscaped(wire),
  "percent-bytes-lower": (wire) => percentEscaped(wire).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
  "percent-read-as-utf8": (wire) => encodeURIComponent(wire.toString("utf8")),
  "base64-bytes": (wire) => wire.toString("base64"),
  "base64url-bytes": (wire) => wire.toString("base64url"),
  "base64-raw-request": (wire) => Buffer.concat([Buffer.from("GET / HTTP/1.1\r\nx-key: "), wire, Buffer.from("\r\n\r\n")]).toString("base64"),
  "base64-read-as-utf8": (wire) => Buffer.from(wire.toString("utf8")).toString("base64"),
  "hex-bytes": (wire) => wire.toString("hex"),
  "hex-bytes-upper-spaced": (wire) => [...wire].map((byte) => byte.toString(16).toUpperCase().padStart(2, "0")).join(" "),
  "hex-read-as-utf8": (wire) => Buffer.from(wire.toString("utf8")).toString("hex"),
};

/** Every way a script would decode an answer: as it is, its percent-escapes, its base64 runs and its hex runs, each byte a character. */
function decodings(text: string): string[] {
  const percent = text.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const base64 = (text.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []).map((run) => Buffer.from(run, "base64").toString("latin1"));
  const hex = (text.replace(/[ :]/g, "").match(/(?:[0-9a-f]{2}){4,}/gi) ?? []).map((run) => Buffer.from(run, "hex").toString("latin1"));
  return [text, percent, ...base64, ...hex];
}

describe.concurrent("a secret header with characters past ASCII, echoed as its bytes", () => {
  it("is masked percent-escaped, in base64 and in hex, as sent and as read as UTF-8; no decoding of the answers holds the canary", async () => {
    // Node reads a header's bytes one character each (latin-1): these are the bytes that came.
    const shapes = Object.keys(SHAPES);
    const { seen, random, root, canary, result } = await echoedNonAsciiSecret(resources, shapes, (shape, value) => SHAPES[shape]!(Buffer.from(value, "latin1")));
    for (const shape of shapes) {
      const got = seen(shape);
      expect(got.status, JSON.stringify(got)).toBe("ok");
      expect(String(got.value), shape).toContain("[redacted]");
      for (const decoded of decodings(String(got.value))) {
        for (let at = 0; at + 8 <= random.length; at++) expect(decoded, `${shape}: a piece of the canary`).not.toContain(random.slice(at, at + 8));
      }
    }
    expectNoLeak(canary, result, root, (file) => file.endsWith(".env"));
  });
});
