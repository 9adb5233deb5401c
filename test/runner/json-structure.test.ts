// PlaintextBudget.structureOfJson counts the elements and properties a JSON text's value holds
// (the `[`, `{` and `,` outside strings) before the host parses a pure evaluator's reply, so that
// a reply of "[],[],…" is refused unparsed. It skips strings with indexOf rather than a character
// at a time (a 90-million-character string held the host's main thread 0.7 s); the count must be
// the same as a plain walk's for every text, JSON or not (a map function may patch the
// evaluator's JSON, so a reply's text is the script's to choose).

import { describe, expect, it } from "vitest";
import { PlaintextBudget } from "../../runner/classified/budget.js";

const ITEM_BYTES = PlaintextBudget.structureOfJson("[");

/** The plain walk: a backslash inside a string escapes the character after it. */
function walked(text: string): number {
  let items = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const character = text[i];
    if (inString) {
      if (character === "\\") i++;
      else if (character === '"') inString = false;
    } else if (character === '"') inString = true;
    else if (character === "[" || character === "{" || character === ",") items++;
  }
  return items * ITEM_BYTES;
}

/** A deterministic source of texts (xorshift), so that a failure names a text that fails again. */
function texts(count: number, alphabet: string[]): string[] {
  let state = 0x9e3779b9;
  const next = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  return Array.from({ length: count }, () => Array.from({ length: next() % 24 }, () => alphabet[next() % alphabet.length]).join(""));
}

describe("PlaintextBudget.structureOfJson", () => {
  it("counts what a plain walk counts, for texts of quotes, backslashes and structure in any order", () => {
    expect(ITEM_BYTES).toBeGreaterThan(0);
    const differing = texts(50_000, ['"', "\\", "[", "{", ",", "x", "]", "}", ":"]).filter((text) => PlaintextBudget.structureOfJson(text) !== walked(text));
    expect(differing).toEqual([]);
  });

  it("counts JSON as JSON.parse reads it: escaped quotes and backslashes inside strings, an unended string to the end", () => {
    const value = ["a\"b", "\\", "\\\"", "[{,}]", { "k\\": ["\\\\\"", 1, [2, {}]] }, ""];
    const text = JSON.stringify(value);
    expect(PlaintextBudget.structureOfJson(text)).toBe(walked(text));
    // The array's six elements, the object's property, its array's three and the inner array's two.
    expect(PlaintextBudget.structureOfJson(text)).toBe((1 + 5 + 1 + 1 + 2 + 1 + 1 + 1) * ITEM_BYTES);
    expect(PlaintextBudget.structureOfJson('[1,"unended, [ {')).toBe(2 * ITEM_BYTES);
    expect(PlaintextBudget.structureOfJson("[" + "[],".repeat(1000) + "[]]")).toBe(walked("[" + "[],".repeat(1000) + "[]]"));
  });
});
