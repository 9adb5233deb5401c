// The --record directory, as tacit made it. A record directory an earlier run made is remembered
// (remembered-files.ts): refused to scripts, covered for confined commands while it exists. Once
// deleted (by the person, say) nothing is there to cover, and a confined command of a run without
// --record made it again: as a link to a directory outside the roots, where the next `tacit run
// --record` wrote the script's code and output, or as a directory of its own holding a
// tacit-record.jsonl with runs that never happened, which the next run continued.
//
// So tacit notes, in its home (record-dirs/, one small owner-only file per directory, named by a
// digest of its absolute path), which directory it made or first recorded into there (device,
// inode and birth time: a file system gives a new directory the inode of one just deleted, ext4
// did so for most attempts in the test, so the inode alone told nothing), and records only into that one: a directory by that name made by another process is
// refused, and one that is missing is made anew (and noted). Never through a link either, nor into
// a directory another user owns or others may write to (they could replace the record file).
// What it does not cover: a directory made before tacit first records there (a name an MCP client's
// settings give, not used yet) is taken as found, as it was before tacit noted any; and on a file
// system that keeps no birth time (Node reports 0), a directory made again on the inode of the one
// deleted passes for it.
//
// The record file is then opened in the directory checked, not by its path (openRecordFile): a
// directory on the way replaced by a link between the check and the open was followed, and the
// record, the script's code and output, was created where the link's maker chose.

import { lstatSync, mkdirSync, realpathSync, statSync, type BigIntStats } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { sha256Hex } from "./audit/digest.js";
import { DirectoryChangedError, makeDirectoriesInVerified, nearestExistingDirectory, openInVerifiedDirectory, statVerifiedDirectory } from "./fs/checked-open.js";
import { ownFileProblemText, readOwnFile, replaceOwnFile } from "./audit/own-file.js";
import { onFirstUse } from "./on-first-use.js";
import { PARSED_ONCE } from "./parse-once.js";
import { ensureTacitHome, tacitHome } from "./tacit-home.js";

const FORMAT = "tacit-record-directory-v1";
const DIR_NAME = "record-dirs";

function buildSchema() {
  const digits = z.string().regex(/^\d+$/);
  // real: where the directory really was when noted (notes written before it have none).
  return z.strictObject({ format: z.literal(FORMAT), dir: z.string().min(1), dev: digits, ino: digits, born: digits, real: z.string().min(1).optional() });
}
const schema = onFirstUse(buildSchema);

/** Which directory it is: device, inode and birth time (ns), as text (an inode may not fit a double). */
export interface RecordDirectoryIdentity {
  dev: string;
  ino: string;
  born: string;
}

const identityOf = (stat: BigIntStats): RecordDirectoryIdentity => ({ dev: stat.dev.toString(), ino: stat.ino.toString(), born: stat.birthtimeNs.toString() });

const sameIdentity = (a: RecordDirectoryIdentity, b: RecordDirectoryIdentity): boolean => a.dev === b.dev && a.ino === b.ino && a.born === b.born;

/** The record directory as this process last found and checked it (prepareRecordDirectory), or nothing yet. */
export interface FoundRecordDirectory {
  identity: RecordDirectoryIdentity | null;
  /** Its real path, resolved as it was checked: where openRecordFile opens it. */
  realPath: string | null;
}

/** Where tacit notes the directory it made at `dir` (absolute). */
export function recordDirectoryNote(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(tacitHome(env), DIR_NAME, `${sha256Hex(dir).slice(0, 32)}.json`);
}

/** What a note says: which directory tacit made or first recorded into, and where it really was (null in an older note). */
interface RecordDirectoryNote {
  identity: RecordDirectoryIdentity;
  real: string | null;
}

function readNote(dir: string, env: NodeJS.ProcessEnv): RecordDirectoryNote | string | null {
  const note = recordDirectoryNote(dir, env);
  let text: string | null;
  try {
    text = readOwnFile(note, 0o022, (problem) => new Error(ownFileProblemText(`tacit's note of the record directory ${note}`, note, problem, "tacit cannot tell which directory it made")), tacitHome(env));
  } catch (error) {
    return (error as Error).message;
  }
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  const parsed = schema().safeParse(json, PARSED_ONCE);
  if (!parsed.success || parsed.data.dir !== dir) return `tacit's note of the record directory ${note} is not one tacit wrote for ${dir}; remove it`;
  return { identity: { dev: parsed.data.dev, ino: parsed.data.ino, born: parsed.data.born }, real: parsed.data.real ?? null };
}

function writeNote(dir: string, identity: RecordDirectoryIdentity, real: string, env: NodeJS.ProcessEnv): void {
  ensureTacitHome(env);
  const note = recordDirectoryNote(dir, env);
  mkdirSync(path.dirname(note), { recursive: true, mode: 0o700 });
  replaceOwnFile(note, JSON.stringify({ format: FORMAT, dir, ...identity, real }) + "\n", { sync: false });
}

function lstatOrNull(p: string): BigIntStats | null {
  try {
    return lstatSync(p, { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Makes the record directory `dir` where it is missing, or checks that the one there is the one
 * tacit made; either way notes it. Returns null when the record may be written there, or why not
 * (a sentence naming the directory, what was refused and what to do). `known`: the directory as
 * this process last found it, which spares reading the note again, and whose real path and
 * identity openRecordFile opens and checks the file's directory by.
 */
export function prepareRecordDirectory(named: string, env: NodeJS.ProcessEnv = process.env, known: FoundRecordDirectory = { identity: null, realPath: null }): string | null {
  const dir = path.resolve(named);
  const refused = (why: string, instead: string) => `the record directory ${dir} ${why}; nothing was recorded. ${instead}`;
  try {
    let found = lstatOrNull(dir);
    if (found !== null && known.identity !== null && sameIdentity(identityOf(found), known.identity)) return null;
    const note = readNote(dir, env);
    if (typeof note === "string") return refused(`cannot be checked (${note})`, "Fix or remove that note");
    let made: string | null = null;
    if (found === null) {
      // Made below the nearest directory that exists, each in the one above as opened and checked,
      // and looked at as opened there: made by its path and looked at by it again, a directory on
      // the way swapped for a link in between had tacit note and record into the directory the
      // link's maker chose. And made anew only where tacit made it before: a record directory
      // deleted with a directory above it, that one then replaced by a link (a confined command of
      // another run whose roots hold it can), had tacit make it anew where the link led and record there.
      const place = nearestExistingDirectory(dir);
      if (place === null) {
        mkdirSync(dir, { recursive: true, mode: 0o700 }); // fails, naming what is in the way
        made = realpathSync(dir);
      } else {
        const expected = path.join(place.real, ...place.missing);
        if (note !== null && note.real !== null && expected !== note.real) {
          return refused(
            `is missing, and its path now leads to ${expected}, not to ${note.real}, where tacit made it: a directory on its way was replaced ` +
              "by a link (or moved) since, and tacit does not make the record directory again where that leads (the record, every script and " +
              "what it printed, would be written there)",
            `Put the directory back, or give --record another directory; if you moved it yourself, delete ${recordDirectoryNote(dir, env)} to have ` +
              "tacit make it where its path leads now",
          );
        }
        try {
          made = makeDirectoriesInVerified(place.real, place.missing, 0o700);
        } catch (error) {
          if (!(error instanceof DirectoryChangedError)) throw error;
          return refused(
            `could not be made: ${DirectoryChangedError.describe(error.expected, error.found)}, since tacit looked (a directory on its way was replaced by a link)`,
            "Keep the record directory out of every run's allowed roots, and run again",
          );
        }
      }
      try {
        found = statVerifiedDirectory(made);
      } catch (error) {
        if (!(error instanceof DirectoryChangedError)) throw error;
        return refused(`changed as tacit made it: ${DirectoryChangedError.describe(error.expected, error.found)}`, "Keep the record directory out of every run's allowed roots, and run again");
      }
    }
    if (found.isSymbolicLink()) {
      return refused(
        "is a symbolic link, which tacit does not follow (the record, every script and what it printed, would be written wherever it leads)",
        "Remove the link, or give --record the directory by its own path",
      );
    }
    if (!found.isDirectory()) return refused("is not a directory", "Remove what is there (tacit makes the directory), or give --record another directory");
    const me = typeof process.getuid === "function" ? BigInt(process.getuid()) : null;
    if (me !== null && found.uid !== me) return refused(`belongs to another user (uid ${found.uid})`, "Give --record a directory of your own");
    if (process.platform !== "win32" && (found.mode & 0o022n) !== 0n) {
      return refused(
        `can be written by others (mode ${(found.mode & 0o777n).toString(8)}), who could replace the record file in it`,
        `Run \`chmod go-w ${dir}\` if you trust what is in it, or give --record another directory`,
      );
    }
    const identity = identityOf(found);
    if (made === null && note !== null && !sameIdentity(note.identity, identity)) {
      return refused(
        "is not the one tacit made there: that one was deleted or moved away, and another process made this one since (a command a " +
          "script ran can, while no tacit records there), which may hold lines tacit never wrote",
        `Keep it to look at, and give --record another directory; or remove it (tacit makes it anew); or, if you made it yourself, ` +
          `delete ${recordDirectoryNote(dir, env)} to have tacit record into it`,
      );
    }
    // Where it really is, for openRecordFile; resolved after the look above, so the directory opened
    // there must also be the one looked at (its identity), or a swap in between is refused too.
    const realPath = made ?? realpathSync(dir);
    if (note === null || !sameIdentity(note.identity, identity) || note.real !== realPath) writeNote(dir, identity, realPath, env);
    known.identity = identity;
    known.realPath = realPath;
    return null;
  } catch (error) {
    return refused(`cannot be made or checked (${(error as Error).message})`, "Give --record a directory tacit can make");
  }
}

/** The directory opened at the record directory's real path is another than the one checked. */
class NotTheDirectoryChecked extends Error {
  override name = "NotTheDirectoryChecked";
  constructor(readonly there: RecordDirectoryIdentity) {
    super(`another directory (inode ${there.ino})`);
  }
}

/**
 * Opens (creates, with O_CREAT in `flags`) the file `name` in the record directory `found`, as
 * prepareRecordDirectory last found and checked it: the directory is opened first, by the real path
 * resolved then, and must still be there (fs/checked-open.ts openInVerifiedDirectory) and still be
 * the directory checked (its identity); the file is then looked up in that directory itself, never
 * by a path a directory on the way could be swapped on. So nothing is created where such a link
 * leads, and there is nothing to remove after a refusal. Returns the descriptor, or why not (the
 * end of a sentence naming the record file, without what to do, which the caller says).
 */
export function openRecordFile(found: FoundRecordDirectory, name: string, flags: number, mode: number): number | { refused: string } {
  const { identity, realPath } = found;
  if (identity === null || realPath === null) return { refused: "was not checked before it was opened (tacit's mistake)" };
  const changed = (now: string) => ({
    refused:
      `is no longer in the directory tacit checked (${realPath}): ${now}. A directory on its way was replaced by a link (or moved) since, ` +
      "which tacit does not follow to write the record (the scripts' code and output) where whoever did it chose; nothing was created there. " +
      "Keep the record directory out of every run's allowed roots, put the directory back, and run again",
  });
  try {
    return openInVerifiedDirectory(realPath, name, flags, mode, (dir) => {
      const there = identityOf(statSync(dir, { bigint: true }));
      if (!sameIdentity(there, identity)) throw new NotTheDirectoryChecked(there);
    });
  } catch (error) {
    if (error instanceof DirectoryChangedError) return changed(DirectoryChangedError.describe(realPath, error.found));
    // At its path, but another directory than the one looked at: swapped between the look and the resolve.
    if (error instanceof NotTheDirectoryChecked) return changed(`the directory there is not the one checked (inode ${error.there.ino}, not ${identity.ino})`);
    throw error;
  }
}
