// A readable rendering of an audit log: one line per event with its seq, time, type and main
// fields; heads as "signed through line N". The caller verifies the log first (verify.ts) and
// gives what that found: a header saying whether it verified, and which lines a valid signed head
// covers. Lines past those are marked, and a line a problem names has it under it: a person
// reading an edited or forged log must not see its lines as if they were true. Text from the log
// is outside data, partly shaped by agent code (paths, command lines), so control characters are
// escaped before they reach a terminal.
//
// --json: one JSON object, the verification's fields first, then `lines`: each line as
// { line, verified, entry } with entry the line as parsed (exactly as in the file), so that jq
// and friends read it as one document.

import { printable } from "../printable.js";
import { type ParsedLine, parseLine } from "./line.js";
import { LOG_LINE_LIMIT_BYTES, logLines, ReadingDigest } from "./log-lines.js";

/** Where `showAuditLogFile` puts what it shows. */
export interface ShowSink {
  /** Takes text to show; a promise to wait for before more (the reader is behind). */
  write(text: string): Promise<void> | null;
  /** A line that could not be parsed (shown in the text form, left out of the JSON form). */
  unreadable(line: number, reason: string): void;
}

/** What verifying the log found, as show marks its lines. */
export interface ShownCoverage {
  /** Lines 1 to this are covered by a valid signed head with no problem before; 0: none. */
  verifiedThrough: number;
  /**
   * Ranges of lines, in line order, that a writer reopening the log found unsigned and signed as it
   * found them (VerifyReport.signedAsFound): not verified wherever they stand. Shown as verified, a
   * line edited while a crashed writer's tail lay unsigned read as tacit's record once the next run signed it.
   */
  signedAsFound: ReadonlyArray<{ from: number; to: number }>;
  /** Lines the check read: those show shows. */
  lines: number;
  /** The problems verify found, by the line they name. */
  problems: ReadonlyMap<number, readonly string[]>;
  /** The last line, which the file ended in the middle of as `writer` (a live tacit) wrote it when the log was checked; null if none. */
  beingWritten: { line: number; writer: number } | null;
}

/** How show's text marks a line not covered by a valid signed head; lines that are, start with as many spaces. */
export const UNVERIFIED_MARK = "UNVERIFIED  ";

/** show's two forms, each with the verification's header: text said before the lines, or the fields of the JSON object. */
export type ShowFormat = { format: "text"; header: string } | { format: "json"; header: Record<string, unknown> };

/** A line as show reads it: parsed, or why not. */
type ShownLine = { line: number; parsed: ParsedLine } | { line: number; reason: string };

/** Each line of the log open at `fd`, a line at a time (see log-lines.ts); the bytes read also go to `digest`. */
function* shownLines(fd: number, digest: ReadingDigest): Generator<ShownLine, void, undefined> {
  for (const { line, bytes } of logLines(fd, digest)) {
    if (bytes === null) {
      yield { line, reason: `longer than ${LOG_LINE_LIMIT_BYTES / (1024 * 1024)} MiB, which tacit never writes` };
      continue;
    }
    const result = parseLine(bytes.toString("utf8"));
    yield result.ok ? { line, parsed: result.line } : { line, reason: result.reason };
  }
}

/** What showing found that checking the log had not: whether its lines changed in between, and lines added since. */
export interface ShowResult {
  /** The log's first bytes, as many as the check read, were the same when shown (else the lines stopped where they differed). */
  unchanged: boolean;
  /** Lines past those checked (a tacit still writing the log): counted, not shown. */
  linesAdded: number;
}

const CHANGED_WHILE_SHOWN =
  "the log changed between checking it and showing it: it reads differently from here on than when it was checked, so no more " +
  "of it is shown (the lines above read as they did). Show it again once nothing writes to it (or show a copy of it)";

/**
 * Shows the lines of the log open at `fd` that the check (`checked`, its reading) read, written to
 * `sink` a line at a time and no faster than they are read: a log of 240,000 lines (100 MB) ended
 * `tacit audit show` with a RangeError when it was read whole. Their seq column is as wide as the
 * check's count of lines (a forged seq wider than that only shifts its own row). The reading is
 * compared with the check's as it goes, and stops where they differ (see ReadingDigest): said after the lines.
 */
export async function showAuditLogFile(fd: number, form: ShowFormat, coverage: ShownCoverage, checked: ReadingDigest, sink: ShowSink): Promise<ShowResult> {
  // Lines are asked about in ascending order: the ranges are passed by once.
  let range = 0;
  const verified = (line: number): boolean => {
    const ranges = coverage.signedAsFound;
    while (range < ranges.length && ranges[range]!.to < line) range++;
    return line <= coverage.verifiedThrough && !(range < ranges.length && ranges[range]!.from <= line);
  };
  const reading = new ReadingDigest(checked);
  let linesAdded = 0;
  /** The lines the check read; those past them are counted. */
  const checkedLines = function* (): Generator<ShownLine, void, undefined> {
    for (const entry of shownLines(fd, reading)) {
      if (entry.line <= coverage.lines) yield entry;
      else linesAdded++;
    }
  };
  const result = (): ShowResult => ({ unchanged: !reading.changed, linesAdded });
  /** The line its live writer was writing when the log was checked, if the file still ends in the middle of it. */
  const unfinished =
    coverage.beingWritten === null
      ? null
      : {
          line: coverage.beingWritten.line,
          reason: `it was still being written by tacit process ${coverage.beingWritten.writer} when the log was checked (the file ended in the middle of it)`,
        };
  if (form.format === "json") {
    // The header's fields, then "lines", then what showing found: the object closed after the last line is written.
    const header = JSON.stringify({ ...form.header, lines: [] }, null, 2);
    await sink.write(header.slice(0, header.lastIndexOf("[]")) + "[");
    let count = 0;
    for (const entry of checkedLines()) {
      if (!("parsed" in entry)) {
        sink.unreadable(entry.line, unfinished !== null && entry.line === unfinished.line ? unfinished.reason : entry.reason);
        continue;
      }
      const element = JSON.stringify({ line: entry.line, verified: verified(entry.line), entry: entry.parsed });
      await sink.write(`${count++ === 0 ? "\n    " : ",\n    "}${element}`);
    }
    const shown = result();
    const after = `  "changedWhileShown": ${!shown.unchanged},\n  "linesAdded": ${shown.linesAdded}\n}\n`;
    await sink.write(`${count === 0 ? "]" : "\n  ]"},\n${after}`);
    return shown;
  }
  await sink.write(form.header);
  const seqWidth = Math.max(3, String(coverage.lines).length);
  // A log that verified whole has no column of marks; one that did not marks every line it does not vouch for.
  const marked = coverage.verifiedThrough < coverage.lines || coverage.signedAsFound.some(({ from }) => from <= coverage.verifiedThrough);
  const mark = (line: number) => (!marked ? "" : verified(line) ? " ".repeat(UNVERIFIED_MARK.length) : UNVERIFIED_MARK);
  const under = " ".repeat((marked ? UNVERIFIED_MARK.length : 0) + seqWidth + 2);
  for (const entry of checkedLines()) {
    if (!("parsed" in entry) && unfinished !== null && entry.line === unfinished.line) {
      // Said as unreadable, a line its writer had not finished read as one edited or corrupted.
      sink.unreadable(entry.line, unfinished.reason);
      await sink.write(`${mark(entry.line)}${".".repeat(seqWidth)}  line ${entry.line} is not shown: ${unfinished.reason}\n`);
    } else if (!("parsed" in entry)) {
      sink.unreadable(entry.line, entry.reason);
      await sink.write(`${mark(entry.line)}${"!".repeat(seqWidth)}  line ${entry.line} is unreadable: ${printable(entry.reason)}\n`);
    } else {
      const { seq, time, event } = entry.parsed;
      await sink.write(`${mark(entry.line)}${String(seq).padStart(seqWidth)}  ${shown(time)}  ${shown(event.type).padEnd(18)}  ${describe(event)}`.trimEnd() + "\n");
    }
    for (const reason of coverage.problems.get(entry.line) ?? []) await sink.write(`${under}^ line ${entry.line}: ${printable(reason)}\n`);
  }
  const found = result();
  if (found.linesAdded > 0) await sink.write(`(${found.linesAdded} more line${found.linesAdded === 1 ? " was" : "s were"} written after the log was checked: not shown; show it again)\n`);
  if (!found.unchanged) await sink.write(`${"!".repeat(seqWidth)}  ${CHANGED_WHILE_SHOWN}\n`);
  return found;
}

type Fields = Record<string, unknown>;

/** The main fields of an event, by its type; unknown types show their fields as JSON. */
function describe(event: Fields): string {
  const f = (key: string) => shown(event[key] === undefined || event[key] === null ? "-" : String(event[key]));
  const digest = (key: string) => shortDigest(f(key));
  switch (event.type) {
    case "evaluation-started":
      // Quoted: the script's file name is anyone's choice, and spaces in it forged the fields after it.
      return `eval ${f("evaluation")}  session ${f("session")}  ${quoted(event.displayName)}  code ${digest("codeDigest")}  policy ${digest("policyDigest")}`;
    case "action-requested":
      return `eval ${f("evaluation")} #${f("action")}  ${f("kind")}  ${quoted(event.pattern)}${typeof event.realPath === "string" ? ` -> ${quoted(event.realPath)}` : ""}  tier ${f("tier")}${recorded(event)}`;
    case "decision": {
      const answer = event.decision === "asked" ? ` → ${f("answer")}` : "";
      const reason = event.reason === null || event.reason === undefined ? "" : `: ${quoted(event.reason)}`;
      return `eval ${f("evaluation")} #${f("action")}  ${f("decision")}${answer}  via ${shownVia(event.via)}${reason}`;
    }
    case "action-result": {
      const hops = Array.isArray(event.redirects) ? `  redirected: ${event.redirects.map(quoted).join(" -> ")}` : "";
      // Absent in logs of an earlier tacit (see RanOutOfTime).
      const timedOut = event.timedOut === undefined ? "" : `  timed out: ${f("timedOut")} of ${f("timeLimitMs")} ms`;
      // Absent in logs of an earlier tacit, and for actions other than commands and HTTP requests (see CommandProgress, RequestProgress).
      const progress =
        (event.commandProgress === undefined ? "" : `  command ${f("commandProgress")}`) + (event.requestProgress === undefined ? "" : `  request ${f("requestProgress")}`);
      return `eval ${f("evaluation")} #${f("action")}  ${event.ok === true ? "ok" : "failed"}${progress}  ${f("size")} B  ${f("durationMs")} ms  ${digest("digest")}${timedOut}${hops}`;
    }
    case "request-redirected":
      return `eval ${f("evaluation")} #${f("action")}  redirected to ${quoted(event.hop)}`;
    case "output":
      return `eval ${f("evaluation")}  printed ${f("prints")}×  ${f("size")} B  ${digest("digest")}`;
    case "evaluation-ended":
      return `eval ${f("evaluation")}  ${f("outcome")}  exit ${f("exitCode")}  ${f("durationMs")} ms`;
    case "session-started":
      return `session ${f("session")}`;
    case "session-ended":
      return `session ${f("session")}  ${quoted(event.reason)}`;
    case "head":
      return `signed through line ${f("signedSeq")} (key ${shown(String(event.publicKey ?? "-")).slice(0, 16)}…)`;
    case "resumed-after-unsigned-tail":
      return `reopened: the lines up to ${f("lastSeq")} were found unsigned`;
    default: {
      const { type: _type, ...rest } = event;
      return shown(JSON.stringify(rest));
    }
  }
}

/** What a request records beside its pattern (action-record.ts): a command's words and directory, a request's URL and what it sent, a write's or chat's content digest. */
function recorded(event: Fields): string {
  const f = (key: string) => shown(String(event[key]));
  if (typeof event.commandLine === "string") {
    const input = typeof event.input === "string" ? `, input ${shortDigest(f("input"))}` : "";
    const whole = Array.isArray(event.commandWords) ? "; every word in --json" : "";
    // Shown as recorded, as the approval question shows it: its words are quoted where they need
    // to be already (action-record.ts), and quoting the line again doubled every escape in it.
    return `  run: ${f("commandLine")} (in ${quoted(event.cwd)}${input}${whole})`;
  }
  if (typeof event.url === "string") {
    const headersDigest = typeof event.headersDigest === "string" ? ` (${shortDigest(f("headersDigest"))})` : "";
    const headers = typeof event.headers === "string" && event.headers !== "" ? `, headers ${f("headers")}${headersDigest}` : "";
    const secret = typeof event.secretHeaders === "string" && event.secretHeaders !== "" ? `, secret headers ${f("secretHeaders")}` : "";
    const body = typeof event.body === "string" ? `, body ${event.body === "classified" ? "classified" : shortDigest(f("body"))}` : "";
    const whole = typeof event.wholeUrl === "string" ? " (cut; the whole URL in --json)" : "";
    return `  url: ${quoted(event.url)}${whole}${headers}${secret}${body}`;
  }
  if (typeof event.content === "string") return `  ${event.append === true ? "appends " : ""}content ${event.content === "classified" ? "classified" : shortDigest(f("content"))}`;
  return "";
}

/** What follows tacit's own words in a decision's `via`: the pattern asked about, or the allowlist extension granted (see the gate's logDecision). */
const VIA_PATTERN = /; (?:asked about|extends the allowlists): /;

/**
 * A decision's `via`: how it was reached, in tacit's words, then the pattern asked about or the extension
 * granted, which holds what a script named (a path, a command's name), quoted as a request's pattern is.
 * Shown as it was, a file named `x: "the person said no" -> nowhere` read, on the line of a yes given
 * through a link, as the reason of a no and a second link.
 */
function shownVia(via: unknown): string {
  if (typeof via !== "string") return shown(via === undefined || via === null ? "-" : String(via));
  const found = VIA_PATTERN.exec(via);
  if (found === null) return shown(via);
  const end = found.index + found[0].length;
  return `${shown(via.slice(0, end))}${quoted(via.slice(end))}`;
}

/** "sha256:0123456789ab…" — enough to compare by eye; --json has the whole digest. */
function shortDigest(digest: string): string {
  return digest.length > 19 ? `${digest.slice(0, 19)}…` : digest;
}

function quoted(value: unknown): string {
  return shown(typeof value === "string" ? JSON.stringify(value) : String(value ?? "-"));
}

/**
 * Text from the log as show writes it: what printable escapes, and every other character past
 * ASCII, as \u201d-style escapes (\u{1f600} past U+FFFF). Quoted values (a path, a URL, a
 * command's words, which a script chooses) are JSON strings, which only an ASCII quote may end;
 * but ” (U+201D), ＂ (U+FF02), ″, ʺ, ״, 〃 and a space under a combining double acute read as that
 * quote, and a file name "a.txt”  tier allow  …" seemed to end its value and forge the fields
 * after it. Escaped, a quoted value is ASCII, and read as the JSON string it is, it is exactly the
 * text logged (--json has it as it is). A name in another script reads as escapes here.
 */
function shown(text: string): string {
  return printable(text).replace(PAST_ASCII, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

const PAST_ASCII = /[^\u0000-\u007e]/gu;
