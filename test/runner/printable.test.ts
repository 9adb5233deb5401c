import { describe, expect, it } from "vitest";
import { isTerminalControl, printable, terminalSafe } from "../../runner/printable.js";

describe("printable: what a person is shown of agent-chosen text", () => {
  it("keeps ordinary text, spaces and non-Latin letters as they are", () => {
    expect(printable("rm -rf /tmp/a b/é/日本/👍")).toBe("rm -rf /tmp/a b/é/日本/👍");
  });

  it("escapes controls, line breaks and escape sequences", () => {
    expect(printable("a\nb\r\u001b[2Jc\u007f\u0085")).toBe("a\\u000ab\\u000d\\u001b[2Jc\\u007f\\u0085");
  });

  it("escapes every invisible or reordering character, not only a list of known ones", () => {
    const hidden = [
      "\u00ad", // soft hyphen
      "\u061c", // Arabic letter mark
      "\u180e", // Mongolian vowel separator
      "\u200b", "\u200d", "\u200e", // zero-width space and joiner, left-to-right mark
      "\u2028", "\u2029", // line and paragraph separators
      "\u202e", "\u2066", "\u2069", // bidi override, isolate, pop
      "\u2060", "\u2064", // word joiner, invisible plus
      "\ufeff", // zero-width no-break space
      "\ufff9", // interlinear annotation anchor
      "\u{e0041}", // tag character
      "\u034f", // combining grapheme joiner (a mark, drawn as nothing)
      "\ufe0f", "\u{e0100}", // variation selectors
      "\u115f", "\u3164", "\uffa0", // Hangul fillers (letters, drawn as nothing or a blank)
      "\u2800", // blank braille pattern (a symbol drawn as a space)
    ];
    for (const c of hidden) expect(printable(`x${c}y`), `U+${c.codePointAt(0)!.toString(16)}`).not.toContain(c);
    expect(printable("x\u{e0041}y")).toBe("x\\u{e0041}y");
  });

  it("escapes spaces that look like the ordinary one but are other characters", () => {
    expect(printable("a\u00a0b\u2003c\u3000d")).toBe("a\\u00a0b\\u2003c\\u3000d");
  });

  it("escapes lone surrogates and private-use characters", () => {
    expect(printable("a\ud800b\ue000c")).toBe("a\\ud800b\\ue000c");
  });
});

describe("isTerminalControl", () => {
  it("holds for exactly the units terminalSafe writes as escapes (serve weighs its answers by it)", () => {
    for (let code = 0; code <= 0xffff; code++) {
      const unit = String.fromCharCode(code);
      expect(isTerminalControl(code), `U+${code.toString(16)}`).toBe(terminalSafe(unit) !== unit);
    }
  });
});
