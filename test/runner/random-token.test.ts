// Unit tests of the token source (runner/random-token.ts): bytes are handed out once, blocks
// are refilled when a request does not fit, and tokens have the promised size and alphabet.

import { describe, expect, it } from "vitest";
import { randomBytes, randomToken, randomUint32 } from "../../runner/random-token.js";

describe("random tokens", () => {
  it("gives base64url tokens of the asked size, never the same twice", () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const token = randomToken(24);
      expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
      tokens.add(token);
    }
    // 5000 tokens of 24 bytes cross several 4 KiB blocks; a reused piece of a block would repeat.
    expect(tokens.size).toBe(5000);
  });

  it("serves a request larger than a block, and one that does not fit the rest of a block", () => {
    randomBytes(4000);
    const straddling = randomBytes(200); // 96 bytes were left: a new block is read
    const large = randomBytes(10_000);
    expect(straddling.length).toBe(200);
    expect(large.length).toBe(10_000);
    // Not zero-filled: a wiped or unread block would show long runs of zeros.
    expect(large.filter((byte) => byte === 0).length).toBeLessThan(200);
    expect(new Set(large).size).toBeGreaterThan(200);
  });

  it("does not share memory between the bytes it hands out", () => {
    const first = randomBytes(16);
    const copy = Buffer.from(first);
    randomBytes(16);
    expect(first.equals(copy)).toBe(true);
  });

  it("gives unsigned 32-bit integers", () => {
    const values = Array.from({ length: 100 }, () => randomUint32());
    for (const value of values) expect(Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff).toBe(true);
    expect(new Set(values).size).toBeGreaterThan(95);
  });
});
