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

import type { AnchorInput } from "./anchor.js";
import { fromHex } from "./ed25519.js";
import { verifyBytes } from "./ed25519-verify.js";
import { canonicalJson } from "./digest.js";
import { chainOf, describeIssues, eventHashOfJson, headEventSchema, lineText, headMessage, type ParsedLine, parseLine, rawLineText, resumedEventSchema, ZERO_CHAIN } from "./line.js";

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
  /** The key heads were checked against, and where that trust came from. */
  publicKey: string | null;
  trust: "given" | "first-head" | "none";
  problems: VerifyProblem[];
  /** Worth knowing, but not evidence of tampering (e.g. a tail signed only after a crash). */
  warnings: VerifyProblem[];
  notes: string[];
  /** The log's length checked against the writer's record of the last head it signed in it. */
  anchor: VerifyAnchor;
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
 * `anchor`: the writer's record for this file (from this machine's tacit home), or why there
 * is none; without one, the report says what cannot be checked.
 */
export function verifyAuditLog(
  text: string,
  trustedPublicKeyHex: string | null,
  anchor: AnchorInput = { record: null, why: "no writer's record was given", sameFirstLine: [] },
  /** The file's bytes, when the caller has them: a line that is not UTF-8 is reported (see linesNotUtf8). */
  bytes?: Uint8Array,
): VerifyReport {
  const problems: VerifyProblem[] = [];
  const warnings: VerifyProblem[] = [];
  const notes: string[] = [];
  const problem = (line: number, reason: string) => problems.push({ line, reason });

  // The writer ends every line with a newline, so a last segment that is not empty is a
  // line whose write was cut off (or a file cut short).
  const segments = text === "" ? [] : text.split("\n");
  const complete = segments.at(-1) === "";
  if (complete) segments.pop();
  const lineCount = segments.length;

  const notUtf8 = bytes === undefined ? new Set<number>() : linesNotUtf8(bytes);
  const entries: Entry[] = [];
  segments.forEach((segment, index) => {
    const line = index + 1;
    const isLast = line === lineCount;
    if (notUtf8.has(line)) {
      problem(
        line,
        "edited: the line's bytes are not UTF-8 (tacit writes only UTF-8); read as text they become U+FFFD, which is what its hash covers, " +
          "so other readers may see other content",
      );
    }
    if (segment === "" || /^\s+$/.test(segment)) {
      problem(line, "empty line: tacit never writes one, so the file was edited here");
      return;
    }
    const parsed = parseLine(segment);
    if (!parsed.ok) {
      problem(
        line,
        isLast && !complete
          ? `incomplete last line (${parsed.reason}): the file ends in the middle of a line — a write cut off by a crash, or the file was truncated`
          : `unreadable line (${parsed.reason}): it was edited or corrupted`,
      );
      return;
    }
    if (isLast && !complete) {
      problem(line, "the last line has no newline at its end: the file was truncated, or edited, right after it");
    }
    entries.push({ line, parsed: parsed.line, text: segment });
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
  let publicKey = trustedPublicKeyHex?.toLowerCase() ?? null;
  let trust: VerifyReport["trust"] = publicKey === null ? "none" : "given";
  if (publicKey === null) {
    const firstHead = entries.map((entry) => headEventSchema.safeParse(entry.parsed.event)).find((result) => result.success);
    if (firstHead?.success) {
      publicKey = firstHead.data.publicKey;
      trust = "first-head";
      notes.push(
        `no trusted public key was given, so heads were checked against the key in the first head (${publicKey}): ` +
          `this shows the log is consistent with itself, not who signed it. Pass --public-key (from \`tacit audit key\` ` +
          `on the machine that wrote the log) to check the signer.`,
      );
    }
  }

  let heads = 0;
  let validHeads = 0;
  let lastHeadLine: number | null = null;
  let lastValidHeadLine: number | null = null;
  /** The line the chain has reached: the highest seq seen so far that belongs where it is. */
  let last: Entry | null = null;

  entries.forEach((entry, index) => {
    const { line, parsed, text } = entry;
    const isFinal = index === entries.length - 1;

    // The line itself. The hash covers the content as parsed, so the text must also be exactly
    // what the writer makes of that content: a security review added a repeated "pattern" key
    // (JSON.parse keeps the last, a reader by eye or another parser the first) and a
    // "__proto__" member (dropped when the line is parsed) to a line that still verified.
    const eventJson = canonicalJson(parsed.event);
    if (eventHashOfJson(parsed.seq, parsed.time, eventJson) !== parsed.hash) {
      problem(line, "edited: the line's seq, time or event does not match its hash (changed after it was written)");
    } else if (text === lineText(parsed.seq, parsed.time, eventJson, parsed.prev, parsed.hash, parsed.chain)) {
      // As tacit writes it.
    } else if (text === rawLineText(parsed.seq, parsed.time, eventJson, parsed.prev, parsed.hash, parsed.chain)) {
      // The same content, as tacit wrote it before it escaped these (see lineText): no sign of
      // tampering, but the file is not safe to print.
      warnings.push({
        line,
        reason:
          "holds DEL or C1 controls raw rather than escaped (as an earlier tacit wrote them, or changed by hand): its content and hash " +
          "are intact, but printed as it is (cat, tail -f) it can make a terminal act; read the log with `tacit audit show`",
      });
    } else {
      problem(
        line,
        "edited: the line is not written as tacit writes it (a repeated or dropped key such as __proto__, spacing or escapes " +
          "changed by hand), so other readers may see other content than its hash covers",
      );
    }
    if (chainOf(parsed.prev, parsed.hash) !== parsed.chain) {
      problem(line, "edited: its chain value does not follow from its prev and hash (a hash or chain value was rewritten by hand)");
    }

    // Its place in the chain.
    if (last === null) {
      if (parsed.seq !== 1) {
        const first = bySeq.get(1)?.[0];
        problem(
          line,
          first
            ? `out of order: the log's first line (seq 1) is at line ${first.line}, but this line (seq ${parsed.seq}) comes first`
            : `the log starts at seq ${parsed.seq}, not 1: its first ${plural(parsed.seq - 1, "line")} ${parsed.seq === 2 ? "was" : "were"} deleted`,
        );
      } else if (parsed.prev !== ZERO_CHAIN) {
        problem(line, "chain broken: the first line's prev should be 64 zeros (lines before it were deleted, or it was rewritten)");
      }
      last = entry;
    } else if (parsed.seq === last.parsed.seq + 1) {
      if (parsed.prev !== last.parsed.chain) {
        problem(
          line,
          `chain broken: prev does not match the chain of line ${last.line}; line ${last.line} was rewritten with its ` +
            `hashes recomputed, or this line's prev was changed`,
        );
      }
      last = entry;
    } else if (parsed.seq > last.parsed.seq + 1) {
      const missing = firstFoundBetween(bySeq, seqsInOrder, last.parsed.seq + 1, parsed.seq - 1);
      if (missing === null) {
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

    // What the line says, for the two kinds the log writes itself.
    if (parsed.event.type === "head") {
      heads++;
      lastHeadLine = line;
      if (checkHead(entry, publicKey, trust, problem)) {
        validHeads++;
        lastValidHeadLine = line;
      }
    } else if (parsed.event.type === "resumed-after-unsigned-tail") {
      const resumed = resumedEventSchema.safeParse(parsed.event);
      if (!resumed.success) problem(line, `malformed resumed-after-unsigned-tail event (${describeIssues(resumed.error)})`);
      const from = (lastHeadLine ?? 0) + 1;
      if (from < line) {
        warnings.push({
          line,
          reason:
            `lines ${from}–${line - 1} were not signed by the process that wrote them: the log was reopened here after ` +
            `its writer stopped without signing (a crash), or after someone else appended them; a later head signs them ` +
            `as they were found`,
        });
      }
    }
  });

  const unsignedTail = lineCount - (lastHeadLine ?? 0);
  if (unsignedTail > 0 && entries.length > 0) {
    const first = (lastHeadLine ?? 0) + 1;
    problem(
      first,
      lastHeadLine === null
        ? `none of the ${plural(lineCount, "line")} is signed (the log has no head): its writer stopped before signing ` +
            `(a crash loses at most this unsigned tail), or the lines were not written by tacit`
        : `${plural(unsignedTail, "line")} after the last signed head at line ${lastHeadLine} ${unsignedTail === 1 ? "is" : "are"} not signed: ` +
            `written after the last signature (a crash loses at most this tail) or appended later`,
    );
  }
  if (lineCount === 0) notes.push("the log is empty");
  const completeLines = complete ? lineCount : lineCount - 1;
  const anchorResult = checkAnchor(anchor, entries, completeLines, problem, notes);

  problems.sort((a, b) => a.line - b.line);
  return {
    ok: problems.length === 0,
    lines: lineCount,
    heads,
    validHeads,
    lastSignedLine: lastValidHeadLine === null ? null : lastValidHeadLine - 1,
    unsignedTail,
    publicKey,
    trust,
    problems,
    warnings,
    notes,
    anchor: anchorResult,
  };
}

/**
 * 1-based numbers of the lines whose bytes are not valid UTF-8. The text a log is verified on
 * is the file decoded with each invalid sequence replaced by U+FFFD, so a security review
 * replaced the UTF-8 of a U+FFFD in a real line (a file name the script chose) with an invalid
 * sequence of the same length, and the changed file verified.
 */
export function linesNotUtf8(bytes: Uint8Array): Set<number> {
  const found = new Set<number>();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let start = 0;
  for (let line = 1; start < bytes.length; line++) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline === -1 ? bytes.length : newline;
    try {
      decoder.decode(bytes.subarray(start, end));
    } catch {
      found.add(line);
    }
    start = end + 1;
  }
  return found;
}

/**
 * The log's length against the writer's record: the recorded head (seq N, chain C) must be
 * in the file. Lines after it need no record: a later head signs them, or they are reported
 * as an unsigned tail.
 */
function checkAnchor(
  anchor: AnchorInput,
  entries: Entry[],
  completeLines: number,
  problem: (line: number, reason: string) => void,
  notes: string[],
): VerifyAnchor {
  if (anchor.record === null) {
    notes.push(`unanchored: ${anchor.why}; ${UNDETECTABLE_CUT}`);
    for (const { record, file } of anchor.sameFirstLine) {
      const reaches = entries.some((entry) => entry.parsed.seq === record.seq && entry.parsed.chain === record.chain);
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
  if (entries.some((entry) => entry.parsed.seq === record.seq && entry.parsed.chain === record.chain)) {
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
  const there = entries.find((entry) => entry.line === record.seq);
  problem(
    record.seq,
    `rewritten: ${signed}, but line ${record.seq} of the file is ${there ? `seq ${there.parsed.seq} with chain ${short(there.parsed.chain)}` : "not an intact line"}: ` +
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
  if (!verifyBytes(fromHex(signature, 64)!, headMessage(signs), fromHex(head.data.publicKey, 32)!)) {
    problem(
      line,
      `signature does not verify: the chain it signs was changed after signing (lines before it rewritten with their ` +
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
