// Listing directories inside a scope. An entry that resolves outside the scope's root (a
// symlink pointing out) is left out, never followed; symlinked directories are listed but
// not descended into, so a walk cannot loop or wander.

import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { inVerifiedDirectory } from "./checked-open.js";
import { isWithin, resolveReal } from "./containment.js";

export interface WalkEntry {
  /** The entry's path as the agent named it (under the scope root). */
  named: string;
  /** Where it really is: equal to realDir/name unless the entry is a symlink. */
  real: string;
  isDirectory: boolean;
  isSymlink: boolean;
}

/**
 * The direct children of `dir`, whose real location `realDir` the caller has checked. The
 * directory is opened and listed through its descriptor, checked to be inside the root: a
 * directory swapped for a link out between the check and the listing is refused, not listed.
 */
export function listChildren(dir: string, realDir: string, realRoot: string): WalkEntry[] {
  const inside = (actual: string): void => {
    if (!isWithin(actual, realRoot)) throw new Error(`${dir}: the directory changed while it was being listed and now leads outside the scope`);
  };
  return inVerifiedDirectory(realDir, inside, (opened, actualDir) => listOpened(dir, opened, actualDir, realRoot));
}

function listOpened(dir: string, opened: string, actualDir: string, realRoot: string): WalkEntry[] {
  const entries: WalkEntry[] = [];
  for (const dirent of readdirSync(opened, { withFileTypes: true })) {
    const named = path.join(dir, dirent.name);
    if (!dirent.isSymbolicLink()) {
      entries.push({ named, real: path.join(actualDir, dirent.name), isDirectory: dirent.isDirectory(), isSymlink: false });
      continue;
    }
    let real: string;
    try {
      real = resolveReal(path.join(actualDir, dirent.name));
    } catch {
      continue; // A link loop: nothing the listing can safely report.
    }
    if (!isWithin(real, realRoot)) continue;
    let isDirectory = false;
    try {
      isDirectory = statSync(real).isDirectory();
    } catch {
      // A dead link inside the root: listed as a (missing) file.
    }
    entries.push({ named, real, isDirectory, isSymlink: true });
  }
  return entries.sort((a, b) => (a.named < b.named ? -1 : a.named > b.named ? 1 : 0));
}

/**
 * Every entry below `dir`, depth first, in name order. `prune` leaves an entry and its
 * subtree out (grepRecursive uses it to skip classified paths without opening them).
 */
export function* walkTree(
  dir: string,
  realDir: string,
  realRoot: string,
  prune: (entry: WalkEntry) => boolean = () => false,
): Generator<WalkEntry> {
  let children: WalkEntry[];
  try {
    children = listChildren(dir, realDir, realRoot);
  } catch {
    return; // An unreadable directory is left out, as `find` does.
  }
  for (const entry of children) {
    if (prune(entry)) continue;
    yield entry;
    if (entry.isDirectory && !entry.isSymlink) yield* walkTree(entry.named, entry.real, realRoot, prune);
  }
}
