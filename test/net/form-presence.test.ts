// The search that lets inServerText leave a text holding no form of the host's key as it is,
// without the whole masking (runner/net/form-presence.ts). It must never pass over a text the
// masking would change: that would show the key to a script. Checked two ways: the escapes it
// looks for hold every spelling the masking's decodings read as an ASCII character (each family
// written out, and every short string over escape characters tried), and on thousands of texts
// that hold the key's forms whole, cut, with characters escaped every way, between noise, the
// masking with the search gives exactly what the whole masking gives.

import { describe, expect, it } from "vitest";
import { HostSecrets } from "../../runner/host-secrets.js";
import { escapesFor, FormPresence } from "../../runner/net/form-presence.js";
import { escapesAt, NAMED_REFERENCES, redact, wholeForms } from "../../runner/net/redaction.js";
import { base64Forms, encodedForms, utf16Form } from "../../runner/secret-forms.js";

const hex = (value: number, digits: number): string => value.toString(16).padStart(digits, "0");
const cases = (text: string): string[] => [...new Set([text, text.toLowerCase(), text.toUpperCase(), text.charAt(0).toUpperCase() + text.slice(1).toLowerCase()])];
const JSON_SHORT: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** Every way the masking's decodings write the ASCII character of code `code`, each family of redaction.ts's patterns. */
function spellings(code: number): string[] {
  const char = String.fromCharCode(code);
  const two = hex(code, 2);
  const least = code.toString(16);
  const out: string[] = [];
  for (const h of cases(two)) out.push(`%${h}`, `\\u00${h}`, `\\U00${h}`, `\\x${h}`, `\\X${h}`, `\\u00${h}`);
  for (const h of cases(hex(code, 4))) out.push(`\\u${h}`, `\\U${h}`);
  for (let zeros = 0; zeros <= 3; zeros++) {
    for (const h of cases(least)) out.push(`&#x${"0".repeat(zeros)}${h};`, `&#X${"0".repeat(zeros)}${h};`);
    out.push(`&#${"0".repeat(zeros)}${code};`);
  }
  for (const [name, stands] of Object.entries(NAMED_REFERENCES)) if (stands === char) for (const spelled of cases(name)) out.push(`&${spelled};`);
  if (char === "/") out.push("\\/");
  for (let zeros = 0; zeros + least.length <= 6; zeros++) {
    for (const h of cases(least)) for (const space of ["", " ", "\t", "\n", "\r", "\f", "\r\n"]) out.push(`\\${"0".repeat(zeros)}${h}${space}`);
  }
  for (const [letter, stands] of Object.entries(JSON_SHORT)) if (stands === char) for (const spelled of cases(letter)) out.push(`\\${spelled}`);
  // A backslash before punctuation or a space stands for it (Ruby's "\#", PHP's "\'").
  if (/[\x20-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]/.test(char)) out.push(`\\${char}`);
  return out;
}

/** The spellings of each ASCII character that the decodings do read as it. */
const readSpellings = Array.from({ length: 0x80 }, (_, code) => spellings(code).filter((s) => escapesAt(s, 0).some(({ decoded }) => decoded === String.fromCharCode(code))));

/** The search's escapes for each character code, made into a pattern once (compiling one for each of the ~50,000 texts was most of these tests' time). */
const escapePatterns = new Map<number, RegExp>();

/** Whether the search's escapes for `code` match at the start of `text`. */
function escapeFound(code: number, text: string): boolean {
  let pattern = escapePatterns.get(code);
  if (pattern === undefined) {
    pattern = new RegExp(`(?:${escapesFor([code])})`, "y");
    escapePatterns.set(code, pattern);
  }
  // Sticky: it matches at lastIndex, which a match moves on.
  pattern.lastIndex = 0;
  return pattern.test(text);
}

describe("the escapes the search looks for", () => {
  it("hold every spelling of every ASCII character that the masking's decodings read", () => {
    let checked = 0;
    for (let code = 0; code < 0x80; code++) {
      for (const spelled of spellings(code)) {
        // Each spelling is one the masking reads as the character (else the list above is wrong)...
        if (!escapesAt(spelled, 0).some(({ decoded }) => decoded === String.fromCharCode(code))) continue;
        // ...and the search finds it.
        expect(escapeFound(code, spelled), `${JSON.stringify(spelled)} for ${JSON.stringify(String.fromCharCode(code))}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(128 * 40);
  });

  it("hold every string of up to five escape characters that the masking's decodings read as an ASCII character", () => {
    const alphabet = [..."%&#;\\/xuU07aF3 n'$"];
    let checked = 0;
    const tryAll = (text: string): void => {
      for (const { decoded } of escapesAt(text, 0)) {
        const code = decoded.charCodeAt(0);
        if (decoded.length !== 1 || code >= 0x80) continue;
        expect(escapeFound(code, text), `${JSON.stringify(text)} for ${JSON.stringify(decoded)}`).toBe(true);
        checked++;
      }
      if (text.length < 5) for (const c of alphabet) tryAll(text + c);
    };
    for (const start of ["%", "&", "\\"]) tryAll(start);
    expect(checked).toBeGreaterThan(1000);
  });
});

/** A small deterministic generator (a test that fails names the seed it failed with). */
function generator(seed: number): { below: (n: number) => number; pick: <T>(items: readonly T[]) => T } {
  let state = seed >>> 0 || 1;
  const below = (n: number): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
  return { below, pick: (items) => items[below(items.length)]! };
}

const keys = [
  "sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz12",
  "sk-test/QmFzZTY0LXNoYXBlZA+k==",
  "CORP\\svc-backup \"pass\" <word>&1",
  "pässwörd-12345678-😀-key",
];

describe.each(keys)("masking with the search, for the key %j", (key) => {
  const secrets = new HostSecrets([key]);
  const forms = [...new Set([...(wholeForms([key]) ?? []), key, ...base64Forms(key), ...encodedForms(key), ...[utf16Form(key) ?? []].flat()])];
  /**
   * The whole masking, as inServerText did it on every text before the search. One array of the key
   * for every text, as inServerText's own: the forms' search made for it is kept (redaction.ts).
   */
  const given = [key];
  const wholeMasking = (text: string): string => secrets.scrubText(redact(text, given, [], false));

  it("gives exactly what the whole masking gives, on texts holding its forms whole, cut and escaped", () => {
    const { below, pick } = generator(key.length * 7919);
    const noise = [..."abc sk-KEY %&#;\\/xu0123=+\n\"'<>", "ä", "😀", "&amp;", "%2F", "\\n", "\\u00e9", "&#39;", "\\2F "];
    let masked = 0;
    let unchanged = 0;
    for (let round = 0; round < 1000; round++) {
      const parts: string[] = [];
      for (let piece = below(4); piece >= 0; piece--) {
        const form = pick(forms);
        // Whole, or cut at either end (a near miss), or with one character changed.
        const from = below(3) === 0 ? below(form.length) : 0;
        const to = below(3) === 0 ? from + below(form.length - from + 1) : form.length;
        let chosen = form.slice(from, to);
        if (below(5) === 0 && chosen.length > 0) {
          const at = below(chosen.length);
          chosen = chosen.slice(0, at) + pick(noise) + chosen.slice(at + 1);
        }
        // Some of its characters escaped, each in a spelling the decodings read.
        const rate = pick([0, 0, 1, 3, 10]);
        const escaped = [...chosen]
          .map((c) => {
            const code = c.charCodeAt(0);
            return rate > 0 && code < 0x80 && below(rate) === 0 ? pick(readSpellings[code]!) : c;
          })
          .join("");
        for (let n = below(6); n > 0; n--) parts.push(pick(noise));
        parts.push(escaped);
      }
      const text = parts.join("");
      const expected = wholeMasking(text);
      expect(secrets.inServerText(text), `round ${round}: ${JSON.stringify(text)}`).toBe(expected);
      if (expected === text) unchanged++;
      else masked++;
    }
    // Both kinds were tried, many times each.
    expect(masked).toBeGreaterThan(200);
    expect(unchanged).toBeGreaterThan(100);
  });

  it("masks a form behind a long run of escapes of the characters forms begin with (more than the search walks through)", () => {
    const lead = forms.map((form) => form.charCodeAt(0)).find((code) => code < 0x80)!;
    const text = `%${hex(lead, 2)}`.repeat(20_000) + forms[0]!;
    expect(secrets.inServerText(text)).toBe(wholeMasking(text));
    expect(secrets.inServerText(text)).not.toBe(text);
  });
});

it("finds nothing where there are no forms, and a form at the very start and end of a text", () => {
  const presence = new FormPresence(["sk-abcdefgh"]);
  expect(presence.mayHold("")).toBe(false);
  expect(presence.mayHold("no key here, sk-abc only")).toBe(false);
  expect(presence.mayHold("sk-abcdefgh")).toBe(true);
  expect(presence.mayHold("%73k-abcdefgh")).toBe(true);
  expect(presence.mayHold("x sk-abc&#x64;efgh")).toBe(true);
  expect(new FormPresence([]).mayHold("anything")).toBe(false);
});

describe.each([...keys, "+q7/QmFzZTY0LXNoYXBlZAxk==", "/xy/xQmFzZTY0LXNoYXBlZA"])("a form with one of its first characters escaped, for the key %j", (key) => {
  // Keys whose own forms begin with an escape ("\u002B…", "&#x2B;…", "%2F…" of a key that begins
  // with "+" or "/"): the search once took such a lead where an escape a form begins with stood at
  // the same place, and passed over that form ("+q7&#x2F;…", "+\u0071…").
  it("is masked as the whole masking masks it, each of those characters in each family of spellings the decodings read, after any of a few characters", () => {
    const secrets = new HostSecrets([key]);
    const forms = [...new Set([...(wholeForms([key]) ?? []), key, ...base64Forms(key), ...encodedForms(key), ...[utf16Form(key) ?? []].flat()])];
    const given = [key];
    const wholeMasking = (text: string): string => secrets.scrubText(redact(text, given, [], false));
    let masked = 0;
    // Forms that share their first characters make the same text more than once (a tenth of them): each is checked once.
    const checked = new Set<string>();
    for (const form of forms) {
      for (let at = 0; at < Math.min(form.length, 4); at++) {
        const code = form.charCodeAt(at);
        if (code >= 0x80) continue;
        // Each family's spellings in one case, ended by no white space or by one space: enough to
        // meet every lead, and the whole masking of each text is what this test's time goes to.
        for (const spelled of readSpellings[code]!.filter((s) => !/[\t\n\r\f]$/.test(s) && (s === s.toLowerCase() || s === s.toUpperCase()))) {
          for (const before of ["", "x", "\\"]) {
            const text = before + form.slice(0, at) + spelled + form.slice(at + 1);
            if (checked.has(text)) continue;
            checked.add(text);
            const expected = wholeMasking(text);
            expect(secrets.inServerText(text), JSON.stringify(text)).toBe(expected);
            if (expected !== text) masked++;
          }
        }
      }
    }
    expect(masked).toBeGreaterThan(1000);
  });
});
