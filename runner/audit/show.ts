// A readable rendering of an audit log: one line per event with its seq, time, type and main
// fields; heads as "signed through line N". It shows, it does not verify (that is
// verify.ts). Text from the log is outside data, partly shaped by agent code (paths, command
// lines), so control characters are escaped before they reach a terminal.
//
// --json: a JSON array of the lines as parsed (objects exactly as in the file), one element
// per line of output, so that jq and friends read it as one document.

import { printable } from "../printable.js";
import { type ParsedLine, parseLine } from "./line.js";

export interface ShowResult {
  output: string;
  /** Lines that could not be parsed (shown in the text form, left out of the JSON form). */
  unreadable: { line: number; reason: string }[];
}

export function showAuditLog(text: string, format: "text" | "json"): ShowResult {
  const unreadable: ShowResult["unreadable"] = [];
  const parsed: { line: number; entry: ParsedLine }[] = [];
  const segments = text.split("\n");
  if (segments.at(-1) === "") segments.pop();
  segments.forEach((segment, index) => {
    const result = parseLine(segment);
    if (result.ok) parsed.push({ line: index + 1, entry: result.line });
    else unreadable.push({ line: index + 1, reason: result.reason });
  });

  if (format === "json") {
    const body = parsed.map(({ entry }) => JSON.stringify(entry)).join(",\n");
    return { output: parsed.length === 0 ? "[]\n" : `[\n${body}\n]\n`, unreadable };
  }
  const seqWidth = Math.max(3, ...parsed.map(({ entry }) => String(entry.seq).length));
  const rows: { line: number; text: string }[] = [
    ...parsed.map(({ line, entry }) => ({
      line,
      text: `${String(entry.seq).padStart(seqWidth)}  ${printable(entry.time)}  ${printable(entry.event.type).padEnd(18)}  ${describe(entry.event)}`.trimEnd(),
    })),
    ...unreadable.map(({ line, reason }) => ({ line, text: `${"!".repeat(seqWidth)}  line ${line} is unreadable: ${printable(reason)}` })),
  ];
  rows.sort((a, b) => a.line - b.line);
  return { output: rows.map((row) => row.text + "\n").join(""), unreadable };
}

type Fields = Record<string, unknown>;

/** The main fields of an event, by its type; unknown types show their fields as JSON. */
function describe(event: Fields): string {
  const f = (key: string) => printable(event[key] === undefined || event[key] === null ? "-" : String(event[key]));
  const digest = (key: string) => shortDigest(f(key));
  switch (event.type) {
    case "evaluation-started":
      return `eval ${f("evaluation")}  session ${f("session")}  ${f("displayName")}  code ${digest("codeDigest")}  policy ${digest("policyDigest")}`;
    case "action-requested":
      return `eval ${f("evaluation")} #${f("action")}  ${f("kind")}  ${quoted(event.pattern)}${typeof event.realPath === "string" ? ` -> ${quoted(event.realPath)}` : ""}  tier ${f("tier")}${recorded(event)}`;
    case "decision": {
      const answer = event.decision === "asked" ? ` → ${f("answer")}` : "";
      const reason = event.reason === null || event.reason === undefined ? "" : `: ${quoted(event.reason)}`;
      return `eval ${f("evaluation")} #${f("action")}  ${f("decision")}${answer}  via ${f("via")}${reason}`;
    }
    case "action-result": {
      const hops = Array.isArray(event.redirects) ? `  redirected: ${event.redirects.map(quoted).join(" -> ")}` : "";
      return `eval ${f("evaluation")} #${f("action")}  ${event.ok === true ? "ok" : "failed"}  ${f("size")} B  ${f("durationMs")} ms  ${digest("digest")}${hops}`;
    }
    case "output":
      return `eval ${f("evaluation")}  printed ${f("prints")}×  ${f("size")} B  ${digest("digest")}`;
    case "evaluation-ended":
      return `eval ${f("evaluation")}  ${f("outcome")}  exit ${f("exitCode")}  ${f("durationMs")} ms`;
    case "session-started":
      return `session ${f("session")}`;
    case "session-ended":
      return `session ${f("session")}  ${quoted(event.reason)}`;
    case "head":
      return `signed through line ${f("signedSeq")} (key ${printable(String(event.publicKey ?? "-")).slice(0, 16)}…)`;
    case "resumed-after-unsigned-tail":
      return `reopened: the lines up to ${f("lastSeq")} were found unsigned`;
    default: {
      const { type: _type, ...rest } = event;
      return printable(JSON.stringify(rest));
    }
  }
}

/** What a request records beside its pattern (action-record.ts): a command's words and directory, a request's URL and what it sent, a write's or chat's content digest. */
function recorded(event: Fields): string {
  const f = (key: string) => printable(String(event[key]));
  if (typeof event.commandLine === "string") {
    const input = typeof event.input === "string" ? `, input ${shortDigest(f("input"))}` : "";
    const whole = Array.isArray(event.commandWords) ? "; every word in --json" : "";
    // Shown as recorded, as the approval question shows it: its words are quoted where they need
    // to be already (action-record.ts), and quoting the line again doubled every escape in it.
    return `  run: ${f("commandLine")} (in ${quoted(event.cwd)}${input}${whole})`;
  }
  if (typeof event.url === "string") {
    const headers = typeof event.headers === "string" && event.headers !== "" ? `, headers ${f("headers")}` : "";
    const secret = typeof event.secretHeaders === "string" && event.secretHeaders !== "" ? `, secret headers ${f("secretHeaders")}` : "";
    const body = typeof event.body === "string" ? `, body ${event.body === "classified" ? "classified" : shortDigest(f("body"))}` : "";
    const whole = typeof event.wholeUrl === "string" ? " (cut; the whole URL in --json)" : "";
    return `  url: ${quoted(event.url)}${whole}${headers}${secret}${body}`;
  }
  if (typeof event.content === "string") return `  content ${event.content === "classified" ? "classified" : shortDigest(f("content"))}`;
  return "";
}

/** "sha256:0123456789ab…" — enough to compare by eye; --json has the whole digest. */
function shortDigest(digest: string): string {
  return digest.length > 19 ? `${digest.slice(0, 19)}…` : digest;
}

function quoted(value: unknown): string {
  return typeof value === "string" ? printable(JSON.stringify(value)) : printable(String(value ?? "-"));
}
