// The automaton that finds a secret's forms in an answer (runner/net/redaction.ts FormMatcher),
// against the plainest reading of what it must find: every occurrence of every whole form
// (overlapping and touching ones merged), and the longest end of the text that begins a form.
// Random forms and texts over small alphabets, so that overlaps, nesting and fail links abound,
// with forms in the automaton and searched for on their own (the long ones); periodic forms and
// texts; and a long body's forms, as a classified body gives them.

import { domainToASCII } from "node:url";
import { describe, expect, it } from "vitest";
import { CUT_END_CHARS, FormMatcher, formRanges, formRangesOwnRoom, laterWordsIn, MIN_REDACTED_LENGTH, redact } from "../../runner/net/redaction.js";

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

  it("finds what the plain search finds with many long forms in a long text (their own automaton, not a pass for each)", () => {
    const next = random(20261207);
    const word = (alphabet: string, min: number, max: number): string => {
      const length = min + Math.floor(next() * (max - min + 1));
      let out = "";
      for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)];
      return out;
    };
    for (let round = 0; round < 300; round++) {
      const alphabet = ["ab", "abc", "ab\ud83d\ude00", "aé\u0000"][round % 4]!;
      const forms: Form[] = [];
      const count = 4 + Math.floor(next() * 8);
      for (let i = 0; i < count; i++) forms.push({ form: word(alphabet, 4, 12), whole: next() < 0.8 });
      // Long enough that passes for each long form would cost more than their automaton (see FormMatcher.longFinds).
      let text = "";
      while (text.length < 3000) text += next() < 0.5 ? forms[Math.floor(next() * forms.length)]!.form.slice(Math.floor(next() * 3)) : word(alphabet, 0, 6);
      for (const ending of ["", forms[0]!.form.slice(0, -1)]) {
        const whole = text + ending;
        expect(matcherOf(forms, 3).ranges(whole), JSON.stringify({ forms, round })).toEqual(expectedRanges(forms, whole));
      }
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

describe("laterWordsIn (a classified body's words past its first 64 KiB)", () => {
  /** What laterWordsIn must find, the plainest way: each long piece of the secret past `from` that the text holds anywhere, case aside. */
  function plainLaterPieces(secret: string, from: number, text: string): string[] {
    const lower = text.toLowerCase();
    const pieces = secret.slice(from).match(/[^\s=;,:"'/.?#&@%+\\<>()[\]{}|]{8,}/g) ?? [];
    return [...new Set(pieces.filter((piece) => piece.length <= text.length && lower.includes(piece.toLowerCase())))];
  }

  it("finds a piece of the secret glued inside a longer word of the text, as the plain search does", () => {
    const next = random(20261205);
    for (let round = 0; round < 400; round++) {
      const alphabet = ["ab", "abc", "aB-", "ab\u00e9"][round % 4]!;
      const word = (length: number): string => Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
      // A secret whose scanned start is skipped (from), then words of 6 to 14 characters.
      const from = 5;
      let secret = "xxxxx";
      for (let i = 0; i < 12; i++) secret += `${word(6 + Math.floor(next() * 9))}${next() < 0.5 ? " " : "="}`;
      // A text of the secret's words glued to others, and of random words.
      let text = "";
      for (let i = 0; i < 6; i++) {
        const words = secret.slice(from).split(/[ =]/).filter((w) => w !== "");
        text += next() < 0.5 ? `${word(2)}${words[Math.floor(next() * words.length)]!.toUpperCase()}${word(2)}/` : `${word(10)} `;
      }
      const found = laterWordsIn(secret, from, text);
      expect(found, JSON.stringify({ secret, text })).not.toBeNull();
      // Every piece the plain search finds is found (with, maybe, the word around it).
      for (const piece of plainLaterPieces(secret, from, text)) expect(found, JSON.stringify({ secret, text, piece })).toContain(piece);
    }
  });

  it("masks such a piece in a message, and stays linear in the body and the text however periodic both are (steps counted)", () => {
    const key = "canary-5f0e2a9c-1b7d-4c3e-9a8f-0d6b2e4c7a10";
    const body = `${"SETTING=value\n".repeat(6000)}API_KEY=${key}\n`;
    expect(redact(`(xx${key}yy) and (gzip${key.toUpperCase()}0)`, [body])).toBe("(xx[redacted]yy) and (gzip[redacted]0)");
    // Periodic: every piece of the body is a substring of the text, or all but its last character is.
    const text = "ab".repeat(60_000);
    for (const piece of ["ab".repeat(2_500), `${"ab".repeat(2_500)}b`]) {
      const secret = `${"x".repeat(70_000)} ${`${piece} `.repeat(800)}`;
      const counted = { steps: 0 };
      const found = laterWordsIn(secret, 64 * 1024, text, counted);
      expect(found).toEqual(piece.endsWith("bb") ? [] : [piece]);
      // The index is built once over the text, and each character of the body is read a bounded number of times.
      expect(counted.steps).toBeLessThan(8 * (secret.length + text.length));
    }
  });

  it("gives up on a text too long to index, or one whose many different pieces the body holds, and redact then masks the text whole", () => {
    const text = `server said ${"q".repeat(300_000)}`;
    const secret = `${"x".repeat(70_000)} ${"q".repeat(20)}`;
    expect(laterWordsIn(secret, 64 * 1024, text)).toBeNull();
    expect(redact(text, [secret])).toBe("[redacted: a text tacit could not search for the words of a classified value the request carried]");
    // A body made of many different pieces of what the server chose: as forms, far longer than the text.
    const chosen = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join("");
    const many = `${"x".repeat(70_000)} ${Array.from({ length: 1000 }, (_, i) => chosen.slice(i, i + 1500)).join(" ")}`;
    expect(laterWordsIn(many, 64 * 1024, `coding (${chosen})`)).toBeNull();
  });
});

describe("a secret escaped twice over", () => {
  it("is masked however its escapes were escaped again, up to three times", () => {
    const secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzq81Lw";
    const attr = secret.replace(/[/+]/g, (c) => `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`);
    for (const text of [attr.replace(/&/g, "&amp;"), attr.replace(/&/g, "&amp;amp;"), attr.replace(/&/g, "\\u0026"), encodeURIComponent(attr), encodeURIComponent(encodeURIComponent(attr))]) {
      expect(redact(`<p>${text}</p>`, [secret], [], false), text).toBe("<p>[redacted]</p>");
    }
  });
});

describe("a cut text's end", () => {
  const pad = "_".repeat(200);
  const secret = "abcdefgh/ijklmnop";

  it("a partial secret before an escape the cut went through is masked to the end, in each escape syntax", () => {
    const twice = ["&amp;", "&amp;#x2", "&amp;#x2F", "&amp;amp;#x", "%26%23x2", "%26%23x2F%3", "\\u0026#x2", "%25", "%252"];
    for (const begun of ["%", "%2", "&", "&#", "&#x", "&#x2", "&#x2F", "&#47", "&sol", "\\", "\\x2", "\\u00", "\\2", ...twice]) {
      expect(redact(`${pad}abcdefgh${begun}`, [secret], [], true), begun).toBe(`${pad}[redacted]`);
      // Uncut, the text ends where its server ended it: nothing of it begins a secret for sure.
      expect(redact(`${pad}abcdefgh${begun}`, [secret], [], false), begun).toBe(`${pad}abcdefgh${begun}`);
    }
  });

  it("with leaveOutEnd, an end no mask reaches loses its last CUT_END_CHARS characters, whatever they are", () => {
    for (const end of ["a", "ab", "abc", "xyz", "&#x61;&#x62;&#x63;&#x6"]) {
      const text = `${pad}${end}`;
      expect(redact(text, [secret], [], true, [], true), end).toBe(text.slice(0, text.length - CUT_END_CHARS));
      // Without it (an audit log's hop, a message), the text is as redact leaves it.
      expect(redact(text, [secret], [], true), end).toBe(text);
    }
    // A mask that ends the text is kept whole; one before the left-out characters ends the text.
    expect(redact(`${pad}abcdefgh`, [secret], [], true, [], true)).toBe(`${pad}[redacted]`);
    expect(redact(`${pad}${secret}__`, [secret], [], true, [], true)).toBe(`${pad}[redacted]`);
    // Not cut, or no secret sent: nothing is left out.
    expect(redact(`${pad}abc`, [secret], [], false, [], true)).toBe(`${pad}abc`);
    expect(redact(`${pad}abc`, [""], [], true, [], true)).toBe(`${pad}abc`);
  });
});

describe("the forms' search kept for an array of secrets", () => {
  // formRanges keeps the search it makes for an array of secrets, by the room a text gives the
  // forms (its length, up to where every form is whole), while the array lives; a fresh array of
  // the same secrets gets a search made for it. Both must find the same, at every length, cut or
  // not: a kept search made for another length would miss or cut a form.
  it("finds what a search made for the text finds, at every length, cut or not, and sees an array changed since", () => {
    const next = random(51);
    const secrets = ["sk-test-AbC/de+F9==", "pässwörd-canary-XYZ 42", 'tok en;with"quotes"/and/slashes'];
    const pieces = secrets.flatMap((secret) => [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), secret.replaceAll("/", "&#x2F;"), secret.toLowerCase(), secret.slice(0, 9)]);
    const filler = ["x", " ", "&", "%2", "\\u00", "\n", "é", "sk-", "p"];
    const texts: string[] = [];
    for (let i = 0; i < 300; i++) {
      let text = "";
      const length = Math.floor(next() * (i < 150 ? 60 : 400));
      while (text.length < length) text += next() < 0.3 ? pieces[Math.floor(next() * pieces.length)]! : filler[Math.floor(next() * filler.length)]!;
      texts.push(next() < 0.5 ? text.slice(0, length) : text);
    }
    let found = 0;
    for (const cut of [false, true]) {
      for (const text of texts) {
        const kept = formRanges(text, secrets, cut);
        expect(kept, JSON.stringify(text)).toEqual(formRanges(text, [...secrets], cut));
        found += kept?.length ?? 0;
      }
    }
    // The texts hold forms: the comparison is not of nothing with nothing.
    expect(found).toBeGreaterThan(150);
    // The same array given another secret since: its forms are found too.
    const changing = [...secrets];
    const text = `a ${encodeURIComponent("added-secret-777/x")} b`;
    expect(formRanges(text, changing, false)).toEqual([]);
    changing.push("added-secret-777/x");
    expect(formRanges(text, changing, false)).toEqual([[2, 2 + encodeURIComponent("added-secret-777/x").length]]);
  });
});

describe("one search for every text as long as each value, the search for the text's own length for a shorter one", () => {
  // formRanges makes one search for an array of secrets for every text at least as long as its
  // longest value (the forms longer than such a text are all that a search for its own length
  // marks otherwise, and it cannot hold them whole): it must find what a search made for the
  // text's own length finds, whole forms and a cut end partway into one, at each length around
  // the values' and the forms' (hex with colons is three times a value), escaped or not.
  it("finds what a search made for the text's length finds, cut or not, at every length", () => {
    const next = random(77);
    const secrets = ["sk-live-Zq/+=Wx 9a", "pässwörd-canary-ÄÖ/x", "Bearer tok.en;a=b\\c", "ab\u00e9cdef-long-word-here-777", "短いパスワードcanary-1"];
    const pieces = secrets.flatMap((secret) => {
      const bytes = Buffer.from(secret, "utf8");
      return [
        secret,
        secret.toLowerCase(),
        encodeURIComponent(secret),
        JSON.stringify(secret).slice(1, -1),
        bytes.toString("base64"),
        bytes.toString("hex"),
        [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join(":"),
        Buffer.from(secret, "latin1").toString("utf8"),
        secret.replaceAll("/", "&#x2F;"),
        secret.slice(0, 5),
        secret.slice(3),
      ];
    });
    const filler = ["x", " ", "&", "%2", "\\u00", "\n", "é", "sk-", "p", "=", "0a:"];
    const longestValue = Math.max(...secrets.map((secret) => secret.length));
    let found = 0;
    let compared = 0;
    for (let i = 0; i < 400; i++) {
      // Lengths from a few characters to past the longest form, most of them around the longest value.
      const length = i % 4 === 0 ? Math.floor(next() * 200) : longestValue - 6 + Math.floor(next() * 14);
      let text = "";
      while (text.length < length + 40) text += next() < 0.35 ? pieces[Math.floor(next() * pieces.length)]! : filler[Math.floor(next() * filler.length)]!;
      // Cut anywhere: partway into a form, or into an escape, at the end.
      text = text.slice(Math.floor(next() * 20), Math.floor(next() * 20) + length);
      for (const cut of [false, true]) {
        const kept = formRanges(text, secrets, cut);
        expect(kept, `${JSON.stringify(text)} cut=${cut}`).toEqual(formRangesOwnRoom(text, secrets, cut));
        found += kept?.length ?? 0;
        compared++;
      }
    }
    expect(compared).toBe(800);
    // The texts hold forms: the comparison is not of nothing with nothing.
    expect(found).toBeGreaterThan(300);
  });

  it("finds what a search made for the text's length finds in texts that are a form, or its start, of a value longer than them", () => {
    // Forms that are not the start of a longer value's form (base64 and the host's ASCII form of a
    // value cut short end otherwise) and forms shorter than their value (its ASCII letters, its
    // latin-1 bytes read as UTF-8): where a search for every length and one for the text's differ.
    const secrets = ["pässwörd-canary-ÄÖ/x", "sk-live-Zq/+=Wx 9a-more", "Ã¤Ã¶-latin1-as-utf8-x", "短いパスワードcanary-1"];
    const pieces = secrets.flatMap((secret) => [
      secret,
      Buffer.from(secret, "utf8").toString("base64"),
      domainToASCII(secret),
      secret.toLowerCase().replace(/[^\x00-\x7f]/g, ""),
      Buffer.from(secret, "latin1").toString("utf8"),
      encodeURIComponent(secret),
      ...[8, 12, 15].map((length) => Buffer.from(secret.slice(0, length), "utf8").toString("base64")),
      ...[8, 12, 15].map((length) => domainToASCII(secret.slice(0, length))),
    ]);
    let found = 0;
    for (const piece of new Set(pieces)) {
      for (let length = MIN_REDACTED_LENGTH; length <= piece.length; length++) {
        for (const text of [piece.slice(0, length), `ab ${piece.slice(0, length)}`]) {
          for (const cut of [false, true]) {
            const kept = formRanges(text, secrets, cut);
            expect(kept, `${JSON.stringify(text)} cut=${cut}`).toEqual(formRangesOwnRoom(text, secrets, cut));
            found += kept?.length ?? 0;
          }
        }
      }
    }
    expect(found).toBeGreaterThan(300);
  });

  it("the same with a value whose forms are long (each searched for on its own), in texts shorter and longer than them", () => {
    const next = random(78);
    const long = "Lk/+=9".repeat(45); // 270 characters: forms past 256, found by passes of their own.
    const secrets = [long, "short-secret-77/x"];
    const pieces = [long, encodeURIComponent(long), Buffer.from(long).toString("base64"), Buffer.from(long).toString("hex"), long.slice(0, 100), "short-secret-77/x"];
    const filler = ["x", " ", "%2", "Lk/", "=9"];
    let found = 0;
    for (let i = 0; i < 60; i++) {
      const length = 200 + Math.floor(next() * 900);
      let text = "";
      while (text.length < length + 40) text += next() < 0.3 ? pieces[Math.floor(next() * pieces.length)]! : filler[Math.floor(next() * filler.length)]!;
      text = text.slice(Math.floor(next() * 20), Math.floor(next() * 20) + length);
      for (const cut of [false, true]) {
        const kept = formRanges(text, secrets, cut);
        expect(kept, `${JSON.stringify(text)} cut=${cut}`).toEqual(formRangesOwnRoom(text, secrets, cut));
        found += kept?.length ?? 0;
      }
    }
    expect(found).toBeGreaterThan(40);
  });
});

