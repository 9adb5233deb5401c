// Text that came from agent code (paths, arguments, URLs) made safe to show a person on a
// terminal: every character that is invisible or changes how the rest is shown is written as
// a \uXXXX (or \u{XXXXX}) escape — controls (escape sequences, line breaks that could fake a
// line of a question or a log), format characters (zero-width characters, bidi overrides and
// isolates, the soft hyphen, tag characters), line and paragraph separators, spaces other
// than the ordinary one (a no-break space reads as a space but is another name), lone
// surrogates and private-use characters.

const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}]|(?! )\p{Zs}/gu;

export function printable(text: string): string {
  return text.replace(HIDDEN, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
