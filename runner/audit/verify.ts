// Offline verification of an audit log (format: line.ts). Each problem names the line where
// it shows and, as far as the log lets one tell, what happened there: an edit (hash), a line
// rewritten with its hashes recomputed (the next line's prev), deleted, swapped or inserted
// lines (seq and chain), a cut-off last line, lines no signed head covers, and heads whose
// signature fails or comes from another key than the trusted one.
//
// What the chain alone proves is only self-consistency: whoever can rewrite the file can
// recompute every hash. The signatures, checked against a key the verifier trusts, are what
// tie the content to the signer. Neither shows that nothing was cut after a signed head: the
// writer's record of its last head (anchor.ts), checked here when the caller has it, does.

import { fstatSync, statSync } from "node:fs";
import type { AnchorInput, AnchorRecord } from "./anchor.js";
import { fromHex } from "./ed25519.js";
import { verifyBytes } from "./ed25519-verify.js";
import { canonicalJson } from "./digest.js";
import { LOG_LINE_LIMIT_BYTES, type LogLine, logLines, ReadingDigest, readWhole } from "./log-lines.js";
import { chainOf, describeIssues, eventHashOfJson, headEventSchema, lineText, headMessage, headMessageV1, type ParsedLine, parseLine, rawLineText, resumedEventSchema, ZERO_CHAIN } from "./line.js";

export interface VerifyProblem {
  /** 1-based line number in the file. */
  line: number;
  reason: string;
}

export interface VerifyReport {
  /** No problems (warnings do not count). */
  ok: boolean;
  /** Lines in the file, an incomplete last one included. */
  lines: number;
  heads: number;
  /** Heads whose signature verifies with the trusted key. */
  validHeads: number;
  /** The last line covered by a valid head (the line before it); null if none is. */
  lastSignedLine: number | null;
  /** Lines after the last head, which no signature covers. */
  unsignedTail: number;
  /**
   * The last line that a valid head signed by the trusted key covers with no problem found at or
   * before it: lines 1 to it are as they were signed, every line after it is not verified (edited,
   * forged, or never signed). Null when no line is (no trusted key, or a problem before the first head).
   */
  verifiedThrough: number | null;
  /** The key heads were checked against, and where that trust came from. */
  publicKey: string | null;
  trust: "given" | "first-head" | "none";
  problems: VerifyProblem[];
  /** Worth knowing, but not evidence of tampering (e.g. a tail signed only after a crash). */
  warnings: VerifyProblem[];
  notes: string[];
  /**
   * Lines a writer found unsigned when it reopened the log (after a crash, or appended by someone else
   * meanwhile: see the resumed-after-unsigned-tail warning), which a later head signed as it found
   * them, in line order. Their hashes chain, but no signature made as they were written vouches for
   * them: whoever could write the file then could have written or edited them. Not a problem (a crash
   * leaves such lines), but lines in them are not verified, even at or before verifiedThrough.
   */
  signedAsFound: Array<{ from: number; to: number }>;
  /** The log's length checked against the writer's record of the last head it signed in it. */
  anchor: VerifyAnchor;
  /** The tacit process writing the log as it was verified (it holds the log's writer lock), or null. */
  liveWriter: number | null;
  /**
   * The last line, when the file ended in the middle of it while liveWriter held the log: the line
   * that process was writing, not checked (counted in the unsigned tail); null otherwise.
   */
  lineBeingWritten: number | null;
}

export interface VerifyAnchor {
  /**
   * anchored: the file holds the recorded head (it was not cut before it); truncated: it ends
   * before it; rewritten: that line is something else; unanchored: no record was used, so a
   * cut right after a signed head cannot be told from a shorter log.
   */
  status: "anchored" | "truncated" | "rewritten" | "unanchored";
  /** The recorded head (its line is its seq), or null when unanchored. */
  head: { line: number; chain: string; time: string } | null;
  /** The record file used, or why none was. */
  source: string;
}

/** Ranges of lines signed as found that a report lists (a forged log may hold a marker on every line); past them nothing is verified. */
const SIGNED_AS_FOUND_LISTED = 10_000;

const UNDETECTABLE_CUT = "a cut right after a signed head cannot be detected without the writer's record of its last head";

interface Entry {
  line: number;
  parsed: ParsedLine;
  /** The line as it is in the file. */
  text: string;
}

const short = (hex: string) => `${hex.slice(0, 12)}…`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * What every line is checked for wherever it stands in the chain, and the report's totals:
 * shared by the verifier that holds the whole log (verifyAuditLog) and the one that reads it
 * a line at a time (verifyAuditLogFile).
 */
class LineChecks {
  readonly problems: VerifyProblem[] = [];
  readonly warnings: VerifyProblem[] = [];
  readonly notes: string[] = [];
  heads = 0;
  validHeads = 0;
  lastHeadLine: number | null = null;
  lastValidHeadLine: number | null = null;
  /** The last line that could not be read as an audit line (a head edited or corrupted looks so too). */
  lastUnreadableLine: number | null = null;
  /**
   * The last line, when the file ended in the middle of it while a live writer held the log: the
   * line that writer was writing as it was read (its bytes reach the file a page at a time), not
   * checked, and counted in the unsigned tail. Without a live writer it is a cut (a crash, a truncation).
   */
  lineBeingWritten: number | null = null;
  /** Problems and warnings found beyond `keep` (not listed). */
  unlisted = 0;
  unlistedWarnings = 0;
  publicKey: string | null;
  trust: VerifyReport["trust"];
  /** The lowest line any problem names, listed or not: nothing from there on is verified. */
  private firstProblemLine = Infinity;
  /**
   * Valid heads met while no problem had been found at or before them, in line order. Only those
   * can end the verified part, and they stop at the first problem, so a forged log of copies of one
   * valid head line does not fill the heap with them.
   */
  private readonly cleanValidHeadLines: number[] = [];
  /** See VerifyReport.signedAsFound; at most SIGNED_AS_FOUND_LISTED ranges, the verified part ending before the next. */
  readonly signedAsFound: Array<{ from: number; to: number }> = [];
  /** The first line of a range past those listed: nothing from there on is verified. */
  private signedAsFoundUnlistedFrom = Infinity;

  /**
   * `liveWriter`: the tacit process writing the log as it is read, if one is (see VerifyReport).
   * `keep`: the most problems listed (the rest are counted); a damaged log of millions of lines must not fill the heap with them.
   */
  constructor(
    trustedPublicKeyHex: string | null,
    private readonly liveWriter: number | null,
    private readonly keep = Infinity,
  ) {
    this.publicKey = trustedPublicKeyHex?.toLowerCase() ?? null;
    this.trust = this.publicKey === null ? "none" : "given";
  }

  readonly problem = (line: number, reason: string): void => {
    if (line < this.firstProblemLine) this.firstProblemLine = line;
    if (this.problems.length < this.keep) this.problems.push({ line, reason });
    else this.unlisted++;
  };

  /** Warnings past `keep` are counted, not listed, as problems are. */
  private warn(line: number, reason: string): void {
    if (this.warnings.length < this.keep) this.warnings.push({ line, reason });
    else this.unlistedWarnings++;
  }

  get problemCount(): number {
    return this.problems.length + this.unlisted;
  }

  /** With no trusted key, heads are checked against the key of the log's first well-formed head. */
  trustFirstHead(event: ParsedLine["event"]): void {
    if (this.trust !== "none") return;
    const head = headEventSchema.safeParse(event);
    if (!head.success) return;
    this.publicKey = head.data.publicKey;
    this.trust = "first-head";
    this.notes.push(
      `no trusted public key was given, so heads were checked against the key in the first head (${this.publicKey}): ` +
        `this shows the log is consistent with itself, not who signed it. Pass --public-key (from \`tacit audit key\` ` +
        `on the machine that wrote the log) to check the signer.`,
    );
  }

  notUtf8(line: number): void {
    this.problem(
      line,
      "edited: the line's bytes are not UTF-8 (tacit writes only UTF-8); read as text they become U+FFFD, which is what its hash covers, " +
        "so other readers may see other content",
    );
  }

  /** The line parsed, or null (and the problem noted) when it is empty or no audit line. */
  parsed(text: string, line: number, isLast: boolean, complete: boolean): Entry | null {
    if (isLast && !complete && this.liveWriter !== null) {
      // Said as a crash or a cut, a person was sent looking for an attack on a log that was only
      // being written; it is still unsigned, and said so with the lines before it (report).
      this.lineBeingWritten = line;
      return null;
    }
    if (text === "" || /^\s+$/.test(text)) {
      this.problem(line, "empty line: tacit never writes one, so the file was edited here");
      this.lastUnreadableLine = line;
      return null;
    }
    const segment = this.withoutConversionMarks(text, line);
    const parsed = parseLine(segment);
    if (!parsed.ok) {
      this.problem(
        line,
        isLast && !complete
          ? `incomplete last line (${parsed.reason}): the file ends in the middle of a line — a write cut off by a crash, or the file was truncated`
          : `unreadable line (${parsed.reason}): it was edited or corrupted`,
      );
      this.lastUnreadableLine = line;
      return null;
    }
    if (isLast && !complete) {
      this.problem(line, "the last line has no newline at its end: the file was truncated, or edited, right after it");
    }
    return { line, parsed: parsed.line, text: segment };
  }

  /**
   * The line without what a conversion of the whole file adds to its lines, each reported as what
   * it is: said as an edit ("not written as tacit writes it (a repeated or dropped key such as
   * __proto__ …)" on every line of a log whose line ends were made CRLF; "unreadable" for line 1
   * of one an editor saved with a byte order mark), a person looks for edits that were not made.
   * The rest of the line is checked as it stands; the file does not verify as it is.
   */
  private withoutConversionMarks(text: string, line: number): string {
    let segment = text;
    if (segment.startsWith("\ufeff")) {
      this.problem(
        line,
        "starts with a byte order mark (U+FEFF), which tacit never writes: an editor or a conversion added it (the rest of the line " +
          "is checked without it); keep this file, and verify a copy with the mark removed",
      );
      segment = segment.slice(1);
    }
    if (segment.endsWith("\r")) {
      this.problem(
        line,
        "ends in a carriage return (\\r), which tacit never writes: the file's line ends were converted to CRLF (a Windows editor, " +
          "git's core.autocrlf, a copy in text mode; the rest of the line is checked without it); keep this file, and verify a copy " +
          "converted back (dos2unix, or sed 's/\\r$//')",
      );
      segment = segment.slice(0, -1);
    }
    return segment;
  }

  /**
   * The line itself. The hash covers the content as parsed, so the text must also be exactly
   * what the writer makes of that content: a security review added a repeated "pattern" key
   * (JSON.parse keeps the last, a reader by eye or another parser the first) and a
   * "__proto__" member (dropped when the line is parsed) to a line that still verified.
   */
  content({ line, parsed, text }: Entry): void {
    const eventJson = canonicalJson(parsed.event);
    if (eventHashOfJson(parsed.seq, parsed.time, eventJson) !== parsed.hash) {
      this.problem(line, "edited: the line's seq, time or event does not match its hash (changed after it was written)");
    } else if (text === lineText(parsed.seq, parsed.time, eventJson, parsed.prev, parsed.hash, parsed.chain)) {
      // As tacit writes it.
    } else if (text === rawLineText(parsed.seq, parsed.time, eventJson, parsed.prev, parsed.hash, parsed.chain)) {
      // The same content, as tacit wrote it before it escaped these (see lineText): no sign of
      // tampering, but the file is not safe to print.
      this.warn(
        line,
        "holds DEL or C1 controls raw rather than escaped (as an earlier tacit wrote them, or changed by hand): its content and hash " +
          "are intact, but printed as it is (cat, tail -f) it can make a terminal act; read the log with `tacit audit show`",
      );
    } else {
      this.problem(
        line,
        "edited: the line is not written as tacit writes it (a repeated or dropped key such as __proto__, a number or a character " +
          "spelled another way, such as 9.0 for 9 or \\u0061 for a, or spacing, changed by hand), so other readers may see other " +
          "content than its hash covers",
      );
    }
    if (chainOf(parsed.prev, parsed.hash) !== parsed.chain) {
      this.problem(line, "edited: its chain value does not follow from its prev and hash (a hash or chain value was rewritten by hand)");
    }
  }

  /** What the line says, for the two kinds the log writes itself. */
  kind(entry: Entry): void {
    const { line, parsed } = entry;
    if (parsed.event.type === "head") {
      this.heads++;
      this.lastHeadLine = line;
      if (checkHead(entry, this.publicKey, this.trust, this.problem, (line, reason) => this.warn(line, reason))) {
        this.validHeads++;
        this.lastValidHeadLine = line;
        if (line < this.firstProblemLine) this.cleanValidHeadLines.push(line);
      }
    } else if (parsed.event.type === "resumed-after-unsigned-tail") {
      const resumed = resumedEventSchema.safeParse(parsed.event);
      if (!resumed.success) this.problem(line, `malformed resumed-after-unsigned-tail event (${describeIssues(resumed.error)})`);
      const from = (this.lastHeadLine ?? 0) + 1;
      if (from < line) {
        if (this.signedAsFound.length < SIGNED_AS_FOUND_LISTED) this.signedAsFound.push({ from, to: line - 1 });
        else this.signedAsFoundUnlistedFrom = Math.min(this.signedAsFoundUnlistedFrom, from);
        this.warn(
          line,
          `lines ${from}–${line - 1} were not signed by the process that wrote them: the log was reopened here after ` +
            `its writer stopped without signing (a crash), or after someone else appended them; a later head signs them ` +
            `as they were found`,
        );
      }
    }
  }

  /**
   * The unsigned tail, the anchor, and the report. `entries`: the lines that parsed.
   */
  report(lineCount: number, complete: boolean, entries: number, anchor: AnchorInput, held: HeldLines): VerifyReport {
    const liveWriter = this.liveWriter;
    const unsignedTail = lineCount - (this.lastHeadLine ?? 0);
    if (unsignedTail > 0 && (entries > 0 || this.lineBeingWritten !== null)) {
      const first = (this.lastHeadLine ?? 0) + 1;
      // A head made unreadable leaves the lines it signed looking unsigned: said only as a crash
      // or lines appended, a log whose last line, its head, was edited into no JSON sent a person
      // looking for a crash at line 1.
      const unreadable = this.lastUnreadableLine !== null && this.lastUnreadableLine >= first;
      const orHeadUnreadable = unreadable ? `, or a head among them was edited, corrupted or cut off (line ${this.lastUnreadableLine} cannot be read)` : "";
      // A log verified while tacit writes it ends in lines it has not signed yet: said as a crash or
      // lines appended by someone else, a person was sent looking for an attack on a running log.
      const beingWritten =
        this.lineBeingWritten === null
          ? ""
          : `; line ${this.lineBeingWritten} was still being written when it was read (the file ended in the middle of it), so it was not checked`;
      const why =
        liveWriter !== null
          ? `: tacit process ${liveWriter} is writing this log now (it holds the log's writer lock in tacit's home), and signs them ` +
            `at its next head or when it ends; verify the log again after that${orHeadUnreadable}${beingWritten}`
          : null;
      this.problem(
        first,
        this.lastHeadLine === null
          ? why !== null
            ? `none of the ${plural(lineCount, "line")} is signed yet${why}`
            : `none of the ${plural(lineCount, "line")} is signed (the log has no ${unreadable ? "readable " : ""}head): its writer stopped before signing ` +
              `(a crash loses at most this unsigned tail), or the lines were not written by tacit${orHeadUnreadable}`
          : why !== null
            ? `${plural(unsignedTail, "line")} after the last signed head at line ${this.lastHeadLine} ${unsignedTail === 1 ? "is" : "are"} not signed yet${why}`
            : `${plural(unsignedTail, "line")} after the last signed head at line ${this.lastHeadLine} ${unsignedTail === 1 ? "is" : "are"} not signed: ` +
              `written after the last signature (a crash loses at most this tail) or appended later${orHeadUnreadable}`,
      );
    }
    if (lineCount === 0) this.notes.push("the log is empty");
    const completeLines = complete ? lineCount : lineCount - 1;
    const anchorResult = checkAnchor(anchor, held, completeLines, this.problem, this.notes);
    // Valid heads by this machine's key, in a log it has no record for (nor for a log with its first
    // line, as a log moved here has): said as a note only, a deleted record read like a log from elsewhere.
    if (
      anchor.record === null &&
      anchor.machineKey !== undefined &&
      anchor.sameFirstLine.length === 0 &&
      this.trust === "given" &&
      this.publicKey === anchor.machineKey &&
      this.lastValidHeadLine !== null
    ) {
      this.warn(
        this.lastValidHeadLine,
        `this log's heads are signed with this machine's key, but this machine has no record of the last head it signed in it: ` +
          `the record was deleted (by hand, or by a clean-up of tacit's home), or the log was written by a tacit from before ` +
          `such records, or copied here from a file whose record is gone too. Without it a cut right after a signed ` +
          `head cannot be detected, and the next tacit that writes the log starts a new record, from its own next head: if you did ` +
          `not delete it, compare this file with a copy kept elsewhere before writing to it again`,
      );
    }
    if (this.unlisted > 0) this.notes.push(`${plural(this.unlisted, "more problem")} not listed: only the first ${this.problems.length} are`);
    if (this.unlistedWarnings > 0) this.notes.push(`${plural(this.unlistedWarnings, "more warning")} not listed: only the first ${this.warnings.length} are`);

    this.problems.sort((a, b) => a.line - b.line);
    // A problem found later can name an earlier line (a duplicate's twin, the anchor): the verified
    // part ends at the last clean head before the first line any problem names.
    let verifiedThrough: number | null = null;
    if (this.trust === "given") {
      for (const head of this.cleanValidHeadLines) if (head < this.firstProblemLine && head < this.signedAsFoundUnlistedFrom) verifiedThrough = head;
    }
    return {
      ok: this.problemCount === 0,
      lines: lineCount,
      heads: this.heads,
      validHeads: this.validHeads,
      lastSignedLine: this.lastValidHeadLine === null ? null : this.lastValidHeadLine - 1,
      unsignedTail,
      verifiedThrough,
      publicKey: this.publicKey,
      trust: this.trust,
      problems: this.problems,
      warnings: this.warnings,
      notes: this.notes,
      signedAsFound: this.signedAsFound,
      anchor: anchorResult,
      liveWriter,
      lineBeingWritten: this.lineBeingWritten,
    };
  }
}

/**
 * What the anchor check needs of the log: whether it holds the recorded heads (the writer's,
 * and those of logs with the same first line), and what is at the recorded head's line.
 * Noted line by line, so neither verifier keeps the log for it.
 */
class HeldLines {
  private readonly wanted = new Set<string>();
  private readonly found = new Set<string>();
  private readonly lineWanted: number | null;
  /** The line at lineWanted, if it is an intact one. */
  atWantedLine: Entry["parsed"] | null = null;

  constructor(anchor: AnchorInput) {
    const records = anchor.record !== null ? [anchor.record] : anchor.sameFirstLine.map(({ record }) => record);
    for (const record of records) this.wanted.add(`${record.seq}:${record.chain}`);
    this.lineWanted = anchor.record?.seq ?? null;
  }

  see({ line, parsed }: Entry): void {
    const key = `${parsed.seq}:${parsed.chain}`;
    if (this.wanted.has(key)) this.found.add(key);
    if (line === this.lineWanted) this.atWantedLine = parsed;
  }

  holds(record: AnchorRecord): boolean {
    return this.found.has(`${record.seq}:${record.chain}`);
  }
}

/**
 * `anchor`: the writer's record for this file (from this machine's tacit home), or why there
 * is none; without one, the report says what cannot be checked.
 */
export function verifyAuditLog(
  text: string,
  trustedPublicKeyHex: string | null,
  anchor: AnchorInput = { record: null, why: "no writer's record was given", sameFirstLine: [] },
  /** The file's bytes, when the caller has them: a line that is not UTF-8 is reported (see linesNotUtf8). */
  bytes?: Uint8Array,
  /** The tacit process writing the log now, if one is (its unsigned last lines are said to be that). */
  liveWriter: number | null = null,
): VerifyReport {
  const checks = new LineChecks(trustedPublicKeyHex, liveWriter);
  const { problem } = checks;

  // The writer ends every line with a newline, so a last segment that is not empty is a
  // line whose write was cut off (or a file cut short).
  const segments = text === "" ? [] : text.split("\n");
  // An empty file has no line cut off.
  const complete = segments.length === 0 || segments.at(-1) === "";
  if (complete) segments.pop();
  const lineCount = segments.length;

  const notUtf8 = bytes === undefined ? new Set<number>() : linesNotUtf8(bytes);
  const entries: Entry[] = [];
  segments.forEach((segment, index) => {
    const line = index + 1;
    if (notUtf8.has(line)) checks.notUtf8(line);
    const entry = checks.parsed(segment, line, line === lineCount, complete);
    if (entry !== null) entries.push(entry);
  });

  // Who has which seq, and whose chain is continued by which line: to tell an inserted
  // line from the genuine one it duplicates, and a moved line from a deleted one.
  // Each looked up in constant or logarithmic time: a review's log of 40,000 copies of one line
  // (17 MB) took 190 s to verify when every line copied, filtered or scanned these lists.
  const bySeq = new Map<number, Entry[]>();
  /** Each entry's place among the entries with its seq, in line order. */
  const occurrence = new Map<Entry, number>();
  /** "prev:seq" of every entry: what continues the chain of a line with that chain and seq - 1. */
  const continuations = new Set<string>();
  for (const entry of entries) {
    let same = bySeq.get(entry.parsed.seq);
    if (same === undefined) bySeq.set(entry.parsed.seq, (same = []));
    occurrence.set(entry, same.length);
    same.push(entry);
    continuations.add(`${entry.parsed.prev}:${entry.parsed.seq}`);
  }
  const isContinued = (entry: Entry) => continuations.has(`${entry.parsed.chain}:${entry.parsed.seq + 1}`);
  const seqsInOrder = [...bySeq.keys()].sort((a, b) => a - b);

  // The key heads must be signed with.
  for (const entry of entries) {
    checks.trustFirstHead(entry.parsed.event);
    if (checks.trust !== "none") break;
  }

  const held = new HeldLines(anchor);
  /** The line the chain has reached: the highest seq seen so far that belongs where it is. */
  let last: Entry | null = null;

  entries.forEach((entry, index) => {
    const { line, parsed } = entry;
    const isFinal = index === entries.length - 1;
    checks.content(entry);
    held.see(entry);

    // Its place in the chain.
    if (followsUnreadableLines(entry, last, entries[index - 1] ?? null)) {
      // Its seq is where the lines before it would be: they are there, unreadable (each reported).
      last = entry;
    } else if (last === null) {
      if (parsed.seq !== 1) {
        const first = bySeq.get(1)?.[0];
        const unread = unreadableBefore(entry, last, entries[index - 1] ?? null);
        problem(
          line,
          first
            ? `out of order: the log's first line (seq 1) is at line ${first.line}, but this line (seq ${parsed.seq}) comes first`
            : unread !== null
              ? acrossUnreadable(null, parsed.seq, unread)
              : `the log starts at seq ${parsed.seq}, not 1: ${parsed.seq === 2 ? "its first line was" : `its first ${parsed.seq - 1} lines were`} deleted`,
        );
      } else if (parsed.prev !== ZERO_CHAIN) {
        problem(line, FIRST_PREV_NOT_ZERO);
      }
      last = entry;
    } else if (parsed.seq === last.parsed.seq + 1) {
      if (parsed.prev !== last.parsed.chain) problem(line, chainBrokenAfter(last.line));
      last = entry;
    } else if (parsed.seq > last.parsed.seq + 1) {
      const missing = firstFoundBetween(bySeq, seqsInOrder, last.parsed.seq + 1, parsed.seq - 1);
      const unread = missing === null ? unreadableBefore(entry, last, entries[index - 1] ?? null) : null;
      if (unread !== null) {
        problem(line, acrossUnreadable(last, parsed.seq, unread));
        last = entry;
      } else if (missing === null) {
        const count = parsed.seq - last.parsed.seq - 1;
        problem(
          line,
          count === 1
            ? `deleted line: seq jumps from ${last.parsed.seq} (line ${last.line}) to ${parsed.seq}; the line with seq ${last.parsed.seq + 1} is missing`
            : `deleted lines: seq jumps from ${last.parsed.seq} (line ${last.line}) to ${parsed.seq}; ${count} lines (seq ${last.parsed.seq + 1}–${parsed.seq - 1}) are missing`,
        );
        last = entry;
      } else if (isContinued(entry) || isFinal) {
        problem(line, `out of order: seq ${parsed.seq} comes before seq ${missing.parsed.seq} (line ${missing.line}); lines were swapped or moved`);
        last = entry;
      } else {
        // Nothing continues from it and the sequence resumes later: it does not belong.
        problem(line, `inserted: seq ${parsed.seq} does not fit after seq ${last.parsed.seq} (line ${last.line}), and no line continues its chain`);
      }
    } else {
      // The entry with its seq on the nearest line before it.
      const twin = bySeq.get(parsed.seq)![occurrence.get(entry)! - 1];
      if (twin === undefined) {
        problem(line, `out of order: seq ${parsed.seq} comes after seq ${last.parsed.seq} (line ${last.line}); lines were swapped or moved`);
      } else if (isContinued(entry) && !isContinued(twin)) {
        problem(twin.line, `inserted: line ${line} has the same seq (${parsed.seq}), and the chain continues from line ${line}, not from this one`);
        if (last === twin) last = entry;
      } else if (isContinued(twin) && !isContinued(entry)) {
        problem(line, `inserted: seq ${parsed.seq} is already at line ${twin.line}, and the chain continues from there, not from this line`);
      } else {
        problem(line, `seq ${parsed.seq} repeated (also at line ${twin.line}): a line was inserted or duplicated`);
      }
    }

    checks.kind(entry);
  });

  return checks.report(lineCount, complete, entries.length, anchor, held);
}

/**
 * Whether only unreadable lines (each reported as such) stand between `last` (the line the
 * chain has reached; null: the file's start) and `entry`, as many as its seq is past last's:
 * the lines with the seqs between are there, edited or corrupted, not deleted. Said as deleted,
 * a line 5 edited into something that is no JSON read "line 6: deleted line:
 * … the line with seq 5 is missing", and a byte order mark an editor put before line 1 read "the
 * log starts at seq 2, not 1: its first 1 line was deleted". (The chain across them cannot be
 * checked: their prev and chain are unreadable too.) `previous`: the entry read before `entry`.
 */
function followsUnreadableLines(entry: Entry, last: Entry | null, previous: Entry | null): boolean {
  const from = last === null ? { line: 0, seq: 0 } : { line: last.line, seq: last.parsed.seq };
  return previous === last && entry.line - from.line > 1 && entry.parsed.seq - from.seq === entry.line - from.line;
}

/**
 * The lines right before `entry` that could not be read (each reported as such), when only they stand
 * between it and `last` (the line the chain has reached; null: the file's start), or null when none do.
 * `previous`: the entry read before `entry`.
 */
function unreadableBefore(entry: Entry, last: Entry | null, previous: Entry | null): { from: number; to: number } | null {
  const from = (last?.line ?? 0) + 1;
  return previous === last && entry.line > from ? { from, to: entry.line - 1 } : null;
}

/**
 * A seq gap across unreadable lines of another number than the seqs missing (followsUnreadableLines
 * takes the same number): whether the missing lines are in them or gone cannot be told. Said as
 * deleted only, a line broken in two by an inserted line break read "line 7: deleted line: … the line
 * with seq 5 is missing" under the two halves of seq 5 (lines 5 and 6), and two lines joined into one
 * read as two lines deleted, which sent a person looking for lines that were there.
 */
function acrossUnreadable(last: Entry | null, seq: number, unread: { from: number; to: number }): string {
  const firstMissing = (last?.parsed.seq ?? 0) + 1;
  const count = seq - firstMissing;
  const lines = unread.from === unread.to ? `line ${unread.from}, which cannot be read` : `lines ${unread.from}–${unread.to}, which cannot be read`;
  const seqs = count === 1 ? `the line with seq ${firstMissing} is` : `the lines with seq ${firstMissing}–${seq - 1} are`;
  const from = last === null ? `the first readable line has seq ${seq}, after ${lines}` : `seq jumps from ${last.parsed.seq} (line ${last.line}) to ${seq} across ${lines}`;
  return `${from}: ${seqs} in ${unread.from === unread.to ? "it" : "them"}, edited or corrupted (a line broken in two, or lines joined into one), or ${count === 1 ? "was" : "were"} deleted`;
}

const FIRST_PREV_NOT_ZERO = "chain broken: the first line's prev should be 64 zeros (lines before it were deleted, or it was rewritten)";

const chainBrokenAfter = (line: number): string =>
  `chain broken: prev does not match the chain of line ${line}; line ${line} was rewritten with its ` +
  `hashes recomputed, or this line's prev was changed`;

/**
 * Logs up to this size whose reading finds a problem are read again whole, to tell which
 * lines were moved, inserted, duplicated or deleted. That takes several times the log's size
 * in memory (about 560 MB for a log of 100 MB), and a string of the log, which V8 cannot make
 * past 512 MiB; a larger log is reported as a reading from its first line meets its problems.
 */
export const FULL_DIAGNOSIS_LIMIT_BYTES = 64 * 1024 * 1024;
/** Problems listed for a log read a line at a time; the rest are counted. */
const STREAMED_PROBLEMS_LISTED = 1000;

/**
 * Verifies the log open at `fd` reading it a line at a time, in memory bounded by its longest
 * line (at most LOG_LINE_LIMIT_BYTES), whatever its size: a log of a few hundred MB, which a
 * busy agent's log reaches in weeks, could not be verified at all when it was read whole. A
 * log with problems and no larger than `fullDiagnosisLimitBytes` is then read whole, and
 * verifyAuditLog says what happened to its lines. `anchorOf` gets the log's first line.
 */
export function verifyAuditLogFile(
  fd: number,
  trustedPublicKeyHex: string | null,
  anchorOf: (firstLine: string) => AnchorInput,
  fullDiagnosisLimitBytes = FULL_DIAGNOSIS_LIMIT_BYTES,
  liveWriter: number | null = null,
  /** Takes the bytes of the reading a line at a time (what show compares its own reading with). */
  digest: ReadingDigest = new ReadingDigest(),
): VerifyReport {
  const checks = new LineChecks(trustedPublicKeyHex, liveWriter, STREAMED_PROBLEMS_LISTED);
  const { problem } = checks;
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let anchor: AnchorInput | null = null;
  let held: HeldLines | null = null;
  let lineCount = 0;
  let complete = true;
  let entries = 0;
  let last: Entry | null = null;
  /** The entry read before the one being checked. */
  let previous: Entry | null = null;

  // A line is known to be the last only once the next read finds nothing after it: each is
  // checked one line late.
  let pending: LogLine | null = null;
  const check = ({ line, bytes, ended }: LogLine, isLast: boolean): void => {
    if (!ended) complete = false;
    let segment: string | null = null;
    if (bytes !== null) {
      try {
        segment = decoder.decode(bytes);
      } catch {
        if (!isUtf8(bytes, !ended)) checks.notUtf8(line);
        segment = bytes.toString("utf8");
      }
    }
    // The anchor is found by the log's first line, whatever it holds.
    if (anchor === null) {
      anchor = anchorOf(segment ?? "");
      held = new HeldLines(anchor);
    }
    if (segment === null) {
      problem(line, `unreadable line (longer than ${LOG_LINE_LIMIT_BYTES / (1024 * 1024)} MiB, which tacit never writes): it was edited or corrupted`);
      checks.lastUnreadableLine = line;
      return;
    }
    const entry = checks.parsed(segment, line, isLast, !isLast || ended);
    if (entry === null) return;
    entries++;
    checks.content(entry);
    held!.see(entry);
    last = placeInSequence(entry, last, previous, problem);
    previous = entry;
    checks.trustFirstHead(entry.parsed.event);
    checks.kind(entry);
  };
  for (const next of logLines(fd, digest)) {
    if (pending !== null) check(pending, false);
    pending = next;
    lineCount = next.line;
  }
  if (pending !== null) check(pending, true);
  anchor ??= anchorOf("");
  held ??= new HeldLines(anchor);
  const report = checks.report(lineCount, complete, entries, anchor, held);
  if (report.ok) return report;
  // The size fstat says only spares reading a log it says is too large: a file can hold more than it says (see readWhole).
  const bytes = fstatSync(fd).size <= fullDiagnosisLimitBytes ? readWhole(fd, fullDiagnosisLimitBytes) : null;
  if (bytes !== null) {
    // The report is of the bytes the first reading had (lines a writer appended since are left to a
    // later reading), and only if they read the same again: a log changed back between the two
    // readings, by whoever can write it, had the second reading's "verified" said of the first's
    // lines, and `show` showed those (it checks its own reading against the first: see ReadingDigest).
    if (ReadingDigest.sameStart(digest, bytes)) {
      const same = bytes.subarray(0, digest.bytes);
      return verifyAuditLog(same.toString("utf8"), trustedPublicKeyHex, anchor, same, liveWriter);
    }
    report.problems.unshift({
      line: 1,
      reason:
        "the log changed while it was read: read again to tell what happened to its lines, it read differently, so nothing in it " +
        "is verified and its problems are listed as its first reading met them; verify it again once nothing writes to it (or verify a copy)",
    });
    report.verifiedThrough = null;
    return report;
  }
  report.notes.push(
    `the log is more than the ${mib(fullDiagnosisLimitBytes)} MiB read whole to tell moved, inserted, ` +
      `duplicated and deleted lines apart: its problems are listed as reading it from its first line met them`,
  );
  return report;
}

const mib = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(1);

/**
 * Reports, in `report`, a log no longer at `file` once it has been read from `fd` (opened there):
 * one renamed over it, or it moved away or deleted, while verify read it (a rotation, say). What was
 * read is the file that was there when it was opened, and the report holds for that file only:
 * said as the verdict on `file`, it was taken for the file a person then finds there.
 */
export function reportReplacedWhileRead(report: VerifyReport, fd: number, file: string): void {
  const held = fstatSync(fd);
  let there: string;
  try {
    const now = statSync(file);
    if (now.dev === held.dev && now.ino === held.ino) return;
    there = "another file is there now (one was renamed or linked over it, as a log rotation does)";
  } catch {
    there = "there is no file there any more (it was moved away or deleted)";
  }
  report.problems.unshift({
    line: 1,
    reason:
      `the log was replaced while it was read: ${there}. What was checked is the file that was at its path when it was ` +
      `opened, so nothing here holds for the file there now: verify it again (and the file it was moved to, if it was)`,
  });
  report.ok = false;
  report.verifiedThrough = null;
}

/**
 * A line's place in the chain, for a log read a line at a time: it follows the line before
 * it, or the problem says how it does not. Returns the line the chain has reached.
 */
function placeInSequence(entry: Entry, last: Entry | null, previous: Entry | null, problem: (line: number, reason: string) => void): Entry | null {
  const { line, parsed } = entry;
  if (followsUnreadableLines(entry, last, previous)) return entry;
  const unread = unreadableBefore(entry, last, previous);
  if (last === null) {
    if (parsed.seq !== 1) {
      problem(
        line,
        unread !== null && parsed.seq > 1
          ? acrossUnreadable(null, parsed.seq, unread)
          : `the log starts at seq ${parsed.seq}, not 1: the lines before it were deleted, or moved further down`,
      );
    } else if (parsed.prev !== ZERO_CHAIN) {
      problem(line, FIRST_PREV_NOT_ZERO);
    }
    return entry;
  }
  if (parsed.seq === last.parsed.seq + 1) {
    if (parsed.prev !== last.parsed.chain) problem(line, chainBrokenAfter(last.line));
    return entry;
  }
  if (parsed.seq > last.parsed.seq + 1) {
    problem(
      line,
      unread !== null
        ? acrossUnreadable(last, parsed.seq, unread)
        : `seq jumps from ${last.parsed.seq} (line ${last.line}) to ${parsed.seq}: the lines between were deleted, or moved further down, or this one was inserted`,
    );
    return entry;
  }
  problem(line, `seq ${parsed.seq} comes after seq ${last.parsed.seq} (line ${last.line}): lines were swapped, moved, inserted or duplicated`);
  return last;
}

/**
 * 1-based numbers of the lines whose bytes are not valid UTF-8. The text a log is verified on
 * is the file decoded with each invalid sequence replaced by U+FFFD, so a security review
 * replaced the UTF-8 of a U+FFFD in a real line (a file name the script chose) with an invalid
 * sequence of the same length, and the changed file verified.
 */
export function linesNotUtf8(bytes: Uint8Array): Set<number> {
  const found = new Set<number>();
  let start = 0;
  for (let line = 1; start < bytes.length; line++) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline === -1 ? bytes.length : newline;
    if (!isUtf8(bytes.subarray(start, end), newline === -1)) found.add(line);
    start = end + 1;
  }
  return found;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Whether a line's bytes are UTF-8. `cutOff`: the file ends in this line (no newline after it),
 * where a character whose bytes were cut off is the cut, not an edit: a crash in the middle of a
 * write, or a file truncated, there. That line is reported as incomplete; reported also as "not
 * UTF-8 … other readers may see other content", a log cut inside an "é" read as edited.
 */
function isUtf8(bytes: Uint8Array, cutOff: boolean): boolean {
  try {
    // With stream, a decoder keeps an incomplete last character for a next call rather than refuse it (a new one: it keeps it).
    (cutOff ? new TextDecoder("utf-8", { fatal: true }) : UTF8).decode(bytes, { stream: cutOff });
    return true;
  } catch {
    return false;
  }
}

/**
 * The log's length against the writer's record: the recorded head (seq N, chain C) must be
 * in the file. Lines after it need no record: a later head signs them, or they are reported
 * as an unsigned tail.
 */
function checkAnchor(
  anchor: AnchorInput,
  held: HeldLines,
  completeLines: number,
  problem: (line: number, reason: string) => void,
  notes: string[],
): VerifyAnchor {
  if (anchor.record === null) {
    notes.push(`unanchored: ${anchor.why}; ${UNDETECTABLE_CUT}`);
    for (const { record, file } of anchor.sameFirstLine) {
      const reaches = held.holds(record);
      notes.push(
        `this machine's record ${file} is for a log with the same first line at ${record.log} (a head at line ${record.seq}, ` +
          `at ${record.time}): if this file was moved or copied from there, ${reaches ? "it holds that head" : `it does not hold that head (the file ends at line ${completeLines}, or differs there): an earlier copy, or a cut`}`,
      );
    }
    return { status: "unanchored", head: null, source: anchor.why };
  }
  const { record, source } = anchor;
  const head = { line: record.seq, chain: record.chain, time: record.time };
  const signed = `this machine signed a head at line ${record.seq} (chain ${short(record.chain)}, at ${record.time}; recorded in ${source})`;
  if (held.holds(record)) {
    notes.push(`anchored: ${signed}, and the file holds it, so it was not cut short before that line`);
    return { status: "anchored", head, source };
  }
  if (completeLines < record.seq) {
    problem(
      Math.max(completeLines, 1),
      `truncated: ${signed}, the file ends at line ${completeLines}; the lines after it were cut off ` +
        `(keep this file as it is, and look for a copy of the whole log)`,
    );
    return { status: "truncated", head, source };
  }
  const there = held.atWantedLine;
  problem(
    record.seq,
    `rewritten: ${signed}, but line ${record.seq} of the file is ${there ? `seq ${there.seq} with chain ${short(there.chain)}` : "not an intact line"}: ` +
      `the log was rewritten, or cut and written again, after this machine signed it`,
  );
  return { status: "rewritten", head, source };
}

/** Checks a head line's event; true if it is a valid signature by the trusted key over its prev. */
function checkHead(
  entry: Entry,
  publicKey: string | null,
  trust: VerifyReport["trust"],
  problem: (line: number, reason: string) => void,
  warn: (line: number, reason: string) => void,
): boolean {
  const { line, parsed } = entry;
  const head = headEventSchema.safeParse(parsed.event);
  if (!head.success) {
    problem(line, `malformed head (${describeIssues(head.error)})`);
    return false;
  }
  const { signs, signedSeq, signature } = head.data;
  let valid = true;
  // A head signs the chain of the line before it, which is also its own prev.
  if (signs !== parsed.prev || signedSeq !== parsed.seq - 1) {
    problem(
      line,
      `head does not sign the line before it: it signs seq ${signedSeq} with chain ${short(signs)}, but follows seq ` +
        `${parsed.seq - 1} with chain ${short(parsed.prev)} (the head was moved, or the lines before it rewritten)`,
    );
    valid = false;
  }
  const signer = fromHex(head.data.publicKey, 32)!;
  const signatureBytes = fromHex(signature, 64)!;
  const signedNow = verifyBytes(signatureBytes, headMessage(signs, parsed.seq, parsed.time), signer);
  if (!signedNow && verifyBytes(signatureBytes, headMessageV1(signs), signer)) {
    warn(
      line,
      `head signed in tacit's first form (v1), which covers the lines before it but not the head's own time: ` +
        `until a later head signs this line, its time may have been changed`,
    );
  } else if (!signedNow) {
    problem(
      line,
      `signature does not verify: the chain it signs, or the head's own time, was changed after signing (lines before it rewritten with their ` +
        `hashes recomputed), or the head was forged`,
    );
    return false;
  }
  if (publicKey !== null && head.data.publicKey !== publicKey) {
    problem(
      line,
      trust === "given"
        ? `signed by a different key (${short(head.data.publicKey)}) than the trusted one (${short(publicKey)}): ` +
            `the log was re-signed with another key, or written on another machine`
        : `signed by a different key (${short(head.data.publicKey)}) than the first head (${short(publicKey)}): ` +
            `part of the log was re-signed with another key`,
    );
    return false;
  }
  return valid;
}

/**
 * The first entry of the lowest seq from `from` to `to` that the log has, or null if none (the
 * line asking has a seq past `to`, so the entry is on another line). `seqs`: bySeq's keys in
 * ascending order, searched by halves: a seq gap can be huge in a forged line, and a forged log
 * can have a gap at every line.
 */
function firstFoundBetween(bySeq: Map<number, Entry[]>, seqs: readonly number[], from: number, to: number): Entry | null {
  let low = 0;
  let high = seqs.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (seqs[middle]! < from) low = middle + 1;
    else high = middle;
  }
  return low < seqs.length && seqs[low]! <= to ? bySeq.get(seqs[low]!)![0]! : null;
}
