// One line of the audit log, as written and as read back, and the hashes that chain lines.
//
//   {"seq":N,"time":"<ISO 8601>","event":{…},"prev":"<64 hex>","hash":"<64 hex>","chain":"<64 hex>"}
//
//   hash  = SHA-256( canonicalJson({ seq, time, event }) )            (see digest.ts)
//   chain = SHA-256( prev + hash )   — the two lower-case hex strings, concatenated as ASCII
//   prev  = the previous line's chain; "0" × 64 on the first line
//
// seq counts lines from 1, heads included, so in an untouched log seq is the line number.
// `chain` commits to every line up to this one, so signing one chain value signs all of them.
// A head is an ordinary chained line whose event signs the chain of the line before it:
//
//   {"type":"head","signs":<chain of line N>,"signedSeq":N,"publicKey":<32 bytes hex>,
//    "signature":<64 bytes hex: Ed25519 over the UTF-8 of "tacit-audit-head-v1:" + signs>}
//
// The prefix keeps a head signature from meaning anything anywhere else the key might be used.

import { z } from "zod";
import type { AuditEvent } from "./events.js";
import { canonicalJson, sha256Hex } from "./digest.js";
import { PARSED_ONCE } from "../parse-once.js";
import { printable, terminalSafe } from "../printable.js";

/** Signs everything up to and including line `signedSeq` (the line before the head). */
export interface HeadEvent {
  type: "head";
  signs: string;
  signedSeq: number;
  publicKey: string;
  signature: string;
}

/**
 * Written when a log is reopened and its last line is not a head: the lines since the last
 * head were not signed by the process that wrote them (it crashed, or someone else appended
 * them while no tacit held the log). The next head will sign them, so without this marker a
 * verifier could not tell them from lines signed when they were written.
 */
export interface ResumedEvent {
  type: "resumed-after-unsigned-tail";
  /** The seq of the last line found when reopening. */
  lastSeq: number;
}

/** Events only the log itself writes, never the evaluation code. */
export type LogEvent = HeadEvent | ResumedEvent;

/** Any event that can appear in a log. */
export type LoggedEvent = AuditEvent | LogEvent;

export interface AuditLine<E = LoggedEvent> {
  seq: number;
  time: string;
  event: E;
  prev: string;
  hash: string;
  chain: string;
}

export const ZERO_CHAIN = "0".repeat(64);
/**
 * What a head's signature covers. v1 signed only the chain before the head, so the head's own
 * line (its time) was covered by nothing once it was the last head: on a copy verified elsewhere
 * with --public-key, where this machine's anchor does not reach, that time could be moved. v2
 * signs the head's seq and time too. Verify still takes v1 heads (logs written before), with a
 * warning; a v1 signature cannot be made for a v2 head's chain without the key, so accepting
 * both does not let anyone turn a v2 head back into a v1 one.
 */
const HEAD_SIGNATURE_PREFIX_V1 = "tacit-audit-head-v1:";
const HEAD_SIGNATURE_PREFIX = "tacit-audit-head-v2:";

export function eventHash(seq: number, time: string, event: unknown): string {
  return eventHashOfJson(seq, time, canonicalJson(event));
}

/**
 * The same hash from the event's canonical JSON, made once by the writer for both the hash and
 * the line: canonicalJson({seq, time, event}) is exactly this text (keys sorted: event, seq, time).
 */
export function eventHashOfJson(seq: number, time: string, eventJson: string): string {
  return sha256Hex(`{"event":${eventJson},"seq":${JSON.stringify(seq)},"time":${JSON.stringify(time)}}`);
}

/**
 * Date#toISOString of the time `ms`, made from its UTC fields: the same text. V8's toISOString sets
 * up the process's local time zone on its first call (ICU finding the zone), which a run otherwise
 * never does, while getUTC* do not: 0.3-0.7 ms of CPU where /etc/localtime links into the zone
 * database, and 12 ms where it does not (a copy, or a link elsewhere, which ICU then searches the
 * database for), paid by every run with a log for its first line's time. Years outside 0-9999,
 * which toISOString writes with a sign, and an invalid time (a RangeError) are left to it.
 */
export function isoTime(ms: number): string {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  return (
    `${String(year).padStart(4, "0")}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}` +
    `T${twoDigits(date.getUTCHours())}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())}.${String(date.getUTCMilliseconds()).padStart(3, "0")}Z`
  );
}

const twoDigits = (value: number): string => (value < 10 ? `0${value}` : `${value}`);

/**
 * isoTime of the times a writer takes, one after another: the text of their second is made once
 * (isoTime), and each time in it only adds its milliseconds. Made whole for every time, isoTime's
 * seven UTC fields and template cost a run of 1,000 reads, whose events mostly fall in different
 * milliseconds and the same second, several milliseconds of CPU in code that stays cold.
 */
export class IsoTimes {
  private second = Number.NaN;
  /** isoTime of `second`, up to and with the point before its milliseconds: "2026-01-02T03:04:05.". */
  private prefix = "";

  text(ms: number): string {
    // A fraction of a millisecond (which Date drops), and an invalid time, are left to isoTime.
    if (!Number.isInteger(ms)) return isoTime(ms);
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      const whole = isoTime(second * 1000);
      // A year outside 0-9999 (a sign and six digits): made whole every time.
      if (whole.length !== 24) return isoTime(ms);
      this.second = second;
      this.prefix = whole.slice(0, 20);
    }
    const millis = ms - second * 1000;
    return `${this.prefix}${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
  }
}

/** DEL and the C1 controls: JSON leaves them raw inside strings, where a terminal may act on them. */
export const RAW_CONTROLS = /[\u007f-\u009f]/;

/**
 * A line as the writer puts it in the file: the event in its canonical JSON, with DEL and the
 * C1 controls written as \u009b-style escapes. Agent text reaches events (paths, commands,
 * reasons), and a person reads the log with cat or tail -f as well as with `tacit audit show`:
 * a tenth security review's "\u009d52;c;…\u009c" (OSC 52 in its C1 form) would set their
 * clipboard. The escapes read as the same characters to a JSON parser, so the hash, which
 * covers the parsed content, is the same either way.
 */
export function lineText(seq: number, time: string, eventJson: string, prev: string, hash: string, chain: string): string {
  return rawLineText(seq, time, RAW_CONTROLS.test(eventJson) ? terminalSafe(eventJson) : eventJson, prev, hash, chain);
}

/** A line as tacit wrote it before it escaped those controls, which verify accepts too: the same content, the same hash. */
export function rawLineText(seq: number, time: string, eventJson: string, prev: string, hash: string, chain: string): string {
  return `{"seq":${JSON.stringify(seq)},"time":${JSON.stringify(time)},"event":${eventJson},"prev":"${prev}","hash":"${hash}","chain":"${chain}"}`;
}

export function chainOf(prev: string, hash: string): string {
  return sha256Hex(prev + hash);
}

/** The message a head at `seq`, written at `time`, signs over the chain `signs` of the line before it. */
export function headMessage(signs: string, seq: number, time: string): Uint8Array {
  // Buffer (a Uint8Array) rather than TextEncoder, which nothing else in a run's host sets up.
  return Buffer.from(`${HEAD_SIGNATURE_PREFIX}${signs}:${seq}:${time}`, "utf8");
}

/** The message of a v1 head (tacit before v2): the chain only. */
export function headMessageV1(signs: string): Uint8Array {
  return Buffer.from(HEAD_SIGNATURE_PREFIX_V1 + signs, "utf8");
}

const hex = (bytes: number) => z.string().regex(new RegExp(`^[0-9a-f]{${bytes * 2}}$`), `${bytes * 2} lower-case hex digits`);
// Each made once and shared by the schemas below and the anchor's (anchor.ts; a zod schema is
// immutable): every .regex(), .int(), .positive() and .max() builds a schema of its own, at the
// import of the log's modules in every run with --audit-log; made per field, they cost about 0.6 ms more.
/** 32 bytes as lower-case hex: a hash, a chain, a public key. */
export const hex32 = hex(32);
const hex64 = hex(64);
/** A line's seq, or a count of lines or bytes that is never 0. */
export const positiveCount = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
/**
 * A time as the writer writes it (Date#toISOString), on lines and in anchors. Any text was taken: nothing
 * signs the last head's own line (its chain is only anchored on the machine that wrote it), so a copy
 * verified with --public-key elsewhere verified with that head's time made "2031-01-01T00:00:00.000Z
 * evaluation-ended …", which `tacit audit show` printed in its time column.
 */
export const loggedTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, "a time as tacit writes it, such as 2026-01-02T03:04:05.678Z");

/**
 * A line read from a file (outside data). Strict: a key the writer never writes is refused,
 * since only seq, time and event are hashed and anything else would ride along unprotected.
 * Events are checked only for a `type`: integrity does not depend on knowing every event
 * kind, and a verifier must still check logs written by a newer tacit.
 */
export const lineSchema = z.strictObject({
  seq: positiveCount,
  time: loggedTime,
  event: z.looseObject({ type: z.string() }),
  prev: hex32,
  hash: hex32,
  chain: hex32,
});
export type ParsedLine = z.infer<typeof lineSchema>;

export const headEventSchema = z.strictObject({
  type: z.literal("head"),
  signs: hex32,
  signedSeq: positiveCount,
  publicKey: hex32,
  signature: hex64,
});

export const resumedEventSchema = z.strictObject({
  type: z.literal("resumed-after-unsigned-tail"),
  lastSeq: positiveCount,
});

export type LineParse = { ok: true; line: ParsedLine } | { ok: false; reason: string };

/**
 * Parses one line of text (without its newline). `once`: the only line or two parsed in this
 * process (the writer reading a log's tail), parsed without zod's compiled fast path.
 */
export function parseLine(text: string, once = false): LineParse {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: "not valid JSON" };
  }
  const result = lineSchema.safeParse(json, once ? PARSED_ONCE : undefined);
  if (!result.success) return { ok: false, reason: `not an audit line (${describeIssues(result.error)})` };
  return { ok: true, line: result.data };
}

/**
 * Why a line (or an anchor, a head) is not what tacit wrote, for a person: the issues name keys
 * and paths from the file itself, which whoever edited it chose, so the text is escaped
 * (printable) here, once, for every place that shows it: the refusal to continue a log (a
 * plain stderr line), verify's report and show's. A tenth security review put a key of
 * "\x1b[1A\x1b[2K\r…" and OSC 52 in a log's last line, and the next `tacit run --audit-log`
 * wrote it to the terminal in its refusal. (printable of escaped text changes nothing.)
 */
export function describeIssues(error: z.ZodError): string {
  return printable(
    error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.length ? issue.path.join(".") : "line"}: ${issue.message}`)
      .join("; "),
  );
}
