// Where tacit sets aside what a confined command left that it cannot judge or keep: beside it,
// under a name that nothing reads (npx reads package.json, git looks for .git); and how it changes
// a directory the command took the owner's write permission off.

import { chmodSync, lstatSync } from "node:fs";
import path from "node:path";

/** A name beside `file` that nothing has yet: `<file>.tacit-unjudged`, then .1, .2, … */
export function asideName(file: string): string {
  const base = `${file}.tacit-unjudged`;
  for (let n = 0; ; n++) {
    const name = n === 0 ? base : `${base}.${n}`;
    if (lstatSync(name, { throwIfNoEntry: false }) === undefined) return name;
  }
}

/**
 * Runs `act` (a removal or rename of `made`, what a command left). A command that runs as the
 * directory's owner may have taken the owner's write permission off it (`chmod a-w .git`), which
 * keeps tacit, run as that user too, from changing what it made there (EACCES): then `act` runs
 * again with the owner's rwx given to the directory for the while, its mode put back after.
 */
export function inOwnersDirectory(made: string, act: () => void): void {
  try {
    act();
    return;
  } catch (error) {
    if (!isPermissionDenied(error)) throw error;
  }
  const dir = path.dirname(made);
  const mode = openToOwner(dir);
  try {
    act();
  } finally {
    chmodSync(dir, mode);
  }
}

/** Whether `error` is a refusal for want of permission (EACCES, EPERM). */
export function isPermissionDenied(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "EACCES" || code === "EPERM";
}

/** Gives `dir` its owner's rwx, and returns its mode before, for the caller to put back. */
export function openToOwner(dir: string): number {
  const mode = lstatSync(dir).mode & 0o7777;
  chmodSync(dir, mode | 0o700);
  return mode;
}
