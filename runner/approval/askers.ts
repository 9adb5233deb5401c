// Who answers when an action needs a person: the controlling terminal (`tacit run`), the
// MCP client's user through elicitation (`tacit serve`, in runner/mcp-server.ts), everyone
// at once (`--yes`), or no one — and then the answer is no.

import { randomInt } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import type { Tier } from "../audit/events.js";
import { printable } from "../printable.js";
import { shownPattern } from "./shown-text.js";

export interface ApprovalQuestion {
  /** The canonical pattern, e.g. "exec git push *". */
  pattern: string;
  tier: Exclude<Tier, "allow">;
  /** True when the static allowlists refuse the action and the policy lets a person extend them. */
  beyondAllowlist: boolean;
  /** The action in full, for the person: the exact command line, URL or path (a backslash outside a JSON string doubled, as in the pattern line). */
  detail: string;
}

export interface Answer {
  answer: "yes" | "no";
  /** How it was reached, for the audit log: "terminal", "elicitation", "--yes", "no-one-to-ask". */
  via: string;
  /** For a "no" nobody gave: why no one could be asked. */
  unavailable?: string;
  /** For a "no" because the MCP client's answer was no answer at all: what was wrong with it, in words. */
  malformed?: string;
  /** For a "no" because asking through an MCP client that can ask failed (it answered with an error, or not in time): how, in words. */
  askFailed?: string;
  /** Whether a "yes" came from a person (only those are remembered). */
  fromPerson: boolean;
  /** A yes given earlier and remembered (approve-once), not asked now. */
  remembered?: boolean;
}

export interface Asker {
  /**
   * `signal` is aborted when nothing waits for the answer any more (the evaluation was ended:
   * cancelled, its session deleted): an asker that can withdraw its question does.
   */
  ask(question: ApprovalQuestion, signal?: AbortSignal): Promise<Answer>;
}

/** How long a question waits for a person before the answer is no. */
export const ASK_TIMEOUT_MS = 5 * 60_000;

export function questionText(question: ApprovalQuestion): string {
  const remembered = question.tier === "approve-once";
  const lines = [
    question.beyondAllowlist
      ? `tacit: a script asks for something the allowlists do not permit; the policy lets you allow it ${remembered ? "for this run and later runs here (see below)" : "for this run"}:`
      : `tacit: a script asks to do something the policy says a person must approve (${question.tier}):`,
    `  ${printable(question.detail)}`,
    // As `tacit approvals list` shows it (a backslash as \\), so a person can find there what they were asked.
    `  pattern: ${shownPattern(question.pattern)}`,
  ];
  if (remembered) lines.push(`  ${rememberedNote(question)}`);
  return lines.join("\n");
}

/**
 * What a remembered yes covers, in words. The question shows one action's content, input or
 * arguments; the yes covers its pattern. A security review's person read "let scripts run the
 * command "touch" … for this run" above a note that it was remembered for 30 days, and the
 * pattern "exec rm *", which a shell reads as removing the files here, covers `rm -rf ~` too.
 */
function rememberedNote(question: ApprovalQuestion): string {
  if (question.beyondAllowlist) {
    return "(a yes is remembered for 30 days: later runs in this directory are allowed it too, without asking; see tacit approvals list)";
  }
  // A command's shape (see commandShape): its "*" is the arguments after the command (and subcommand).
  const anyArguments = /^exec [^ ]+(?: [^ *]+)? \*(?: \(|$)/.test(question.pattern) ? ": its * stands for any arguments at all, not only these" : "";
  return `(a yes is remembered for 30 days and covers every later action with this pattern, whatever it writes or sends${anyArguments}; see tacit approvals list)`;
}

export const yesToAll: Asker = {
  ask: async () => ({ answer: "yes", via: "--yes", fromPerson: false }),
};

export function noOneToAsk(reason: string): Asker {
  return { ask: async () => ({ answer: "no", via: "no-one-to-ask", unavailable: reason, fromPerson: false }) };
}

/**
 * Written before each question on a terminal. The script's own output went to the same
 * terminal just before, unfiltered (stdout is data), and a security review ended it with an
 * unterminated OSC string ("\x1b]0;"), which swallows everything after it — the real question
 * and its prompt — while a fake question printed above it was what the person answered. So
 * the terminal is brought back to showing text as text first: CAN and ST end any escape
 * sequence or control string left open; DECSTR (soft reset) restores modes, margins and
 * character sets; SGR 0 and SI plain, visible text in G0; OSC 104/110/111 the palette and
 * default colours (a script can make them all black).
 */
export const TERMINAL_RESET = "\x18\x1b\\\x1b[!p\x1b[0m\x0f\x1b]104\x1b\\\x1b]110\x1b\\\x1b]111\x1b\\";

/**
 * Written after TERMINAL_RESET, before the question's first line break: autowrap on (DECAWM; DEC's
 * soft reset turns it off, and a script piped to the terminal can too, and then a line longer than
 * the terminal overwrote its last column: a security review's `rm -f build/tmp.txt "<200 spaces>"
 * victim.txt` showed as `rm -f build/tmp.txt`, and the code typed to that removed victim.txt), and
 * the cursor to the bottom row, so that every row of the question is one the terminal scrolls in,
 * blank: written where the script had left the cursor, over rows it had painted, the question's
 * lines went on with the script's text (".bak" past `fs.delete …/victim.txt`, in the pattern too).
 */
export const QUESTION_PLACE = "\x1b[?7h\x1b[9999;1H";

/**
 * Asks on the controlling terminal (/dev/tty), not stdin: stdin may carry the script or data.
 * `raw`: the terminal is already in raw mode (the repl's readline) and is left in it.
 */
function terminalAskerFor(raw: boolean): Asker {
  return {
    ask: (question, signal) => askOnTerminal(question, raw, signal),
  };
}

/** For `tacit run`: the terminal is in its usual line mode. */
export const terminalAsker: Asker = terminalAskerFor(false);
/** For the interactive repl, whose readline keeps the terminal in raw mode. */
export const rawTerminalAsker: Asker = terminalAskerFor(true);

/** Shown under a question withdrawn before the person answered it. */
export const WITHDRAWN_ON_TERMINAL = "\n(withdrawn: the script ended before this was answered; nothing was done, and an answer typed now counts for nothing)\n";

/**
 * `signal` ends the wait (readLine); the gate, which checks it before and after asking, answers
 * a withdrawn question for the asker.
 */
async function askOnTerminal(question: ApprovalQuestion, raw: boolean, signal?: AbortSignal): Promise<Answer> {
  let fd: number;
  try {
    fd = openSync("/dev/tty", constants.O_RDWR | constants.O_NOCTTY);
  } catch {
    return { answer: "no", via: "no-one-to-ask", unavailable: "tacit has no terminal to ask on", fromPerson: false };
  }
  discardTypeAhead(raw);
  const size = terminalSize();
  const text = questionText(question)
    .split("\n")
    .flatMap((line) => rowsWithin(line, size.columns))
    .join("\n");
  const piped = outputPiped();
  // Taller than the terminal with the prompt it ends with (a code's digits do not change its length), the
  // question's beginning scrolls out of sight (see rowsOf).
  const rows = rowsOf(`${text}\n${piped ? pipedPrompt("000000") : PLAIN_PROMPT}`, size.columns);
  const tall = rows > size.rows;
  const code = tall || piped ? confirmationCode() : null;
  const shown = tall ? `${tallHeading(code!)}\n${text}\n${tallPrompt(rows, size.rows)}` : `${text}\n${code === null ? PLAIN_PROMPT : pipedPrompt(code)}`;
  try {
    writeSync(fd, `${TERMINAL_RESET}${QUESTION_PLACE}\n${shown}`);
  } catch {
    closeSync(fd);
    return { answer: "no", via: "no-one-to-ask", unavailable: "tacit cannot write to its terminal", fromPerson: false };
  }
  const line = await readLine(fd, ASK_TIMEOUT_MS, signal);
  if (line === null) return { answer: "no", via: "terminal (no answer)", fromPerson: false };
  if (code !== null) {
    const yes = line.trim() === code;
    return { answer: yes ? "yes" : "no", via: yes ? "terminal (with the code it showed)" : "terminal (without the code the question showed)", fromPerson: true };
  }
  return { answer: /^\s*y(es)?\s*$/i.test(line) ? "yes" : "no", via: "terminal", fromPerson: true };
}

/**
 * Whether the script's output goes to a pipe or socket: to another program, which may show it
 * on this terminal later than tacit wrote it (`tacit run s.ts | tee out.log`). A security review
 * printed 4 MB and then, ending its output, a cleared screen with a made-up question about reading
 * notes.txt and "Allow? [y/N]": tee was still showing the 4 MB when tacit asked about deleting
 * important.txt, so the made-up question came after the real one, and the "y" typed to it
 * deleted the file. TERMINAL_RESET cannot help with what arrives after the question.
 */
function outputPiped(): boolean {
  try {
    const stat = fstatSync(1);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/** The prompt of a question the person can see whole, with nothing after it that may not be tacit's. */
const PLAIN_PROMPT = "Allow? [y/N] ";

/**
 * The terminal's size, for rowsOf. One that says none (0×0: a serial console, a pseudo-terminal
 * nobody sized) is taken to be 80×24, the size programs assume then: small, so a question that
 * might not fit is taken not to.
 */
function terminalSize(): { columns: number; rows: number } {
  const fallback = { columns: 80, rows: 24 };
  let fd: number;
  try {
    fd = openSync("/dev/tty", constants.O_RDWR | constants.O_NOCTTY);
  } catch {
    return fallback;
  }
  const { WriteStream } = require("node:tty") as typeof import("node:tty");
  const stream = new WriteStream(fd);
  try {
    const [columns, rows] = stream.getWindowSize();
    return columns > 0 && rows > 0 ? { columns, rows } : fallback;
  } catch {
    return fallback;
  } finally {
    stream.destroy();
  }
}

/**
 * The rows `text` takes on a terminal `columns` wide, each line wrapped at its edge. A character
 * past ASCII counts as two columns (a wide one takes two): counted too tall, a question is only
 * asked with a code. A security review's `rm -f victim.txt "<1,850 spaces>" build/tmp.txt` filled
 * 24 rows of an 80×24 terminal with blanks: the person saw `" build/tmp.txt`, the pattern
 * `exec rm *` and the prompt, and the y typed to that removed victim.txt, named above, out of sight.
 */
function rowsOf(text: string, columns: number): number {
  let rows = 0;
  for (const line of text.split("\n")) rows += Math.max(1, Math.ceil(columnsOf(line) / columns));
  return rows;
}

/** The columns a character takes at most on a screen: one for ASCII, two for the rest (a wide one takes two). */
export function columnsOf(text: string): number {
  let width = 0;
  for (const c of text) width += c.charCodeAt(0) < 0x80 ? 1 : 2;
  return width;
}

/** Starts each row a long line of the question is continued on: a row of the question's own never does (see rowsWithin). */
export const CONTINUED = "\u21aa ";

/**
 * A line of the question as rows of at most `columns` (counted as columnsOf does), each after the
 * first starting with CONTINUED. Every line of the question starts with tacit's own words, so a
 * row that starts with CONTINUED is one of these, whatever the script put where its line is
 * broken. Left to the terminal to wrap, a security review's argument, padded to each row's end,
 * laid out rows that read `Allow? [y/N] y` under `rm -f victim.txt`, then a new question's heading
 * and `run: rm -f build/tmp.txt` above the real pattern `exec rm *`: the y typed to that removed
 * victim.txt.
 */
export function rowsWithin(line: string, columns: number): string[] {
  if (columnsOf(line) <= columns) return [line];
  const rows: string[] = [];
  let row = "";
  let width = 0;
  const limit = () => columns - (rows.length === 0 ? 0 : columnsOf(CONTINUED));
  for (const c of line) {
    const taken = columnsOf(c);
    if (width + taken > limit()) {
      rows.push(rows.length === 0 ? row : CONTINUED + row);
      row = "";
      width = 0;
    }
    row += c;
    width += taken;
  }
  rows.push(rows.length === 0 ? row : CONTINUED + row);
  return rows;
}

/** The first line of a question taller than the terminal: its code, where only a person who scrolled up to its beginning sees it. */
function tallHeading(code: string): string {
  return `tacit: the code of this question is ${code}; it is taller than your terminal, so read it whole, from here:`;
}

/** The prompt of a question taller than the terminal (see rowsOf): a yes is the code on its first line. */
function tallPrompt(rows: number, shown: number): string {
  return (
    `Allow? This question is ${rows} lines long and your terminal shows ${shown}: scroll up to its first line, which holds its code, ` +
    "and read it whole from there (or make the terminal larger). To allow what it asks, type that code; anything else refuses: "
  );
}

/** Six random digits the script cannot know: only a person who read the real question can type them. */
function confirmationCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, "0");
}

/** The prompt when the script's output is piped (see outputPiped): a yes is the question's own code. */
function pipedPrompt(code: string): string {
  return (
    "Allow? The script's output goes through a pipe and may still be arriving on this terminal, below this question, with " +
    `text of its own: a question there is not tacit's. To allow what is asked above, type ${code}; anything else refuses: `
  );
}

/**
 * Throws away what was typed before the question was shown, so only a line typed after it
 * answers it: a security review's script printed a fake "Show the report? [y/N]", kept busy
 * while the person typed "y" and Enter, then asked to delete a file, and that "y", waiting in
 * the terminal's input, answered the real question the moment it was printed. A line still
 * being typed (no Enter yet) is readable only outside line mode, so a terminal in line mode
 * is put in raw mode for the drain and back after it.
 */
function discardTypeAhead(raw: boolean): void {
  let fd: number;
  try {
    fd = openSync("/dev/tty", constants.O_RDONLY | constants.O_NOCTTY | constants.O_NONBLOCK);
  } catch {
    return;
  }
  let modes: import("node:tty").ReadStream | null = null;
  try {
    if (!raw) {
      const { ReadStream } = require("node:tty") as typeof import("node:tty");
      modes = new ReadStream(openSync("/dev/tty", constants.O_RDONLY | constants.O_NOCTTY));
      modes.setRawMode(true);
    }
    const buffer = Buffer.alloc(4096);
    // Bounded: a terminal that never stops sending is not waited for.
    for (let reads = 0; reads < 256; reads++) {
      if (readSync(fd, buffer) === 0) break;
    }
  } catch {
    // EAGAIN: nothing (more) is waiting.
  } finally {
    if (modes !== null) {
      modes.setRawMode(false);
      modes.destroy();
    }
    closeSync(fd);
  }
}

// node:tty costs milliseconds to load; only a run that asks needs it.
const require = createRequire(import.meta.url);

/**
 * One line from a terminal, or null at end of input, after `timeoutMs`, or once `signal` is
 * aborted (the question is then marked withdrawn on the terminal). Closes `fd`.
 */
function readLine(fd: number, timeoutMs: number, signal?: AbortSignal): Promise<string | null> {
  return new Promise((resolve) => {
    const { ReadStream } = require("node:tty") as typeof import("node:tty");
    const stream = new ReadStream(fd);
    let text = "";
    const finish = (line: string | null): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", withdraw);
      stream.removeAllListeners("data");
      stream.destroy();
      resolve(line);
    };
    const withdraw = (): void => {
      try {
        writeSync(fd, WITHDRAWN_ON_TERMINAL);
      } catch {
        // The terminal is gone: nobody reads the note either.
      }
      finish(null);
    };
    const timer = setTimeout(() => finish(null), timeoutMs);
    signal?.addEventListener("abort", withdraw, { once: true });
    if (signal?.aborted) withdraw();
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      text += chunk;
      // A terminal in raw mode (the repl's readline) sends "\r" for Enter.
      const newline = text.search(/[\r\n]/);
      if (newline !== -1) finish(text.slice(0, newline));
    });
    stream.on("end", () => finish(null));
    stream.on("error", () => finish(null));
  });
}
