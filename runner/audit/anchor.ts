// The audit log's anchor: this machine's record, kept outside the log, of the last head its
// writer signed in each log file. The chain and the signatures show that what is in a log is
// what was written, but not that nothing was cut from its end: a log cut right after a signed
// head is a shorter log that verifies. Whoever can edit the log but not the tacit home (a
// script that got at the file, a person with write access to where the log lives) cannot
// move the record, so a cut, or a file rewritten from some point on, shows against it.
//
// One small file per log, in <tacit home>/audit-anchors/ (beside the signing key, owner-only
// like it), named by a digest of the log's real path: one writer per log (the log's lock), so
// no two processes ever write the same record, and a head rewrites a few hundred bytes
// whatever the number of logs. Each record also holds the chain of the log's first line,
// which survives a rename: `tacit audit verify` uses it to name the record a moved or copied
// log came from (as a note: a copy taken earlier is a shorter log too, and not a forgery).
//
// Crash semantics: the record is written (temporary file, then rename, so a reader never sees
// half of one) after the log's fsync, and is not fsynced itself: it is never ahead of what
// the log has on disk, so a crash cannot make an intact log look cut. A crash can lose the
// newest record (it then anchors an older head, which the log still holds), or, on a file
// system that does not order a rename after the data it names, leave it empty; an unreadable
// record stops the writer, with what to do.

import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { onFirstUse } from "../on-first-use.js";
import { tacitHome } from "../tacit-home.js";
import { realPlace } from "./real-place.js";
import { sha256Hex } from "./digest.js";
import { describeIssues, hex32, loggedTime, parseLine, positiveCount } from "./line.js";
import { ownFileProblemText, readOwnFile, replaceOwnFile } from "./own-file.js";
import { PARSED_ONCE } from "../parse-once.js";

const ANCHOR_FORMAT = "tacit-audit-anchor-v1";
const ANCHORS_DIR_NAME = "audit-anchors";

/**
 * A record's hashes, counts and time are checked by the log's own schemas (line.ts), built already by
 * the import of its modules: made here again, with z.string().datetime() for the time, they cost a
 * writer's opening about 1 ms more. Its time is the writer's (timeText, in Date#toISOString's form), and only that
 * form is taken, as on a line.
 */
function buildAnchorSchema() {
  return z.strictObject({
    format: z.literal(ANCHOR_FORMAT),
    /** The log's real path (symlinks resolved) when the head was signed. */
    log: z.string().min(1),
    /** The chain of the log's first line: which log this is, whatever its name. */
    firstChain: hex32,
    /** The head line's seq (its line number in an untouched log) and its chain value. */
    seq: positiveCount,
    chain: hex32,
    /** The file's size in bytes right after the head line: where the writer looks for it. */
    offset: positiveCount,
    /** When it was signed, and with which key. */
    time: loggedTime,
    publicKey: hex32,
  });
}
/** Built on first use, as the other schemas: a run without --audit-log never needs it. */
const anchorSchema = onFirstUse(buildAnchorSchema);

export type AnchorRecord = z.infer<ReturnType<typeof buildAnchorSchema>>;

/** A record that exists but cannot be used; the message says which file and what to do. */
export class AnchorError extends Error {
  override name = "AnchorError";
}

/** The records of the logs signed with the key in `keyFile`: they live beside it. */
export function anchorsDirFor(keyFile: string): string {
  return path.join(path.dirname(path.resolve(keyFile)), ANCHORS_DIR_NAME);
}

/** The records of this machine's default key (`tacit audit verify` reads these). */
export function defaultAnchorsDir(): string {
  return path.join(tacitHome(), ANCHORS_DIR_NAME);
}

/** The path a log's record is keyed by (see realPlace). */
export const realLogPath = realPlace;

/**
 * The names a log's records are kept under: the name tacit was given (made absolute) and where
 * it really is. Both: a name swapped for a link to a cut copy leaves the real path without a
 * record, but not the name (a second security review had a writer continue a cut log so).
 */
export function logNames(file: string): string[] {
  return [...new Set([path.resolve(file), realLogPath(file)])];
}

export class AnchorStore {
  constructor(readonly dir: string) {}

  /** The record file for the log whose real path is `log`. */
  fileFor(log: string): string {
    // 128 bits of the digest: a name per path, short enough for any file system.
    return path.join(this.dir, `${sha256Hex(log).slice(0, 32)}.json`);
  }

  /** The record for `log` (a real path), or null if none was made; AnchorError if one is unusable. */
  read(log: string): AnchorRecord | null {
    const file = this.fileFor(log);
    const record = readRecord(file);
    // A record for another path under this name would be a digest collision or a file put
    // there by hand: either way it says nothing about this log.
    return record !== null && record.log === log ? record : null;
  }

  /** Replaces the record of `record.log`, whole or not at all (see the header for why no fsync). */
  write(record: AnchorRecord): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    replaceOwnFile(this.fileFor(record.log), JSON.stringify(record, null, 2) + "\n", { sync: false });
  }

  /** Records, other than for `exceptLog`, of a log with this first line (a moved or copied log); unusable ones are skipped. */
  findByFirstChain(firstChain: string, exceptLog: string): Array<{ record: AnchorRecord; file: string }> {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const found: Array<{ record: AnchorRecord; file: string }> = [];
    for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
      const file = path.join(this.dir, name);
      try {
        const record = readRecord(file);
        if (record !== null && record.firstChain === firstChain && record.log !== exceptLog) found.push({ record, file });
      } catch {
        // An unusable record anchors nothing; the log it belongs to reports it when opened.
      }
    }
    return found;
  }
}

/** null when the file does not exist; AnchorError for anything else wrong with it. */
function readRecord(file: string): AnchorRecord | null {
  const text = readOwnFile(file, 0o022, (problem) => {
    switch (problem.kind) {
      case "unreadable":
        return new AnchorError(`cannot read the audit anchor ${file}: ${problem.message}`);
      case "not-a-file":
        return new AnchorError(`the audit anchor ${file} is not a regular file`);
      case "mode":
        return new AnchorError(`the audit anchor ${file} can be written by other users (mode ${problem.mode.toString(8)}), so it cannot vouch for the log's length`);
      case "owner":
        return new AnchorError(`the audit anchor ${file} belongs to another user; set TACIT_HOME to a directory of your own`);
      default:
        return new AnchorError(ownFileProblemText(`the audit anchor ${file}`, file, problem, "it cannot vouch for the log's length"));
    }
  }, tacitHome());
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AnchorError(
      `the audit anchor ${file} is not valid JSON${text === "" ? " (it is empty: a system crash can leave it so)" : ""}`,
    );
  }
  const parsed = anchorSchema().safeParse(json, PARSED_ONCE);
  if (!parsed.success) throw new AnchorError(`the audit anchor ${file} is not a tacit audit anchor (${describeIssues(parsed.error)})`);
  return parsed.data;
}

/** What `tacit audit verify` was given to check the log's length against (see verify.ts). */
export type AnchorInput =
  | { record: AnchorRecord; source: string }
  /**
   * No record applies: `why` says so, `sameFirstLine` names records of a log with the same first line.
   * `machineKey`: this machine's public key, when its records were searched and none is for this log
   * (a log whose heads that key signed should have one: its record was deleted; verify.ts warns of it).
   */
  | { record: null; why: string; sameFirstLine: Array<{ record: AnchorRecord; file: string }>; machineKey?: string };

/**
 * This machine's record for the log in `file`, for `tacit audit verify`: read now, before the log is
 * read, and given with what the log's first line (`firstLine`, as read) finds. `givenKey`: the key
 * given with --public-key, if any; a record is used then only if its heads were signed with that key
 * (it is this machine's own log), since someone else's log at a path this machine once wrote to is not
 * what the record describes. `machineKey`: the public key of the machine whose records `dir` holds,
 * if known (said with a record not found).
 *
 * Read before the log: a live writer records a head after it has written and fsynced it, so a head
 * recorded by then is in what the reading finds. Read at the log's first line, after the reading had
 * reached the log's end, the record could name a head the live writer signed meanwhile, and verify said
 * "truncated: ... the lines after it were cut off" of a log that was only growing.
 */
export function anchorForVerify(
  file: string,
  givenKey: string | null,
  dir: string = defaultAnchorsDir(),
  machineKey: string | null = null,
): (firstLine: string) => AnchorInput {
  const store = new AnchorStore(dir);
  const names = logNames(file);
  let log = names.at(-1)!;
  const sameFirstLine = (firstLine: string) => {
    const firstChain = firstLineChain(firstLine);
    return firstChain === null ? [] : store.findByFirstChain(firstChain, log);
  };
  let record: AnchorRecord | null = null;
  try {
    // The name given first: it is what a swapped link cannot take its record away from.
    for (const name of names) {
      record = store.read(name);
      if (record !== null) {
        log = name;
        break;
      }
    }
  } catch (error) {
    const why = `this machine's record for it is unusable (${(error as Error).message})`;
    return () => ({ record: null, why, sameFirstLine: [] });
  }
  if (record === null) {
    const why = `this machine has no record of signing heads in ${log} (in ${dir})`;
    return (firstLine) =>
      machineKey === null ? { record: null, why, sameFirstLine: sameFirstLine(firstLine) } : { record: null, why, sameFirstLine: sameFirstLine(firstLine), machineKey };
  }
  if (givenKey !== null && record.publicKey !== givenKey) {
    const why = `this machine's record for ${log} is for heads signed with another key (${record.publicKey.slice(0, 12)}…) than the one given with --public-key, so it was not used`;
    return () => ({ record: null, why, sameFirstLine: [] });
  }
  const found = { record, source: store.fileFor(log) };
  return () => found;
}

/** The chain value of the text's first line, if it is a line (whether it is intact is verify's business). */
function firstLineChain(text: string): string | null {
  const end = text.indexOf("\n");
  const parsed = parseLine(end < 0 ? text : text.slice(0, end));
  return parsed.ok ? parsed.line.chain : null;
}

/** A record for the head the writer just signed. */
export function anchorRecord(fields: Omit<AnchorRecord, "format">): AnchorRecord {
  return { format: ANCHOR_FORMAT, ...fields };
}
