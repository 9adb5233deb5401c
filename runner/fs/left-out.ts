// Entries a listing or search could not read, and so left out of its answer: an unreadable
// directory or file, a link that loops, a file with a line too long to search. Left out
// without a word, a script took the part it got for the whole (a find() that could not enter
// one directory answered as if it held nothing); grep -r says so on stderr. They are counted,
// the first few kept with why, for the one warning each call adds to the run's output (see
// FileSystemExecutor.warnLeftOut).
//
// Not counted: what the policy leaves out (entries outside the scope, classified paths, tacit's
// own files, /proc), which is documented and which a warning must not name; FIFOs, sockets and
// devices, which a search skips as grep -r does; and entries gone by the time they were opened
// (ENOENT; a file swapped for a link or a directory): a tree that changes while it is walked,
// whose answer cannot name what is no longer there. A directory the walk was about to enter
// that was swapped for a link (or a file) meanwhile is counted (SWAPPED_DIRECTORY): the answer
// has named it as a directory, and without a word the script took it for an empty one. Its
// reason is the same wherever the link leads, or whether it leads anywhere: the link is never
// followed, and where it leads is the policy's to leave out.

import { LeadsOutside, PathKeptChanging, PathResolutionError } from "./containment.js";

/** What a failure to read an entry is called in a warning; the system's words for a code tacit has none for. */
export const ERRNO_TEXT: Record<string, string> = {
  ENOENT: "no such file or directory",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOTEMPTY: "directory not empty (delete its children first)",
  EEXIST: "already exists",
  EINVAL: "invalid path (it changed while being resolved)",
  ELOOP: "too many symbolic links",
  ENAMETOOLONG: "name too long",
  EIO: "input/output error",
  EMFILE: "too many open files",
  ENFILE: "too many open files in the system",
};

/** Codes of an entry that changed or went away while it was being walked: not counted (see above). */
const GONE = new Set(["ENOENT", "ENOTDIR", "ELOOP"]);

/** How many left-out entries a warning names; the rest are counted. */
export const LEFT_OUT_NAMED = 3;

export interface LeftOut {
  count: number;
  /** The first LEFT_OUT_NAMED, in the order met: the path as named in the scope, and why. */
  first: Array<{ path: string; reason: string }>;
}

/** Left-out entries of one call, as they are met. */
export class LeftOutEntries {
  private count = 0;
  private readonly first: LeftOut["first"] = [];

  /**
   * `wanted`: the names the call asks for (a find()'s glob); a leaf it would not have answered
   * with is not counted. `mayHoldWanted`: whether a directory could hold one of them (see
   * directoryMayHoldMatch); one that could not is not counted: find(".", "src/*.ts") warned of
   * an unreadable vendor/, where it would have found nothing.
   */
  constructor(
    private readonly wanted: (named: string) => boolean = () => true,
    private readonly mayHoldWanted: (named: string) => boolean = () => true,
  ) {}

  /** A leaf (a file, or a link that is never descended into) the call would have answered with, if `wanted`. */
  addLeaf(named: string, reason: string): void {
    if (this.wanted(named)) this.add(named, reason);
  }

  /** A directory, with everything below it, if it could hold what the call asks for. */
  addDirectory(named: string, reason: string): void {
    if (this.mayHoldWanted(named)) this.add(named, reason);
  }

  private add(named: string, reason: string): void {
    this.count++;
    if (this.first.length < LEFT_OUT_NAMED) this.first.push({ path: named, reason });
  }

  /**
   * `error` (from opening, without following a final link, or reading the directory `named`, found a
   * directory when its parent was listed) counted under its reason, unless the entry is gone (see GONE):
   * one that is a link or no directory now was swapped (SWAPPED_DIRECTORY).
   */
  addFailure(named: string, error: unknown): void {
    const reason = isSwappedDirectory(error) ? SWAPPED_DIRECTORY : unreadableReason(error);
    if (reason !== null) this.addDirectory(named, reason);
  }

  summary(): LeftOut {
    return { count: this.count, first: [...this.first] };
  }
}

/** Why a directory below the top of a walk, swapped for a link or a file before the walk entered it, is left out. */
export const SWAPPED_DIRECTORY =
  "it (or a directory on the way to it) was swapped for a symbolic link or a file while the tree was walked, and a walk does not follow links into directories";

/**
 * An error of opening, without following a final link, a path its parent's listing gave as a
 * directory, that says something else is there now: a link (ELOOP) or no directory (ENOTDIR).
 */
function isSwappedDirectory(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "ELOOP" || code === "ENOTDIR";
}

/**
 * Why an entry could not be read: a system error's code in words, or null when the failure is
 * not counted: an entry gone (see GONE), or any error without a code, which is tacit's own (a
 * path that changed to lead out of the scope or to a classified file is refused that way, and
 * is the policy's to leave out). Callers name the other reasons they count themselves.
 */
export function unreadableReason(error: unknown): string | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== "string" || GONE.has(code)) return null;
  return ERRNO_TEXT[code] ?? code;
}

/**
 * Why a symbolic link (at `linkPath`) could not be followed to see where it leads: a loop, or its
 * own path too long to read it by; null for any other failure. A link whose way passes through a
 * directory that cannot be searched may lead out of the scope, where the policy leaves it out
 * without a word; one inside the scope that cannot be searched is counted where the walk meets it.
 */
export function linkFailureReason(error: unknown, linkPath: string): string | null {
  // A link whose own path is longer than the system reads a link by, deep in a tree whose
  // directories could still be listed: left out without a word, as a too-deep directory was.
  // Judged on its own path alone (where it leads was never read): a long target out of the scope
  // is the policy's to leave out, and says nothing.
  const ownBytes = Buffer.byteLength(linkPath);
  if ((error as NodeJS.ErrnoException | null)?.code === "ENAMETOOLONG" && ownBytes >= PATH_MAX_BYTES) {
    return `its path is ${ownBytes} bytes, more than the system lets a program read a link by`;
  }
  // One that kept changing as it was followed is an entry swapped while the tree was walked: not counted. One that
  // leads out of the scope is the policy's to leave out, whatever failed out there (a loop, a directory it may not search).
  return error instanceof PathResolutionError && !(error instanceof PathKeptChanging) && !(error instanceof LeadsOutside) ? "a loop of symbolic links" : null;
}

/** The most bytes a path the system opens may have, its closing NUL included (PATH_MAX on Linux). */
const PATH_MAX_BYTES = 4096;

/** A long path as its first and last characters, for a message. */
export function shortened(named: string): string {
  return named.length <= 200 ? named : `${named.slice(0, 100)}…(${named.length - 180} characters)…${named.slice(-80)}`;
}
