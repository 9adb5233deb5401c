// Text that came from agent code (paths, arguments, URLs) made safe to show a person on a
// terminal: every character that is invisible or changes how the rest is shown is written as
// a \uXXXX (or \u{XXXXX}) escape — controls (escape sequences, line breaks that could fake a
// line of a question or a log), format characters (zero-width characters, bidi overrides and
// isolates, the soft hyphen, tag characters), line and paragraph separators, spaces other
// than the ordinary one (a no-break space reads as a space but is another name), lone
// surrogates and private-use characters; and every other character Unicode says to draw as
// nothing (Default_Ignorable_Code_Point: the combining grapheme joiner U+034F, variation
// selectors, the Hangul fillers, which are marks and letters, not format characters), and the
// blank braille pattern U+2800, drawn as a space: a script's "a\u034fb.txt" showed in
// `tacit audit show` as "ab.txt", another file it also wrote.
//
// Its pattern is made on first use, not as the module loads: V8 builds the Unicode property
// classes when the RegExp is created, about a millisecond of every `tacit run` on this
// project's machines, and a run that shows no path, error or refusal never needs it.
let hidden: RegExp | undefined;

export function printable(text: string): string {
  hidden ??= /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Default_Ignorable_Code_Point}\u2800]|(?! )\p{Zs}/gu;
  return text.replace(hidden, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** A line another process wrote (unshare's, Deno's panic): at most `maxChars`, then "…", and printable. */
export function printableCut(line: string, maxChars: number): string {
  return printable(line.length > maxChars ? `${line.slice(0, maxChars)}…` : line);
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

/** What jsonOnTerminal escapes beyond terminalSafe: printable()'s set but for the C0 controls (made on first use, as printable's). */
let hiddenInJson: RegExp | undefined;

/**
 * JSON that tacit prints (--json of audit show and verify, approvals list), on its way to a
 * terminal: terminalSafe, and every other character printable() escapes (bidirectional controls,
 * zero-width and other format characters, line and paragraph separators, spaces other than the
 * ordinary one, private-use characters, characters drawn as nothing) as JSON's own \uXXXX escapes,
 * a surrogate pair for one past U+FFFF. JSON.stringify leaves all of them raw, and an audit log's
 * path "report\u202etxt.sh" read "reporths.txt" in `tacit audit show --json` on a terminal that
 * lays out bidirectional text (the text form shows it escaped). Such characters stand only inside
 * JSON strings (the rest of JSON is ASCII), where the escape is the same character to a parser:
 * the document reads as the same value.
 */
export function jsonOnTerminal(json: string): string {
  hiddenInJson ??= /[\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Default_Ignorable_Code_Point}\u2800]|(?! )\p{Zs}/gu;
  return terminalSafe(json).replace(hiddenInJson, (c) => {
    let escaped = "";
    for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return escaped;
  });
}

/**
 * Whether terminalSafe writes the UTF-16 unit `code` as an escape: the same set as TERMINAL_CONTROLS,
 * as comparisons, for code that weighs text a unit at a time (serve's answer size, mcp-server.ts).
 */
export function isTerminalControl(code: number): boolean {
  return code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f) || (code >= 0x7f && code <= 0x9f);
}

/**
 * Every way a line can end for a person or a program reading a log: \r alone moves a terminal
 * back to the start of the line (what follows overwrites what was shown), and \v, \f, NEL and
 * the Unicode line and paragraph separators start a new line in many viewers.
 */
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/;

/** What may stand before "tacit" at the start of a line and not be seen: spaces, controls, format and combining characters (made on first use, as printable's). */
let unseenStart: RegExp | undefined;

/**
 * A line that reads as one of tacit's own: "tacit: …", "tacit repl: …" on its stderr, and the
 * bracketed notes of tacit serve's report and of its output ("[tacit: exit 0, 3 ms]", "[tacit:
 * output cut here: …]", "[tacit] …"), in any case or width. An error class named "[tacit: exit
 * 0, 3 ms]" put that line, as its first, under the real exit line of serve's report.
 */
function readsAsTacits(line: string): boolean {
  // A bidirectional control (U+202E, an isolate…) reorders what follows where the line is shown by a
  // terminal or a CI log page that lays out bidirectional text: an error class named
  // "\u202e:ticat\u202c warning" read there as "tacit: warning: …". What it would show is not
  // worked out here: a first line that holds one is taken for one of tacit's.
  if (/\p{Bidi_Control}/u.test(line)) return true;
  unseenStart ??= /^[\p{Cc}\p{Cf}\p{Z}\p{M}\p{Cs}\p{Co}]*/u;
  const shown = line.normalize("NFKC").replace(unseenStart, "");
  return /^tacit(?: [a-z]+)?:/i.test(shown) || /^\[[\p{Cc}\p{Cf}\p{Z}\p{M}]*tacit\b/iu.test(shown);
}

/**
 * A script's error (text the script chose: its message, a name it gave its error class, a path it
 * had refused) as tacit writes it on its own stderr, where tacit's own lines start with "tacit:".
 * A line break in it could otherwise start a line "tacit: warning: …" that an operator, or an
 * agent reading tacit's output, takes for tacit's. So every line after the first is indented (one
 * that starts with a space or tab already is left so: stack frames; an empty one too: it reads as
 * nothing), whatever broke it, and a first line that reads as tacit's own is shown after
 * "Uncaught ", as a thrown non-Error is. tacit serve's text result shows a script's error this way too.
 */
export function scriptTextOnStderr(text: string): string {
  const [first = "", ...rest] = text.split(LINE_BREAK);
  const head = readsAsTacits(first) ? `Uncaught ${first}` : first;
  return [head, ...rest.map((line) => (line === "" || /^[ \t]/.test(line) ? line : `  ${line}`))].join("\n");
}
