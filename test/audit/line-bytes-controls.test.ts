// The writer finds DEL and the C1 controls in a batch's bytes (0x7f; 0xc2 then 0x80..0x9f) and
// escapes the lines that hold them as lineText does, instead of testing every line's text. Each
// character at and around those ranges, alone in a batch and among clean lines, must come out as
// lineText's line: escaped from U+007F to U+009F, left as it is below and above (U+007E, U+00A0,
// U+00B0 and U+00BF are also 0xc2-led, or next to it, and must not be escaped).

import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../runner/audit/digest.js";
import { LineBytes } from "../../runner/audit/line-bytes.js";
import { chainOf, eventHashOfJson, lineText, ZERO_CHAIN } from "../../runner/audit/line.js";

const TIME = "2026-12-06T11:13:11.110Z";
const BOUNDARIES = [0x7e, 0x7f, 0x80, 0x85, 0x9b, 0x9f, 0xa0, 0xb0, 0xbf, 0xc2];

/** Adds each event's line to one batch and returns the batch's text and what lineText makes of the same events. */
function batchOf(texts: string[]): { made: string; expected: string } {
  const lines = new LineBytes();
  let prev = ZERO_CHAIN;
  let expected = "";
  texts.forEach((text, index) => {
    const seq = index + 1;
    const eventJson = canonicalJson({ pattern: `fs.read /w/${text}`, type: "action-requested" });
    const hash = eventHashOfJson(seq, TIME, eventJson);
    const chain = chainOf(prev, hash);
    expect(lines.add(seq, JSON.stringify(TIME), eventJson, prev)).toEqual({ hash, chain });
    expected += `${lineText(seq, TIME, eventJson, prev, hash, chain)}\n`;
    prev = chain;
  });
  return { made: lines.take().toString("utf8"), expected };
}

describe("DEL and the C1 controls in a batch of lines", () => {
  for (const code of BOUNDARIES) {
    const char = String.fromCharCode(code);
    const name = `U+${code.toString(16).padStart(4, "0").toUpperCase()}`;
    it(`${name} alone is as lineText writes it`, () => {
      const { made, expected } = batchOf([`a${char}b`]);
      expect(made).toBe(expected);
      expect(made.includes(char)).toBe(code < 0x7f || code > 0x9f);
    });
    it(`${name} among clean lines: only its own line is escaped`, () => {
      const { made, expected } = batchOf(["clean", "ä°", `x${char}`, "clean again", "😀"]);
      expect(made).toBe(expected);
    });
  }
  it("every control of the range in one line, after a line that ends near 0xc2", () => {
    const all = Array.from({ length: 0x21 }, (_, i) => String.fromCharCode(0x7f + i)).join("");
    const { made, expected } = batchOf(["\u00c2", all, "\u00c2\u0080"]);
    expect(made).toBe(expected);
    expect(made).not.toMatch(/[\u007f-\u009f]/);
  });
});
