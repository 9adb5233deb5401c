// The automaton that finds a secret's forms in an answer (runner/net/redaction.ts FormMatcher),
// against the plainest reading of what it must find: every occurrence of every whole form
// (overlapping and touching ones merged), and the longest end of the text that begins a form.
// Random forms and texts over small alphabets, so that overlaps, nesting and fail links abound,
// with forms in the automaton and searched for on their own (the long ones); periodic forms and
// texts; and a long body's forms, as a classified body gives them.

import { describe, expect, it } from "vitest";
import { FormMatcher, MIN_REDACTED_LENGTH } from "../../runner/net/redaction.js";

type Form = { form: string; whole: boolean };

function expectedRanges(forms: readonly Form[], text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const { form, whole } of forms) {
    if (!whole || form.length < MIN_REDACTED_LENGTH) continue;
    for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1)) found.push([at, at + form.length]);
  }
  // The text's end, partway into a form (as an answer cut at its size limit is).
  let partial = 0;
  for (const { form } of forms) {
    for (let length = Math.min(form.length, text.length); length > partial; length--) {
      if (text.endsWith(form.slice(0, length))) {
        partial = length;
        break;
      }
    }
  }
  if (partial >= MIN_REDACTED_LENGTH) found.push([text.length - partial, text.length]);
  found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: Array<[number, number]> = [];
  for (const [start, end] of found) {
    const last = merged[merged.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  return merged;
}

function matcherOf(forms: readonly Form[], longFrom?: number): FormMatcher {
  const matcher = new FormMatcher(longFrom);
  for (const { form, whole } of forms) if (form.length >= MIN_REDACTED_LENGTH) matcher.add(form, whole);
  matcher.build();
  return matcher;
}

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("FormMatcher", () => {
  it("finds what the plain search finds, on random forms and texts", () => {
    const next = random(20261204);
    const word = (alphabet: string, min: number, max: number): string => {
      const length = min + Math.floor(next() * (max - min + 1));
      let out = "";
      for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)];
      return out;
    };
    for (let round = 0; round < 3000; round++) {
      const alphabet = ["ab", "abc", "ab\ud83d\ude00", "aé\u0000"][round % 4]!;
      const forms: Form[] = [];
      const count = 1 + Math.floor(next() * 6);
      for (let i = 0; i < count; i++) forms.push({ form: word(alphabet, 1, 9), whole: next() < 0.8 });
      // Texts made of the forms' pieces as well as at random.
      let text = word(alphabet, 0, 12);
      for (let i = 0; i < 3; i++) text += forms[Math.floor(next() * forms.length)]!.form.slice(Math.floor(next() * 3)) + word(alphabet, 0, 3);
      const expected = expectedRanges(forms, text);
      expect(matcherOf(forms).ranges(text), JSON.stringify({ forms, text })).toEqual(expected);
      // The same with the longer forms searched for on their own (LongForm) instead of in the automaton.
      const longFrom = 3 + (round % 5);
      expect(matcherOf(forms, longFrom).ranges(text), JSON.stringify({ forms, text, longFrom })).toEqual(expected);
    }
  });

  it("finds long forms in periodic texts, and the text's end partway into one", () => {
    const forms: Form[] = [
      { form: "ab".repeat(300), whole: true },
      { form: "aab".repeat(200), whole: true },
      { form: `${"a".repeat(400)}b`, whole: false },
    ];
    for (const text of ["ab".repeat(5000), `x${"aab".repeat(1000)}aa`, "a".repeat(3000), `${"ab".repeat(299)}a`, "b".repeat(10)]) {
      expect(matcherOf(forms).ranges(text), text.slice(0, 40)).toEqual(expectedRanges(forms, text));
    }
  });

  it("stays exact on a long body's forms (long forms on their own, its words in the automaton)", () => {
    const next = random(7);
    let body = "";
    while (body.length < 60_000) body += `${Math.floor(next() * 1e9).toString(36)} `;
    const forms: Form[] = [body, body.toUpperCase(), Buffer.from(body).toString("base64")].map((form) => ({ form, whole: true }));
    // Words of it, as the redaction looks for a long body's words on their own too.
    for (const piece of body.split(" ").filter((w) => w.length >= 6).slice(0, 500)) forms.push({ form: piece, whole: true });
    const text = `a ${body.slice(1000, 1400)} b ${forms[2]!.form.slice(0, 80)} c ${body.slice(0, 50_000)} d ${body.toUpperCase().slice(0, 30)}`;
    expect(matcherOf(forms).ranges(text)).toEqual(expectedRanges(forms, text));
  });
});
