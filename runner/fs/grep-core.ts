// Line-by-line search of files, streaming (a 1 GiB file is never loaded whole). Runs in the
// grep worker, so an agent's pathological pattern can stall only that thread, which the host
// terminates, never the host itself.

import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import picomatch from "picomatch";
import { openedPath, openForReading, procFdDirectory, procNamesDescriptors } from "./checked-open.js";
import { ClassifiedPaths } from "./classified-paths.js";
import { forPicomatch, withLiteralGroups } from "./glob-classes.js";
import { insideOf, isWithin, resolveLinkIn } from "./containment.js";
import { type LeftOut, LeftOutEntries, linkFailureReason, unreadableReason } from "./left-out.js";
import { type FoundPaths, isSwappedForNonDirectory, namedPaths, PathChanged, PathTooLongError, pathTooLongReason, topDirectoryChanged, walkTree } from "./walk.js";
import { HostSecrets } from "../host-secrets.js";

import { type GrepMatch, LINE_LIMIT_CHARS, LINE_TOO_LONG } from "../../library/protocol.js";

export type { GrepMatch };

/** Results past this many characters are refused rather than shipped. */
export const GREP_RESULT_LIMIT_CHARS = 16 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

export class GrepLimitError extends Error {
  override name = "GrepLimitError";
}

/** A line longer than LINE_LIMIT_CHARS: grep() fails with it, grepRecursive() skips the file (and says so). */
export class LineTooLongError extends Error {
  override name = "LineTooLongError";
  constructor() {
    super(LINE_TOO_LONG);
  }
}

/** One read buffer for the thread: searches are synchronous, so they never share it at once. */
let sharedBuffer: Buffer | null = null;

/**
 * Calls `onLine` for every line of an open regular file, streaming; stops early if it
 * returns false.
 */
export function forEachLineOfFd(fd: number, onLine: (line: string, lineNumber: number) => boolean | void): void {
  const buffer = (sharedBuffer ??= Buffer.allocUnsafe(CHUNK_BYTES));
  linesFrom(fd, buffer, readSync(fd, buffer, 0, CHUNK_BYTES, null), onLine);
}

const withoutCr = (line: string): string => (line.endsWith("\r") ? line.slice(0, -1) : line);

/**
 * forEachLineOfFd, the first chunk read already: `buffer` holds its `read` bytes, and the
 * file's descriptor is at the end of them.
 */
function linesFrom(fd: number, buffer: Buffer, read: number, onLine: (line: string, lineNumber: number) => boolean | void): void {
  let decoder: StringDecoder | null = null;
  // The line being read, in pieces: a line longer than a chunk is joined once when it ends. Kept
  // as one string grown by each chunk and searched again from its start, a line of hundreds of
  // MB cost the square of its length (noted by the tenth security review).
  // At most LINE_LIMIT_CHARS of it: a file of one line was held whole, on the host's heap (a
  // 2 GB sparse file grew it by 2.1 GB; a larger one would end it).
  let carried: string[] = [];
  let carriedChars = 0;
  let lineNumber = 0;
  for (let first = true, n = read; ; first = false, n = readSync(fd, buffer, 0, CHUNK_BYTES, null)) {
    // A regular file that returns less than asked for is at its end: no extra read to learn it.
    const atEnd = n < CHUNK_BYTES;
    let text: string;
    if (first && atEnd) {
      text = buffer.toString("utf8", 0, n);
    } else {
      decoder ??= new StringDecoder("utf8");
      text = decoder.write(buffer.subarray(0, n)) + (atEnd ? decoder.end() : "");
    }
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      let line = text.slice(start, newline);
      if (carriedChars + line.length > LINE_LIMIT_CHARS) throw new LineTooLongError();
      if (carried.length > 0) {
        carried.push(line);
        line = carried.join("");
        carried = [];
        carriedChars = 0;
      }
      if (onLine(withoutCr(line), ++lineNumber) === false) return;
      start = newline + 1;
    }
    if (start < text.length) {
      carriedChars += text.length - start;
      if (carriedChars > LINE_LIMIT_CHARS) throw new LineTooLongError();
      carried.push(text.slice(start));
    }
    if (atEnd) {
      const rest = carried.join("");
      if (rest !== "") onLine(withoutCr(rest), ++lineNumber);
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

export function tooManyMatches(): GrepLimitError {
  return new GrepLimitError(
    `more than ${GREP_RESULT_LIMIT_CHARS} characters of matches; narrow the pattern, or the glob, or search a smaller directory`,
  );
}

export class MatchCollector {
  readonly matches: GrepMatch[] = [];
  private chars = 0;

  add(match: GrepMatch): void {
    this.chars += match.file.length + match.line.length + 32;
    if (this.chars > GREP_RESULT_LIMIT_CHARS) throw tooManyMatches();
    this.matches.push(match);
  }
}

/** A file a search opened that leads outside the scope or to a classified file (a link swapped in). */
export class SearchRefusal extends Error {
  override name = "SearchRefusal";
}

/** Where a search may read: inside the scope, and nothing classified. */
export function searchableCheck(realRoot: string, classified: ClassifiedPaths): (actual: string) => void {
  return (actual) => {
    if (!isWithin(actual, realRoot) || classified.matches(actual)) throw new SearchRefusal("the path changed while being searched");
  };
}

/** Replaces every host secret in a line with the mask; null when there are none. */
export type LineMask = ((line: string) => string) | null;

/** The mask for the host's secrets (texts as the host holds them), or null when there are none. */
export function maskOf(hostSecrets: readonly string[]): LineMask {
  const secrets = new HostSecrets(hostSecrets);
  return secrets.empty ? null : (text) => secrets.scrubText(text);
}

function grepLines(named: string, regex: RegExp, collector: MatchCollector, mask: LineMask): (line: string, lineNumber: number) => void {
  return (raw, lineNumber) => {
    // The pattern is tried on the line as the script may see it: a match on a host secret's
    // characters would tell the script them one by one, whatever the reply masks.
    const line = mask === null ? raw : mask(raw);
    regex.lastIndex = 0;
    if (regex.test(line)) collector.add({ file: named, lineNumber, line });
  };
}

export function grepFile(named: string, real: string, verify: (actual: string) => void, regex: RegExp, collector: MatchCollector, mask: LineMask = null): void {
  forEachLineOf(real, verify, grepLines(named, regex, collector, mask));
}

/** How globs are read: no extglobs or braces (plain *, **, ? and […] are all a path filter needs), dot files matched. */
const GLOB_OPTIONS = { dot: true, noextglob: true, nobrace: true } as const;

/**
 * A script's glob as picomatch is given it: "[!…]" as the shell reads it (glob-classes.ts), and
 * "(", ")" and "|" as the characters they are. picomatch read them as a regular expression's
 * group and alternation: find(".", "*(1).png") answered with photo1.png and not photo(1).png,
 * and "a|b.txt" with a and b.txt. tacit's globs take *, **, ? and […] only (see the library's
 * checkedGlob, which refuses the extglobs and braces a script may mean).
 */
function asWritten(glob: string): string {
  return forPicomatch(withLiteralGroups(glob) ?? glob);
}

/**
 * A glob without "/" matches file names; with "/" it matches the path below `dir`. A leading
 * "!" matches what the rest does not (picomatch's negation, as `rg -g '!*.min.js'` excludes);
 * "[!…]" is a class of every character but those listed (see glob-classes.ts).
 */
export function globMatcher(glob: string, dir: string, mask: LineMask = null): (named: string) => boolean {
  const test = picomatch(asWritten(glob), { ...GLOB_OPTIONS, basename: !glob.includes("/") });
  const tried = triedAs(glob, dir, mask);
  return (named) => test(tried(named));
}

/**
 * What a glob is tried on for an entry named `named`: its whole path (a glob without "/"
 * matches its last component), or its path below `dir`. Tried on the name as the script may
 * see it: a glob on a host secret in a file name would spell it out one character at a time,
 * however the reply masks the name.
 */
function triedAs(glob: string, dir: string, mask: LineMask): (named: string) => string {
  const below = glob.includes("/");
  // The path below `dir` starts after its separator; the file system's root "/" is one already:
  // cut one further, find("/", "tmp/x/*.ts") tried "mp/x/a.ts" and found nothing.
  const start = dir.endsWith("/") ? dir.length : dir.length + 1;
  return (named) => {
    const tried = below ? named.slice(start) : named;
    return mask === null ? tried : mask(tried);
  };
}

/**
 * Whether anything below the directory `named` (under `dir`) could match `glob` (globMatcher's
 * reading): whether leaving the directory out, unreadable, could have lost an entry the call
 * was asked for, and so is worth a warning (left-out.ts). Any directory may hold a name a glob
 * without "/" matches. With "/": one whose path below `dir` is not matched, component by
 * component, by the glob's first components, with more after them (or a "**" on the way), holds
 * nothing the glob matches ("src/*.ts" finds nothing in vendor/ nor in src/gen/); negated, one
 * whose every descendant the rest matches ("!vendor/**" and vendor/lib/) holds nothing it
 * matches. Where a glob is read in any other way (a class holding "/", an empty or dot
 * component, a double negation) every directory may.
 */
export function directoryMayHoldMatch(glob: string, dir: string, mask: LineMask = null): (named: string) => boolean {
  // Built when a directory is first left out (most calls meet none): a glob's compiled parts cost 20-40 µs.
  let test: ((named: string) => boolean) | null = null;
  return (named) => (test ??= mayHoldTest(glob, dir, mask))(named);
}

function mayHoldTest(glob: string, dir: string, mask: LineMask): (named: string) => boolean {
  const always = (): boolean => true;
  if (!glob.includes("/")) return always;
  const written = asWritten(glob);
  const negated = written.startsWith("!");
  const rest = negated ? written.slice(1) : written;
  const parts = rest.split("/");
  // picomatch reads "(…)" and "|" as a regex's group and alternation ("src/*.ts|vendor/*.ts"
  // matches vendor/v.ts), and a class may hold "/" after a "]" of its own ("[]/]", "[[:alpha:]/]"):
  // split at "/", such a glob's parts say nothing of what it matches, so a "[" with a "/" anywhere
  // after it counts every directory too.
  if (/^!/.test(rest) || /[()|]/.test(rest) || /\[[^]*\//.test(rest) || rest.includes("\\/") || parts.some((part) => part === "" || part === "." || part === "..")) return always;
  const tried = triedAs(glob, dir, mask);
  if (negated) {
    // Every path below a directory the rest matches is matched too only where the rest ends in "/**".
    if (!rest.endsWith("/**")) return always;
    const matchesRest = picomatch(rest, GLOB_OPTIONS);
    return (named) => !matchesRest(tried(named));
  }
  const partTests = parts.map((part) => (part.includes("**") ? null : picomatch(part, GLOB_OPTIONS)));
  return (named) => {
    const components = tried(named).split("/");
    for (let i = 0; i < components.length; i++) {
      const test = partTests[i];
      if (test === undefined) return false; // the glob has fewer components than the directory's path
      if (test === null) return true; // a "**": any depth below
      if (!test(components[i]!)) return false;
    }
    return parts.length > components.length;
  };
}

export interface FindRequest {
  dir: string;
  realDir: string;
  realRoot: string;
  hostSecrets: readonly string[];
  glob: string;
  /** See ListRequest.exact. */
  exact?: boolean;
}

/** Entries under `dir` whose name (or path below dir, for a glob with "/") matches, and those it could not read. */
export function findEntries(request: FindRequest): FoundPaths {
  const mask = maskOf(request.hostSecrets);
  const wanted = globMatcher(request.glob, request.dir, mask);
  const leftOut = new LeftOutEntries(wanted, directoryMayHoldMatch(request.glob, request.dir, mask));
  const entries = walkTree(request.dir, request.realDir, request.realRoot, { exact: request.exact === true, leftOut });
  return { paths: namedPaths(entries, wanted), leftOut: leftOut.summary() };
}

export interface GrepRecursiveRequest {
  dir: string;
  realDir: string;
  realRoot: string;
  pattern: string;
  glob: string | null;
  classifiedPatterns: readonly string[];
  hostSecrets: readonly string[];
  /** Absolute globs a link is not followed into (files read rules put a person in front of). */
  linkSkips: readonly string[];
  /** See ListRequest.exact. */
  exact?: boolean;
}

/** How to search one file: shared by the walking thread and the search helper. */
export interface FileSearch {
  regex: RegExp;
  mask: LineMask;
  /** Text every matching line contains (a pattern that is a plain ASCII literal), or null. */
  literal: string | null;
  verify: (actual: string) => void;
}

/**
 * One file of a recursive search, in search order. `opened` files are opened as `path`
 * (/proc/<pid>/fd/N/name under a verified directory) without following a final link;
 * `linked` ones are the in-scope target of a symlink, opened and verified like any read.
 */
export type SearchTask = { kind: "opened"; named: string; path: string } | { kind: "linked"; named: string; real: string };

export function fileSearchOf(
  pattern: string,
  realRoot: string,
  classified: ClassifiedPaths,
  hostSecrets: readonly string[],
  regex: RegExp = new RegExp(pattern),
): FileSearch {
  const mask = maskOf(hostSecrets);
  // Lines are tried masked, so the bytes of the file are no guide to which can match.
  return { regex, mask, literal: mask === null ? literalOf(pattern) : null, verify: searchableCheck(realRoot, classified) };
}

// A pattern with none of these is a literal in a RegExp made without flags.
const REGEX_SYNTAX = /[\\^$.|?*+()[\]{}]/;

/**
 * A pattern that can only match itself, or null. Only printable ASCII: decoding never makes
 * ASCII out of other bytes, so a file whose bytes lack the literal has no line that contains
 * it, and is not split into lines at all. Its bytes are looked for in the file's bytes read as
 * latin1 (one character for each byte), where they are the literal's characters.
 */
function literalOf(pattern: string): string | null {
  if (pattern === "" || REGEX_SYNTAX.test(pattern) || !/^[\x20-\x7e]+$/.test(pattern)) return null;
  return pattern;
}

/** What grepRecursive() says of a file it skipped for a line over LINE_LIMIT_CHARS. */
export const LINE_TOO_LONG_LEFT_OUT = `a line longer than ${LINE_LIMIT_CHARS} characters`;

/**
 * Searches one file of a recursive search. An unreadable file is skipped, as grep -r does, and
 * why is returned (for the warning, see left-out.ts); null when it was searched, or skipped
 * without a word: vanished, a link swapped in, or not a regular file.
 */
function searchTask(task: SearchTask, search: FileSearch, collector: MatchCollector): string | null {
  let fd: number;
  try {
    fd = task.kind === "opened"
      ? openSync(task.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
      : openForReading(task.real, search.verify).fd;
  } catch (error) {
    // A link's target now outside the scope or classified is refused without a code: the policy's, not counted.
    return unreadableReason(error);
  }
  try {
    if (!fstatSync(fd).isFile()) return null; // FIFOs, sockets and devices are skipped.
    const buffer = (sharedBuffer ??= Buffer.allocUnsafe(CHUNK_BYTES));
    const read = readSync(fd, buffer, 0, CHUNK_BYTES, null);
    if (read < CHUNK_BYTES && search.literal !== null) {
      // The whole file is in the buffer: only the lines holding the literal can match. Looked
      // for in a latin1 string of the bytes (String.prototype.indexOf) rather than with
      // Buffer#indexOf, whose view and argument handling cost more than the search itself on a
      // small file.
      linesHolding(task.named, buffer, buffer.toString("latin1", 0, read), search, collector);
      return null;
    }
    linesFrom(fd, buffer, read, grepLines(task.named, search.regex, collector, search.mask));
    return null;
  } catch (error) {
    if (error instanceof GrepLimitError) throw error;
    return error instanceof LineTooLongError ? LINE_TOO_LONG_LEFT_OUT : unreadableReason(error);
  } finally {
    closeSync(fd);
  }
}

/**
 * The matches of a file read whole into `buffer` (`bytes` its latin1 reading, one character a
 * byte) for a literal pattern, found from where the literal is rather than line by line (a
 * file with no match is not split at all; one with a match has only that line decoded). The
 * same lines as linesFrom and grepLines find: "\n" ends a line and is a byte of no other
 * character in UTF-8, so each line is the UTF-8 decoding of the bytes between two, less a
 * final "\r"; the literal is printable ASCII, whose bytes decode to themselves; and each line
 * is still tested with the pattern (no mask: a search with host secrets has no literal).
 */
function linesHolding(named: string, buffer: Buffer, bytes: string, search: FileSearch, collector: MatchCollector): void {
  const literal = search.literal!;
  let lineNumber = 1;
  let counted = 0; // the "\n"s before this offset are counted in lineNumber
  for (let at = bytes.indexOf(literal); at !== -1; ) {
    const start = bytes.lastIndexOf("\n", at) + 1;
    for (let newline = bytes.indexOf("\n", counted); newline !== -1 && newline < start; newline = bytes.indexOf("\n", newline + 1)) lineNumber++;
    counted = start;
    const newline = bytes.indexOf("\n", at);
    const line = withoutCr(buffer.toString("utf8", start, newline === -1 ? bytes.length : newline));
    search.regex.lastIndex = 0;
    if (search.regex.test(line)) collector.add({ file: named, lineNumber, line });
    if (newline === -1) return;
    at = bytes.indexOf(literal, newline + 1);
  }
}

/**
 * Searches the files `claim` hands out (the next index each time, until one past the end),
 * reporting each file's matches by index, and why each file it could not read was left out;
 * true if it stopped at the result limit. Threads that share a batch each run this with a
 * claim on one shared counter.
 */
export function searchClaimed(
  tasks: readonly SearchTask[],
  search: FileSearch,
  claim: () => number,
  found: (index: number, matches: GrepMatch[]) => void,
  unread: (index: number, reason: string) => void,
): boolean {
  const collector = new MatchCollector();
  for (;;) {
    const index = claim();
    if (index >= tasks.length) return false;
    const before = collector.matches.length;
    let reason: string | null;
    try {
      reason = searchTask(tasks[index]!, search, collector);
    } catch (error) {
      if (!(error instanceof GrepLimitError)) throw error;
      return true;
    }
    if (reason !== null) unread(index, reason);
    if (collector.matches.length > before) found(index, collector.matches.slice(before));
  }
}

/** What a batch's search found: each file's matches by index, and why the files it could not read were left out. */
export interface BatchResults {
  matches: GrepMatch[][];
  unread: Array<[number, string]>;
}

/**
 * Searches batches of files, perhaps with another thread. `begin` hands over a batch (another
 * thread may start on it at once); `finish` completes the batch begun last and returns the
 * matches of each of its files, by index. One batch is in progress at a time.
 */
export interface BatchSearcher {
  begin(tasks: readonly SearchTask[]): void;
  finish(): BatchResults;
}

interface WalkContext {
  /** The approval gate judged the search by the top directory's real path (see ListRequest.exact): a change there is PathChanged. */
  readonly exact: boolean;
  realRoot: string;
  classified: ClassifiedPaths;
  linkSkips: ClassifiedPaths;
  wanted: (named: string) => boolean;
  batches: TaskBatches;
}

/**
 * Files to search, gathered in walk order and searched a batch at a time: while one batch is
 * being searched (by a helper thread, if there is one), the walk gathers the next.
 */
class TaskBatches {
  private tasks: SearchTask[] = [];
  /** Directories walked whose files may still be in a batch: closed once it is searched. */
  private finishedDirectories: number[] = [];
  /** Those of the batch in progress, and its files. */
  private inProgress: { directories: number[]; tasks: readonly SearchTask[] } | null = null;
  /** Set when a batch failed (too many matches, a helper that failed): nothing more is searched. */
  private searchFailed = false;

  get failed(): boolean {
    return this.searchFailed;
  }
  readonly collector = new MatchCollector();

  constructor(
    private readonly searcher: BatchSearcher,
    /** Directories and files the search could not read (see left-out.ts). */
    readonly leftOut: LeftOutEntries,
  ) {}

  add(task: SearchTask): void {
    this.tasks.push(task);
    if (this.tasks.length >= BATCH_FILES) this.next();
  }

  directoryFinished(fd: number): void {
    this.finishedDirectories.push(fd);
    if (this.finishedDirectories.length >= BATCH_DIRECTORIES) this.next();
  }

  /** Finishes the batch in progress and begins the one gathered since. */
  next(): void {
    this.finishInProgress();
    if (this.searchFailed) return;
    const tasks = this.tasks;
    this.inProgress = { directories: this.finishedDirectories, tasks };
    this.finishedDirectories = [];
    this.tasks = [];
    this.searcher.begin(tasks);
  }

  /** Searches what is left; the walk is over. */
  end(): void {
    this.next();
    this.finishInProgress();
  }

  private finishInProgress(): void {
    const batch = this.inProgress;
    if (batch === null) return;
    this.inProgress = null;
    try {
      const { matches, unread } = this.searcher.finish();
      for (const found of matches) for (const match of found) this.collector.add(match);
      // In walk order, whichever thread searched them.
      for (const [index, reason] of unread.sort((a, b) => a[0] - b[0])) this.leftOut.addLeaf(batch.tasks[index]!.named, reason);
    } catch (error) {
      this.searchFailed = true;
      throw error;
    } finally {
      for (const fd of batch.directories) closeSync(fd);
    }
  }

  /** Closes every directory still open (after a failure). */
  closeDirectories(): void {
    for (const fd of [...(this.inProgress?.directories ?? []), ...this.finishedDirectories.splice(0)]) closeSync(fd);
    this.inProgress = null;
  }
}

/** Files per batch: enough that handing half to another thread pays, few enough to start it early. */
const BATCH_FILES = 1024;
/** Directory descriptors kept open for a batch's files, at most (besides those still being walked). */
const BATCH_DIRECTORIES = 64;

const byName = (a: Dirent, b: Dirent): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * One directory of a recursive search. The directory is opened and verified once (it must
 * really be inside the scope, and not classified); its files and subdirectories are opened
 * through that descriptor (/proc/<pid>/fd/N/name, without following a final link), so no
 * per-file check is needed and a directory swapped for a link cannot redirect the walk. The
 * descriptor stays open until the batch holding its files has been searched. A directory below
 * the `top` one that cannot be read is left out, as grep -r does, and counted (left-out.ts);
 * the top one fails the search, as grep -r fails on it: an empty answer would say it holds nothing.
 */
function walkDirectory(named: string, openAs: string, context: WalkContext, top = false): void {
  let dirFd: number;
  try {
    dirFd = openSync(openAs, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENAMETOOLONG") {
      if (top) throw new PathTooLongError(named);
      context.batches.leftOut.addDirectory(named, pathTooLongReason(named));
      return;
    }
    // The top one was found a directory a moment before: opened without following a final link,
    // one swapped in fails with ENOTDIR or ELOOP, which said "not a directory" of a directory.
    if (top && isSwappedForNonDirectory(error)) throw topDirectoryChanged(named, context.exact, "searched");
    if (top) throw error;
    context.batches.leftOut.addFailure(named, error); // Unreadable (gone, or a link swapped in, are not counted).
    return;
  }
  try {
    const opened = openedPath(dirFd);
    // Opened through its parent's descriptor, a directory whose path is longer than PATH_MAX has
    // no path the kernel will tell: where it really is cannot be checked, and it is not searched.
    if (opened === null && openAs.startsWith(`${procFdDirectory}/`)) throw new PathTooLongError(named);
    // Opened by its real path, within PATH_MAX, and yet /proc cannot name where it is: a directory on
    // the way was swapped for a link to a place deeper than that (see checkablePath). Taken for the
    // path opened, the search read the files of a classified directory at the bottom of a deep tree.
    if (opened === null && procNamesDescriptors) {
      if (top) throw topDirectoryChanged(named, context.exact, "searched");
      return;
    }
    const actualDir = opened ?? openAs;
    // The top one is opened by the real path it was resolved to: it must be there, or nothing is
    // searched (a directory on the way swapped for a link to another, even inside the scope,
    // would have its files searched under this one's name). PathChanged where the gate judged it.
    if (top && actualDir !== openAs) throw topDirectoryChanged(named, context.exact, "searched");
    // Where the directory really is decides, not the name it was reached by: a name swapped
    // for a link into a classified directory after the listing must not lead the search there.
    if (!isWithin(actualDir, context.realRoot) || context.classified.matches(actualDir)) {
      if (top) throw new SearchRefusal(`${named}: the directory changed while it was being opened`);
      return;
    }
    const dirPath = opened === null ? openAs : `${procFdDirectory}/${dirFd}`;
    // Both directories are absolute and normalized, and a name from readdir has no "/".
    const namedPrefix = named === "/" ? "/" : `${named}/`;
    const realPrefix = actualDir === "/" ? "/" : `${actualDir}/`;
    // Usually the directory is where it was named: then each entry's real path is its name.
    const realIsNamed = realPrefix === namedPrefix;
    // Classified entries, by name, as named and where they really are.
    const classifiedNamed = context.classified.entriesOf(named);
    const classifiedReal = realIsNamed ? null : context.classified.entriesOf(actualDir);
    for (const dirent of readdirSync(dirPath, { withFileTypes: true }).sort(byName)) {
      const name = dirent.name;
      const entryNamed = namedPrefix + name;
      const entryReal = realIsNamed ? entryNamed : realPrefix + name;
      if (dirent.isSymbolicLink()) {
        linkedEntry(entryNamed, actualDir, name, context);
        continue;
      }
      // Pruned by name: classified files and directories are never opened.
      if (classifiedNamed(name) || (classifiedReal !== null && classifiedReal(name))) continue;
      if (dirent.isDirectory()) {
        walkDirectory(entryNamed, opened === null ? entryReal : `${dirPath}/${name}`, context);
      } else if (dirent.isFile() && context.wanted(entryNamed)) {
        context.batches.add({ kind: "opened", named: entryNamed, path: `${dirPath}/${name}` });
      }
    }
  } catch (error) {
    // An unreadable directory is left out, and counted; a failed search is not.
    if (top || error instanceof GrepLimitError || error instanceof PathChanged || context.batches.failed) throw error;
    if (error instanceof PathTooLongError) context.batches.leftOut.addDirectory(named, pathTooLongReason(named));
    else context.batches.leftOut.addFailure(named, error);
  } finally {
    context.batches.directoryFinished(dirFd);
  }
}

/**
 * A symlink met in a search: followed only to a regular file inside the scope, never into a
 * directory. One that cannot be followed to see where it leads (a loop) is counted as left out,
 * unless its name is classified.
 */
function linkedEntry(named: string, realDir: string, name: string, context: WalkContext): void {
  if (!context.wanted(named)) return;
  let real: string;
  try {
    real = resolveLinkIn(realDir, name, insideOf(context.realRoot));
  } catch (error) {
    const reason = linkFailureReason(error, path.join(realDir, name));
    if (reason !== null && !context.classified.matches(named)) context.batches.leftOut.addLeaf(named, reason);
    return;
  }
  if (!isWithin(real, context.realRoot) || context.classified.isClassified(named, real) || context.linkSkips.matches(real)) return;
  context.batches.add({ kind: "linked", named, real });
}

/**
 * Classified files and directories are pruned by name: never opened, never read. Files are
 * searched a batch at a time, by this thread alone or `shared` with another; matches come
 * back in walk order, whoever searched them.
 */
export function grepRecursive(
  request: GrepRecursiveRequest,
  regex: RegExp,
  shared: ((search: FileSearch) => BatchSearcher) | null = null,
): { matches: GrepMatch[]; leftOut: LeftOut } {
  const classified = new ClassifiedPaths(request.classifiedPatterns);
  const search = fileSearchOf(request.pattern, request.realRoot, classified, request.hostSecrets, regex);
  const mask = maskOf(request.hostSecrets);
  const wanted = request.glob ? globMatcher(request.glob, request.dir, mask) : () => true;
  // A directory it could not enter is counted only if the glob could match something in it.
  const leftOut = new LeftOutEntries(wanted, request.glob ? directoryMayHoldMatch(request.glob, request.dir, mask) : undefined);
  const batches = new TaskBatches(shared ? shared(search) : searchAlone(search), leftOut);
  try {
    walkDirectory(request.dir, request.realDir, {
      exact: request.exact === true,
      realRoot: request.realRoot,
      classified,
      linkSkips: new ClassifiedPaths(request.linkSkips),
      wanted,
      batches,
    }, true);
    batches.end();
  } finally {
    batches.closeDirectories(); // those left by a search that failed
  }
  return { matches: batches.collector.matches, leftOut: batches.leftOut.summary() };
}

/** Searches each batch in this thread, when it is finished. */
function searchAlone(search: FileSearch): BatchSearcher {
  let pending: readonly SearchTask[] = [];
  return {
    begin: (tasks) => (pending = tasks),
    finish: () => {
      const results: BatchResults = { matches: pending.map(() => []), unread: [] };
      let next = 0;
      const found = (index: number, matches: GrepMatch[]): void => void (results.matches[index] = matches);
      if (searchClaimed(pending, search, () => next++, found, (index, reason) => results.unread.push([index, reason]))) throw tooManyMatches();
      return results;
    },
  };
}
