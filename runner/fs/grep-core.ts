// Line-by-line search of files, streaming (a 1 GiB file is never loaded whole). Runs in the
// grep worker, so an agent's pathological pattern can stall only that thread, which the host
// terminates, never the host itself.

import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import picomatch from "picomatch";
import { openedPath, openForReading } from "./checked-open.js";
import { ClassifiedPaths } from "./classified-paths.js";
import { isWithin, resolveReal } from "./containment.js";
import { walkTree } from "./walk.js";

import type { GrepMatch } from "../../library/protocol.js";

export type { GrepMatch };

/** Results past this many characters are refused rather than shipped. */
export const GREP_RESULT_LIMIT_CHARS = 16 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

export class GrepLimitError extends Error {
  override name = "GrepLimitError";
}

/** One read buffer for the thread: searches are synchronous, so they never share it at once. */
let sharedBuffer: Buffer | null = null;

/**
 * Calls `onLine` for every line of an open regular file, streaming; stops early if it
 * returns false.
 */
export function forEachLineOfFd(fd: number, onLine: (line: string, lineNumber: number) => boolean | void): void {
  const buffer = (sharedBuffer ??= Buffer.allocUnsafe(CHUNK_BYTES));
  const decoder = new StringDecoder("utf8");
  let pending = "";
  let lineNumber = 0;
  for (;;) {
    const n = readSync(fd, buffer, 0, CHUNK_BYTES, null);
    // A regular file that returns less than asked for is at its end: no extra read to learn it.
    const atEnd = n < CHUNK_BYTES;
    pending += decoder.write(buffer.subarray(0, n)) + (atEnd ? decoder.end() : "");
    let start = 0;
    for (let newline = pending.indexOf("\n", start); newline !== -1; newline = pending.indexOf("\n", start)) {
      const line = pending.slice(start, newline);
      if (onLine(line.endsWith("\r") ? line.slice(0, -1) : line, ++lineNumber) === false) return;
      start = newline + 1;
    }
    pending = pending.slice(start);
    if (atEnd) {
      if (pending !== "") onLine(pending.endsWith("\r") ? pending.slice(0, -1) : pending, ++lineNumber);
      return;
    }
  }
}

/** forEachLineOfFd on a path; `verify` checks where the opened file really is. */
export function forEachLineOf(realPath: string, verify: (actual: string) => void, onLine: (line: string, lineNumber: number) => boolean | void): void {
  const { fd } = openForReading(realPath, verify);
  try {
    forEachLineOfFd(fd, onLine);
  } finally {
    closeSync(fd);
  }
}

export class MatchCollector {
  readonly matches: GrepMatch[] = [];
  private chars = 0;

  add(match: GrepMatch): void {
    this.chars += match.file.length + match.line.length + 32;
    if (this.chars > GREP_RESULT_LIMIT_CHARS) {
      throw new GrepLimitError(
        `more than ${GREP_RESULT_LIMIT_CHARS} characters of matches; narrow the pattern, or the glob, or search a smaller directory`,
      );
    }
    this.matches.push(match);
  }
}

/** Where a search may read: inside the scope, and nothing classified. */
export function searchableCheck(realRoot: string, classified: ClassifiedPaths): (actual: string) => void {
  return (actual) => {
    if (!isWithin(actual, realRoot) || classified.matches(actual)) throw new Error("the path changed while being searched");
  };
}

function grepLines(named: string, regex: RegExp, collector: MatchCollector): (line: string, lineNumber: number) => void {
  return (line, lineNumber) => {
    regex.lastIndex = 0;
    if (regex.test(line)) collector.add({ file: named, lineNumber, line });
  };
}

export function grepFile(named: string, real: string, verify: (actual: string) => void, regex: RegExp, collector: MatchCollector): void {
  forEachLineOf(real, verify, grepLines(named, regex, collector));
}

/** A glob without "/" matches file names; with "/" it matches the path below `dir`. */
export function globMatcher(glob: string, dir: string): (named: string) => boolean {
  // No extglobs or braces: plain *, **, ? and […] are all a path filter needs.
  const test = picomatch(glob, { dot: true, basename: !glob.includes("/"), noextglob: true, nobrace: true });
  return (named) => test(glob.includes("/") ? named.slice(dir.length + 1) : named);
}

export interface FindRequest {
  dir: string;
  realDir: string;
  realRoot: string;
  glob: string;
}

/** Entries under `dir` whose name (or path below dir, for a glob with "/") matches. */
export function findEntries(request: FindRequest): string[] {
  const wanted = globMatcher(request.glob, request.dir);
  const found: string[] = [];
  for (const entry of walkTree(request.dir, request.realDir, request.realRoot)) if (wanted(entry.named)) found.push(entry.named);
  return found;
}

export interface GrepRecursiveRequest {
  dir: string;
  realDir: string;
  realRoot: string;
  pattern: string;
  glob: string | null;
  classifiedPatterns: readonly string[];
}

interface SearchContext {
  realRoot: string;
  classified: ClassifiedPaths;
  wanted: (named: string) => boolean;
  verify: (actual: string) => void;
  regex: RegExp;
  collector: MatchCollector;
}

const byName = (a: Dirent, b: Dirent): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * One directory of a recursive search. The directory is opened and verified once (it must
 * really be inside the scope); its files are opened through that descriptor
 * (/proc/self/fd/N/name, without following a final link), so no per-file check is needed
 * and a directory swapped for a link cannot redirect the reads.
 */
function searchDirectory(named: string, realDir: string, context: SearchContext): void {
  let dirFd: number;
  try {
    dirFd = openSync(realDir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    return; // Unreadable or gone: left out, as grep -r does.
  }
  try {
    const opened = openedPath(dirFd);
    const actualDir = opened ?? realDir;
    if (!isWithin(actualDir, context.realRoot)) return;
    const dirPath = opened === null ? realDir : `/proc/self/fd/${dirFd}`;
    for (const dirent of readdirSync(dirPath, { withFileTypes: true }).sort(byName)) {
      const entryNamed = path.join(named, dirent.name);
      const entryReal = path.join(actualDir, dirent.name);
      if (dirent.isSymbolicLink()) {
        searchLinkedEntry(entryNamed, entryReal, context);
        continue;
      }
      // Pruned by name: classified files and directories are never opened.
      if (context.classified.matchesExactly(entryNamed) || (entryReal !== entryNamed && context.classified.matchesExactly(entryReal))) continue;
      if (dirent.isDirectory()) {
        searchDirectory(entryNamed, entryReal, context);
      } else if (dirent.isFile() && context.wanted(entryNamed)) {
        searchOpenedFile(entryNamed, () => openSync(path.join(dirPath, dirent.name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK), context);
      }
    }
  } catch (error) {
    if (error instanceof GrepLimitError) throw error;
  } finally {
    closeSync(dirFd);
  }
}

/** A symlink met in a search: followed only to a regular file inside the scope, never into a directory. */
function searchLinkedEntry(named: string, linkPath: string, context: SearchContext): void {
  let real: string;
  try {
    real = resolveReal(linkPath);
  } catch {
    return;
  }
  if (!isWithin(real, context.realRoot) || context.classified.isClassified(named, real) || !context.wanted(named)) return;
  searchOpenedFile(named, () => openForReading(real, context.verify).fd, context);
}

function searchOpenedFile(named: string, open: () => number, context: SearchContext): void {
  let fd: number;
  try {
    fd = open();
  } catch {
    return; // Unreadable, vanished, or a link swapped in: skipped.
  }
  try {
    if (!fstatSync(fd).isFile()) return; // FIFOs, sockets and devices are skipped.
    forEachLineOfFd(fd, grepLines(named, context.regex, context.collector));
  } catch (error) {
    if (error instanceof GrepLimitError) throw error;
  } finally {
    closeSync(fd);
  }
}

/** Classified files and directories are pruned by name: never opened, never read. */
export function grepRecursive(request: GrepRecursiveRequest, regex: RegExp): GrepMatch[] {
  const classified = new ClassifiedPaths(request.classifiedPatterns);
  const collector = new MatchCollector();
  searchDirectory(request.dir, request.realDir, {
    realRoot: request.realRoot,
    classified,
    wanted: request.glob ? globMatcher(request.glob, request.dir) : () => true,
    verify: searchableCheck(request.realRoot, classified),
    regex,
    collector,
  });
  return collector.matches;
}
