// Where tacit shows a script's output or errors to a person: on a terminal, through
// terminalSafe, so that the agent's text cannot drive the terminal; anywhere else (a pipe, a
// file) byte for byte, as the script wrote it.
//
// JSON that tacit prints (--json of run, check, audit show and verify, approvals list) goes
// through here too: JSON.stringify escapes C0 controls, but leaves DEL and the C1 controls
// (U+0080–U+009F: CSI, OSC, ST…) raw inside strings, and terminals that take C1 in UTF-8 act
// on them. On a terminal they become \u009d-style escapes, which inside a JSON string are the
// same character to a parser, so the JSON still reads as the same value.

import { jsonOnTerminal, scriptTextOnStderr, terminalSafe } from "../runner/printable.js";
import type { Outcome } from "../runner/exit-codes.js";

/** Writes `text` as shown; false when the stream holds it (and more should wait for "drain"), as stream.write. */
export function writeShown(stream: NodeJS.WriteStream, text: string): boolean {
  return stream.write(stream.isTTY ? terminalSafe(text) : text);
}

/**
 * Writes JSON tacit made (its audit log's and approvals' --json) as shown: on a terminal, also with
 * what JSON leaves raw that reorders or hides text there escaped (see jsonOnTerminal); the same value.
 */
export function writeJsonShown(stream: NodeJS.WriteStream, json: string): boolean {
  return stream.write(stream.isTTY ? jsonOnTerminal(json) : json);
}

/** A warning about a script's answers (see OutputBuffer.warn), on stderr, as grep -r says what it could not read. */
export function warnOnStderr(warning: string): void {
  writeShown(process.stderr, `tacit: warning: ${warning}\n`);
}

/**
 * How an evaluation failed, on stderr (run, repl). A rejection lists the checks' errors, each
 * at the start of its line, as tacit wrote them (what they quote of the script is escaped);
 * any other error can hold the script's own text, whose lines must not pass for tacit's (see
 * scriptTextOnStderr).
 */
export function writeErrorOnStderr(outcome: Outcome, error: string): void {
  const shown = outcome === "rejected" ? error : scriptTextOnStderr(error);
  writeShown(process.stderr, shown.endsWith("\n") ? shown : `${shown}\n`);
}
