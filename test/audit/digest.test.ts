// canonicalJson must be one function of a value's content, whatever its key order: the writer
// and the verifier both hash with it, so a mistake would go unseen by the tamper tests. Checked
// against a plain reference (keys sorted recursively, then JSON.stringify).

import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../runner/audit/digest.js";

function reference(value: unknown): string {
  // Written out by hand: an object rebuilt with sorted keys would put integer-like keys first
  // again (JavaScript's property order), which is not the canonical (code-unit) order.
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(write).join(",")}]`;
    if (v !== null && typeof v === "object") {
      const record = v as Record<string, unknown>;
      return `{${Object.keys(record).sort().map((k) => `${JSON.stringify(k)}:${write(record[k])}`).join(",")}}`;
    }
    return JSON.stringify(v);
  };
  return write(JSON.parse(JSON.stringify(value) ?? "null"));
}

const cases: Record<string, unknown> = {
  "sorted flat": { action: 1, evaluation: "e", kind: "FsRead", pattern: "fs.read /a", tier: "allow", type: "action-requested" },
  "unsorted flat": { type: "decision", action: 2, answer: null, via: "policy" },
  "numeric-looking keys": { b: 1, "10": 2, "2": 3, a: 4 },
  "only numeric keys in order": { "1": "x", "2": "y" },
  "undefined and NaN": { a: undefined, b: Number.NaN, c: Number.POSITIVE_INFINITY, d: "x" },
  nested: { z: { b: [3, { y: 1, x: 2 }], a: null }, a: true },
  "unicode keys": { é: 1, e: 2, "\u{1F600}": 3, E: 4 },
  "lone surrogate": { a: "\ud800", b: "ok" },
  "a toJSON": { when: new Date(0), a: 1 },
  empty: {},
};

describe("canonicalJson", () => {
  for (const [name, value] of Object.entries(cases)) {
    it(`matches the reference: ${name}`, () => {
      expect(canonicalJson(value)).toBe(reference(value));
      // Read back from its own output, it is the same text (what the verifier relies on).
      expect(canonicalJson(JSON.parse(canonicalJson(value)))).toBe(canonicalJson(value));
    });
  }

  it("does not depend on key order", () => {
    expect(canonicalJson({ b: 1, a: { d: 1, c: 2 } })).toBe(canonicalJson({ a: { c: 2, d: 1 }, b: 1 }));
  });
});
