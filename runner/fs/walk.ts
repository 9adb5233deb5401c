// Listing directories inside a scope. An entry that resolves outside the scope's root (a
// symlink pointing out) is left out, never followed; symlinked directories are listed but
// not descended into, so a walk cannot loop or wander.

import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { inVerifiedDirectory } from "./checked-open.js";
import { insideOf, isInProcfs, isWithin, resolveLinkIn } from "./containment.js";
import { type LeftOut, LeftOutEntries, linkFailureReason, shortened, SWAPPED_DIRECTORY } from "./left-out.js";

/**
 * The most characters of paths a listing holds: what children(), walk() and find() return,
 * and the names of the directories a walk holds on its way down. Each entry is counted before
 * its path is built, and past this the listing is refused: unbounded, a tree of many long
 * paths (30,000 files of 3,800 characters) filled the host's heap while it was listed, and
 * every session of a tacit serve died with it.
 */
export const LISTING_LIMIT_CHARS = 16 * 1024 * 1024;
/** What an entry costs beyond its characters (the object, the array slot). */
const ENTRY_OVERHEAD_CHARS = 32;

export class ListingLimitError extends Error {
  override name = "ListingLimitError";
}

/**
 * A directory whose path is longer than the system takes (PATH_MAX, 4096 bytes on Linux): tacit
 * opens every directory by its path, so nothing below it can be listed or searched. Below the
 * directory a call was asked about, it is left out with the call's warning (see left-out.ts),
 * as an unreadable one is: failing the whole call, a find("/") failed for one deep tree
 * anywhere on the machine. Left out without a word, a tree 5,000 directories deep walked to
 * 2,041 entries, and find() and grepRecursive() found nothing in its depths, and the script
 * was not told. The directory asked about itself fails the call with this error.
 */
export class PathTooLongError extends Error {
  override name = "PathTooLongError";
  constructor(named: string) {
    super(`${shortened(named)}: ${pathTooLongReason(named)}; nothing was returned. Walk or search a directory whose tree is less deep (or ask the user to shorten the tree)`);
  }
}

/** Why a directory whose path is too long to open is left out (see PathTooLongError). */
export function pathTooLongReason(named: string): string {
  return `its path is ${Buffer.byteLength(named)} bytes, more than the system lets a program open a directory by, so nothing below it can be listed or searched`;
}

/** Characters held at once by one listing or walk, within LISTING_LIMIT_CHARS. */
export class ListingBudget {
  private held = 0;

  constructor(private readonly what: string) {}

  take(chars: number): void {
    this.held += chars;
    if (this.held > LISTING_LIMIT_CHARS) {
      throw new ListingLimitError(
        `more than ${LISTING_LIMIT_CHARS} characters of ${this.what}; list a smaller directory (a subdirectory's children() or walk()), ` +
          "or search it with find() and a narrower glob",
      );
    }
  }

  give(chars: number): void {
    this.held -= chars;
  }
}

/** The named paths of `entries` that are `wanted`, within LISTING_LIMIT_CHARS, counted as they come. */
export function namedPaths(entries: Iterable<WalkEntry>, wanted: (named: string) => boolean = () => true, maxEntries = Number.POSITIVE_INFINITY): string[] {
  const budget = new ListingBudget("paths");
  const found: string[] = [];
  let seen = 0;
  for (const entry of entries) {
    if (++seen > maxEntries) throw new TooManyEntries();
    if (!wanted(entry.named)) continue;
    budget.take(entry.named.length + ENTRY_OVERHEAD_CHARS);
    found.push(entry.named);
  }
  return found;
}

export interface ListRequest {
  dir: string;
  realDir: string;
  realRoot: string;
  recursive: boolean;
  /** The directory must be opened at `realDir` itself (the approval gate judged the action by it): see PathChanged. */
  exact?: boolean;
}

/**
 * A directory the approval gate judged a listing or search by was somewhere else when it was
 * opened (a link swapped on the way meanwhile): the whole listing or search is refused.
 */
export class PathChanged extends Error {
  override name = "PathChanged";
}

/**
 * The directory a listing or search was asked about was not where its path had been resolved
 * when it was opened: it, or a directory on the way to it, was swapped for a link (or for
 * another directory, or moved) meanwhile. The whole call is refused. Checked only to be inside
 * the scope, a directory swapped for another inside it was listed under the first one's name,
 * and one swapped for a link out failed with a plain Error that named the path twice.
 */
export class DirectoryChanged extends Error {
  override name = "DirectoryChanged";
}

/** What the script is told of a DirectoryChanged: the path it gave, once; what happened; what to do. */
export function directoryChangedText(requested: string): string {
  return (
    `${requested}: refused: the directory changed while it was being opened (it, or a directory on the way to it, was swapped for a ` +
    "symbolic link or another directory, or moved); nothing was listed or searched. Ask again once nothing is changing the tree, " +
    "or list or search a directory that stays put"
  );
}

/** Paths a listing or search found, and the entries it could not read (see left-out.ts). */
export interface FoundPaths {
  paths: string[];
  leftOut: LeftOut;
}

/** A directory's children, or every entry below it (walk), as named paths; TooManyEntries past `maxEntries`. */
export function listEntries(request: ListRequest, maxEntries = Number.POSITIVE_INFINITY): FoundPaths {
  const leftOut = new LeftOutEntries();
  const exact = request.exact === true;
  const entries = request.recursive
    ? walkTree(request.dir, request.realDir, request.realRoot, { exact, leftOut })
    : listChildren(request.dir, request.realDir, request.realRoot, leftOut, exact);
  return { paths: namedPaths(entries, () => true, maxEntries), leftOut: leftOut.summary() };
}

/** A listing stopped at its entry cap (namedPaths' maxEntries): the caller lists elsewhere. */
export class TooManyEntries extends Error {
  override name = "TooManyEntries";
}

export interface WalkEntry {
  /** The entry's path as the agent named it (under the scope root). */
  named: string;
  /** Where it really is: equal to realDir/name unless the entry is a symlink. */
  real: string;
  isDirectory: boolean;
  isSymlink: boolean;
}

/** A directory's entries as listed: names and types only, in name order. */
interface Listing {
  actualDir: string;
  names: Array<{ name: string; isDirectory: boolean; isSymlink: boolean }>;
  /** What it holds of its budget. */
  chars: number;
}

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * A directory below the top of a walk was not where its parent's listing put it when it was
 * opened: a directory on the way to it was swapped for a link (or moved) meanwhile. Left out,
 * and counted as swapped (see left-out.ts), as one swapped for a link itself is.
 */
class MovedWhileWalked extends Error {
  override name = "MovedWhileWalked";
}

/**
 * Lists the directory whose real location `realDir` the caller has checked, through its
 * descriptor, checked to be `realDir` itself: a directory swapped for a link (out of the scope,
 * or to another directory in it) between the check and the listing is not listed. The top one
 * of a call is refused (DirectoryChanged, or PathChanged where the gate judged it: `exact`); one
 * `below` it (reached through its parent's listing) is left out (MovedWhileWalked). Only names
 * are held; paths are built one entry at a time (see entriesOf).
 */
function listNames(dir: string, realDir: string, realRoot: string, budget: ListingBudget, exact = false, below = false): Listing {
  const inside = (actual: string): void => {
    if (exact && actual !== realDir) throw new PathChanged(`${dir}: the directory changed while it was being listed`);
    // Opened by its path, a directory swapped for a link to one inside the scope (the tree's own
    // root, say) was listed as if it were the directory listed before: a walk named paths that
    // never were (sub/steady, sub/sub/sub/…), and went round the same directories again.
    if (below && actual !== realDir) throw new MovedWhileWalked(`${dir}: the directory changed while it was being walked`);
    // The top one likewise: where its path was resolved, or nothing is listed. isWithin stands
    // behind it should a caller ever pass a realDir outside the root.
    if (actual !== realDir || !isWithin(actual, realRoot)) throw new DirectoryChanged(`${dir}: the directory changed while it was being listed`);
  };
  let chars = 0;
  try {
    // One below the top was a directory when its parent was listed: a link there now is not
    // followed (ELOOP), so where it leads (a directory, none, one that cannot be read) changes nothing.
    return inVerifiedDirectory(realDir, inside, (opened, actualDir) => {
      const names: Listing["names"] = [];
      for (const dirent of readdirSync(opened, { withFileTypes: true })) {
        const cost = dirent.name.length + ENTRY_OVERHEAD_CHARS;
        chars += cost;
        budget.take(cost);
        names.push({ name: dirent.name, isDirectory: dirent.isDirectory(), isSymlink: dirent.isSymbolicLink() });
      }
      return { actualDir, names: names.sort(byName), chars };
    }, below ? "refuse" : "follow", "list");
  } catch (error) {
    budget.give(chars);
    // The caller found a directory at `realDir`; a file, a link to one or a loop of links there now was swapped in.
    if (!below && isSwappedForNonDirectory(error)) throw topDirectoryChanged(dir, exact, "listed");
    throw error;
  }
}

/** The refusal of a call whose top directory was not where its path was resolved once opened: PathChanged where the gate judged it (`exact`). */
export function topDirectoryChanged(named: string, exact: boolean, doing: "listed" | "searched"): PathChanged | DirectoryChanged {
  const changed = `${named}: the directory changed while it was being ${doing}`;
  return exact ? new PathChanged(changed) : new DirectoryChanged(changed);
}

/**
 * An error of opening, as a directory, a path found to be one a moment before, that says
 * something else is there now: not a directory (a file, a link to one), or a loop of links.
 * (A directory gone, ENOENT, is told as such: there is no directory of that name.)
 */
export function isSwappedForNonDirectory(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "ENOTDIR" || code === "ELOOP";
}

/**
 * A listing's entries, built one at a time. An entry that resolves outside the scope's root
 * (a symlink pointing out) is left out, never followed; a link that cannot be followed to see
 * where it leads (a loop) is left out and counted in `leftOut`.
 */
function* entriesOf(dir: string, listing: Listing, realRoot: string, leftOut: LeftOutEntries): Generator<WalkEntry> {
  for (const { name, isDirectory, isSymlink } of listing.names) {
    const named = path.join(dir, name);
    if (!isSymlink) {
      yield { named, real: path.join(listing.actualDir, name), isDirectory, isSymlink: false };
      continue;
    }
    let real: string;
    try {
      real = resolveLinkIn(listing.actualDir, name, insideOf(realRoot));
    } catch (error) {
      // A link loop (or one too deep to read): nothing the listing can safely report as an entry, but the script is told.
      const reason = linkFailureReason(error, path.join(listing.actualDir, name));
      if (reason !== null) leftOut.addLeaf(named, reason);
      continue;
    }
    if (!isWithin(real, realRoot)) continue;
    let linksToDirectory = false;
    try {
      linksToDirectory = statSync(real).isDirectory();
    } catch {
      // A dead link inside the root: listed as a (missing) file.
    }
    yield { named, real, isDirectory: linksToDirectory, isSymlink: true };
  }
}

/** The direct children of `dir`, whose real location `realDir` the caller has checked, in name order. */
export function listChildren(dir: string, realDir: string, realRoot: string, leftOut: LeftOutEntries, exact = false): Iterable<WalkEntry> {
  return entriesOf(dir, listNames(dir, realDir, realRoot, new ListingBudget("names in the directory"), exact), realRoot, leftOut);
}

export interface WalkOptions {
  /** Leaves an entry and its subtree out. */
  prune?: (entry: WalkEntry) => boolean;
  budget?: ListingBudget;
  /** The top directory must be opened at `realDir` itself (see PathChanged); the ones below are reached through it. */
  exact?: boolean;
  /** Where the entries below the top that could not be read are counted. */
  leftOut: LeftOutEntries;
}

/**
 * Every entry below `dir`, depth first, in name order. The names of the directories on the
 * way down are held within one budget, each given back once walked: past it the walk is
 * refused (ListingLimitError). A directory below `dir` that cannot be read is left out, as
 * `find` does, and counted in `leftOut`; `dir` itself that cannot be read fails the walk, as
 * it fails children(): an empty answer would say it holds nothing.
 */
export function walkTree(dir: string, realDir: string, realRoot: string, options: WalkOptions): Generator<WalkEntry> {
  return walkBelow(dir, realDir, realRoot, {
    prune: options.prune ?? (() => false),
    budget: options.budget ?? new ListingBudget("names in the directories being walked"),
    leftOut: options.leftOut,
  }, options.exact === true, true);
}

function* walkBelow(
  dir: string,
  realDir: string,
  realRoot: string,
  options: Required<Omit<WalkOptions, "exact">>,
  exact: boolean,
  top: boolean,
): Generator<WalkEntry> {
  let listing: Listing;
  try {
    listing = listNames(dir, realDir, realRoot, options.budget, exact, !top);
  } catch (error) {
    if (error instanceof ListingLimitError || error instanceof PathChanged || error instanceof DirectoryChanged) throw error;
    if (error instanceof MovedWhileWalked) {
      options.leftOut.addDirectory(dir, SWAPPED_DIRECTORY);
      return;
    }
    if ((error as NodeJS.ErrnoException).code === "ENAMETOOLONG") {
      if (top) throw new PathTooLongError(dir);
      options.leftOut.addDirectory(dir, pathTooLongReason(dir));
      return;
    }
    if (top) throw error;
    options.leftOut.addFailure(dir, error);
    return;
  }
  try {
    for (const entry of entriesOf(dir, listing, realRoot, options.leftOut)) {
      if (options.prune(entry)) continue;
      yield entry;
      // Not into the kernel's process file system (proc-mounts.ts): scripts are refused it, and
      // a walk of "/" listed every process's files, tacit's own among them.
      if (entry.isDirectory && !entry.isSymlink && !isInProcfs(entry.real)) yield* walkBelow(entry.named, entry.real, realRoot, options, false, false);
    }
  } finally {
    options.budget.give(listing.chars);
  }
}
