// The log hashes its lines with sha256HexFunction (node:crypto called directly, for speed) and
// names code, policies and results with digestOf, while verify recomputes hashes with sha256Hex.
// All must be SHA-256 of the text's UTF-8 (a lone surrogate as U+FFFD, as a file holds it):
// checked here against an independent implementation (@noble/hashes), not against each other,
// which would pass if both were wrong alike.

import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { describe, expect, it } from "vitest";
import { digestOf, sha256Hex, sha256HexFunction } from "../../runner/audit/digest.js";

const reference = (text: string): string => bytesToHex(sha256(new Uint8Array(Buffer.from(text, "utf8"))));

const texts: Record<string, string> = {
  empty: "",
  ascii: '{"event":{"action":1,"type":"decision"},"seq":1,"time":"2026-12-06T11:13:11.110Z"}',
  chain: `${"0".repeat(64)}${"a".repeat(64)}`,
  "non-ASCII": "fs.write /tmp/ä/ü/😀",
  "C1 controls and DEL": "x\u009d52;c;aGk=\u009c\u007f\u001b[1A",
  "lone surrogate": "fs.read /a\ud800b\udfff",
  "several blocks": "abcdefghij".repeat(1000),
};

describe("the log's SHA-256", () => {
  const hex = sha256HexFunction();
  for (const [name, text] of Object.entries(texts)) {
    it(`is SHA-256 of the UTF-8: ${name}`, () => {
      const expected = reference(text);
      expect(hex(text)).toBe(expected);
      expect(sha256Hex(text)).toBe(expected);
      expect(digestOf(text)).toBe(`sha256:${expected}`);
    });
  }
  it("is one function for the process (loaded once)", () => {
    expect(sha256HexFunction()).toBe(hex);
  });
});
