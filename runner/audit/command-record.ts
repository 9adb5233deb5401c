// What the audit log records of a command, beside its pattern. A command's pattern
// ("exec rm *", "exec git push *", "exec git *" for any line that starts with an option) is the
// shape approvals are remembered by, and says neither what the command was given nor where it
// ran: a seventh security review's `rm -f prod.conf` in deploy/ was logged as "exec rm *", as
// `rm -f tmp.txt` in scratch/ would be, and `git -C . push --force` as "exec git *". A file
// action's pattern names its path; a command's record names its words, its directory and its
// input, so that the log says what ran.
//
// Its words are text the script gave, never classified plaintext (a Classified value cannot be
// an argument); its input, which may be long, is recorded by its digest, as approvals name it.

import path from "node:path";
import type { Action } from "../../library/protocol.js";
import { resolveRealOrSelf } from "../fs/containment.js";
import { shownWord } from "../shell-word.js";
import { digestOf } from "./digest.js";

/** The longest command line the log holds (as shown); a longer one is cut, its digest still covering every word. */
export const COMMAND_LINE_LIMIT_CHARS = 8192;

/** The fields an Exec action's "action-requested" event carries, keys in sorted order (see audit/digest.ts). */
export interface CommandRecord {
  /** "sha256:…" of the command and its arguments as a JSON array: every word exactly, also when the line is cut. */
  commandDigest: string;
  /** The command and its arguments, each plain or as a JSON string (see shownWord), cut at COMMAND_LINE_LIMIT_CHARS. */
  commandLine: string;
  /** The directory it was asked to run in, made absolute from tacit's and with its links resolved. */
  cwd: string;
  /** "sha256:…" of what it is given on standard input, or null when it is given nothing. */
  input: string | null;
}

/** What the log records of `action`, run from tacit's working directory `workingDirectory`. */
export function commandRecord(action: Extract<Action, { kind: "Exec" }>, workingDirectory: string): CommandRecord {
  const words = [action.command, ...action.args];
  const line = words.map(shownWord).join(" ");
  const cut = line.length - COMMAND_LINE_LIMIT_CHARS;
  return {
    commandDigest: digestOf(words),
    commandLine: cut > 0 ? `${line.slice(0, COMMAND_LINE_LIMIT_CHARS)}… (${cut} characters more)` : line,
    cwd: resolveRealOrSelf(path.resolve(workingDirectory, action.cwd ?? ".")),
    input: action.input === null ? null : digestOf(action.input),
  };
}
