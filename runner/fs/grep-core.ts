// Line-by-line search of files, streaming (a 1 GiB file is never loaded whole). Runs in the
// grep worker, so an agent's pathological pattern can stall only that thread, which the host
// terminates, never the host itself.

import { closeSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import picomatch from "picomatch";
import { openForReading } from "./checked-open.js";
import { ClassifiedPaths } from "./classified-paths.js";
import { isWithin } from "./containment.js";
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
 * Calls `onLine` for every line of the file, streaming; stops early if it returns false.
 * `verify` checks where the opened file really is (a path swapped after the check is caught).
 */
export function forEachLineOf(
  realPath: string,
  verify: (actual: string) => void,
  onLine: (line: string, lineNumber: number) => boolean | void,
): void {
  const fd = openForReading(realPath, verify);
  try {
    const buffer = (sharedBuffer ??= Buffer.allocUnsafe(CHUNK_BYTES));
    const decoder = new StringDecoder("utf8");
    let pending = "";
    let lineNumber = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      const text = n === 0 ? decoder.end() : decoder.write(buffer.subarray(0, n));
      pending += text;
      let start = 0;
      for (let newline = pending.indexOf("\n", start); newline !== -1; newline = pending.indexOf("\n", start)) {
        const line = pending.slice(start, newline).replace(/\r$/, "");
        if (onLine(line, ++lineNumber) === false) return;
        start = newline + 1;
      }
      pending = pending.slice(start);
      if (n === 0) {
        if (pending !== "") onLine(pending.replace(/\r$/, ""), ++lineNumber);
        return;
      }
    }
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

export function grepFile(named: string, real: string, verify: (actual: string) => void, regex: RegExp, collector: MatchCollector): void {
  forEachLineOf(real, verify, (line, lineNumber) => {
    regex.lastIndex = 0;
    if (regex.test(line)) collector.add({ file: named, lineNumber, line });
  });
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

/** Classified files and directories are pruned by name: never opened, never read. */
export function grepRecursive(request: GrepRecursiveRequest, regex: RegExp): GrepMatch[] {
  const classified = new ClassifiedPaths(request.classifiedPatterns);
  const wanted = request.glob ? globMatcher(request.glob, request.dir) : () => true;
  const collector = new MatchCollector();
  const verify = searchableCheck(request.realRoot, classified);
  for (const entry of walkTree(request.dir, request.realDir, request.realRoot, (e) => classified.isClassifiedEntry(e))) {
    if (entry.isDirectory || !wanted(entry.named)) continue;
    try {
      grepFile(entry.named, entry.real, verify, regex, collector);
    } catch (error) {
      if (error instanceof GrepLimitError) throw error;
      // Unreadable, vanished and special files (FIFOs, sockets, devices) are skipped.
    }
  }
  return collector.matches;
}
