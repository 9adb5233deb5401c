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

/**
 * A script's own output on its way to a terminal: text stays text (line breaks, tabs, carriage
 * returns and every printable character of any script), but the controls that make a terminal
 * act rather than show are written as escapes: ESC and the C1 controls start the sequences
 * that set the clipboard (OSC 52), retitle the window and on some terminals type the title
 * back into the shell, hide or redraw what was shown, or turn text into a disguised link;
 * backspace, BEL and the rest of C0 have no business in output either.
 */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

export function terminalSafe(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
