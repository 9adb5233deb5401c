// What the audit log records of an action beside its pattern. A pattern is the shape approvals
// are remembered by, and for commands and requests it hides what the action did: a seventh
// security review's `rm -f prod.conf` in deploy/ was logged as "exec rm *", as `rm -f tmp.txt` in
// scratch/ would be (and `git -C . push --force` as "exec git *"), and its GET of
// /collect?stolen=… as "net GET http://127.0.0.1:PORT". A file action's pattern names its path;
// a command's record names its words, its directory and its input, and a request's its URL,
// its headers and its body, so that the log says what was done. What a write puts in a file and
// what chat asks the model are recorded by their digest ("fs.write /w/a.sh" and "chat" alone said
// nothing of either).
//
// Nothing here is classified plaintext or a secret header's value: a command's words and a
// request's URL, headers and body are text the script gave (a Classified value is a handle, and
// a secret header's value is never in the action). Long texts (standard input, a body) are
// recorded by their digest, as approvals name them; a classified body only as being one.

import path from "node:path";
import type { Action } from "../../library/protocol.js";
import { resolveRealOrSelf } from "../fs/containment.js";
import { EXEC_WORDS_LIMIT_CHARS, HTTP_URL_LIMIT_CHARS, wordsChars } from "../limits.js";
import { shownWord } from "../shell-word.js";
import { digestOf } from "./digest.js";

/** The longest command line or URL the log holds; a longer one is cut (a command's digest still covers every word). */
export const RECORDED_TEXT_LIMIT_CHARS = 8192;

/** The fields an Exec action's "action-requested" event carries. */
export interface CommandRecord {
  /** "sha256:…" of the command and its arguments as a JSON array: every word exactly, also when the line is cut. */
  commandDigest: string;
  /** The command and its arguments, each plain or as a JSON string (see shownWord), cut at RECORDED_TEXT_LIMIT_CHARS. */
  commandLine: string;
  /**
   * Every word, when the line was cut and the command can run at all (EXEC_WORDS_LIMIT_CHARS): a cut
   * line hid what a command did behind padding, as a review's `rm -v -v … -r important` (3,000 "-v")
   * was logged "rm -v -v … (823 characters more)", and its digest confirms a guess but names nothing.
   */
  commandWords?: string[];
  /** The directory it was asked to run in, made absolute from tacit's and with its links resolved. */
  cwd: string;
  /** "sha256:…" of what it is given on standard input, or null when it is given nothing. */
  input: string | null;
}

/** The fields an HTTP request's "action-requested" event carries. */
export interface RequestRecord {
  /** "sha256:…" of the body as sent, "classified" for a classified body (never digested: a secret), or null for none. */
  body: string | null;
  /** The names of its ordinary headers, in the order given, each plain or as a JSON string (see shownWord), joined by spaces. */
  headers: string;
  /**
   * "sha256:…" of its ordinary headers, names and values, as a JSON array of [name, value] pairs in the
   * order given; absent when it has none. Their names alone said nothing of what they carried: a
   * script's `x-data: <the customer list>` and `x-data: 1` were the same record, while a body's
   * digest told two bodies apart. A digest, as for a body: a value may be a token the script read.
   */
  headersDigest?: string;
  /** The names of its secret headers (their values are secrets, never recorded), the same way. */
  secretHeaders: string;
  /** The URL as it is sent (the parser's form), or as given when it is none; cut at RECORDED_TEXT_LIMIT_CHARS. */
  url: string;
  /**
   * The whole URL when `url` was cut and it can be sent at all (HTTP_URL_LIMIT_CHARS): a review's
   * GET of "/c?pad=<9,000 x>&stolen=customer-list" was logged with its query cut before the data it sent.
   */
  wholeUrl?: string;
}

/** The field a file write's or a chat's "action-requested" event carries. */
export interface ContentRecord {
  /**
   * For a write that appends to the file rather than replacing what it held. Without it, `write("x")`
   * and `append("x")` were the same record, and a log could not tell a file emptied and rewritten
   * from one that had a line added (a shell's rc file, a crontab).
   */
  append?: true;
  /** "sha256:…" of what is written (appended) or asked, or "classified" for a classified value (never digested: a secret). */
  content: string;
}

export type ActionRecord = CommandRecord | RequestRecord | ContentRecord;

/** What the log records of `action` beside its pattern (run from tacit's working directory `workingDirectory`), or null. */
export function actionRecord(action: Action, workingDirectory: string): ActionRecord | null {
  switch (action.kind) {
    case "Exec":
      return commandRecord(action, workingDirectory);
    case "HttpRequest":
    case "HttpRequestClassified":
      return requestRecord(action);
    case "FsWrite":
      return action.append ? { append: true, content: digestOf(action.content) } : { content: digestOf(action.content) };
    case "Chat":
      return { content: digestOf(action.message) };
    case "FsWriteClassified":
    case "ChatClassified":
      return { content: "classified" };
    default:
      return null;
  }
}

function commandRecord(action: Extract<Action, { kind: "Exec" }>, workingDirectory: string): CommandRecord {
  const words = [action.command, ...action.args];
  const line = words.map(shownWord).join(" ");
  const cwd = resolveRealOrSelf(path.resolve(workingDirectory, action.cwd ?? "."));
  const input = action.input === null ? null : digestOf(action.input);
  // Keys in sorted order (see the gate): the event's canonical JSON is then made natively.
  if (line.length > RECORDED_TEXT_LIMIT_CHARS && wordsChars(words) <= EXEC_WORDS_LIMIT_CHARS) {
    return { commandDigest: digestOf(words), commandLine: cutRecorded(line), commandWords: words, cwd, input };
  }
  return { commandDigest: digestOf(words), commandLine: cutRecorded(line), cwd, input };
}

function requestRecord(action: Extract<Action, { kind: "HttpRequest" | "HttpRequestClassified" }>): RequestRecord {
  let url: string;
  try {
    url = new URL(action.url).href;
  } catch {
    url = action.url;
  }
  const headers = Object.entries(action.headers);
  const record: RequestRecord = {
    body: action.classifiedBody !== null ? "classified" : action.body === null ? null : digestOf(action.body),
    // Logged before the executor checks them: a name is shown so that it cannot read as several.
    headers: headers.map(([name]) => shownWord(name)).join(" "),
    ...(headers.length === 0 ? {} : { headersDigest: digestOf(headers) }),
    secretHeaders: Object.keys(action.secretHeaders).map(shownWord).join(" "),
    url: cutRecorded(url),
  };
  if (url.length > RECORDED_TEXT_LIMIT_CHARS && action.url.length <= HTTP_URL_LIMIT_CHARS) record.wholeUrl = url;
  return record;
}

/** A command line or URL as the log holds it: cut at RECORDED_TEXT_LIMIT_CHARS, saying how much more there was. */
export function cutRecorded(text: string): string {
  const more = text.length - RECORDED_TEXT_LIMIT_CHARS;
  return more > 0 ? `${text.slice(0, RECORDED_TEXT_LIMIT_CHARS)}… (${more} characters more)` : text;
}
