// The package.json files a confined command (--confine-commands) could turn into a launcher of
// its own for the user's next `npx tacit`, which runs a project's own bin named tacit before the
// installed tacit (launch-files.ts). A confined `sh` rewrote the project's package.json to declare
// `"bin": { "tacit": "payload.js" }`, and the next `npx tacit`, as the README registers tacit with
// MCP clients, ran payload.js with the user's full authority, unconfined. A package.json cannot be
// kept read-only (npm install, run confined, changes it), so each is read before the command and
// judged after it as tacit's file API judges a script's write (tacitBinChange): one that came to
// declare a program named tacit is put back as it was, and the command's stderr says so.

import { closeSync, constants, lstatSync, openSync, realpathSync, renameSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { type ManifestText, readManifest, tacitBinChange, TOO_LONG } from "../launch-files.js";
import { printable } from "../printable.js";
import { asideName } from "./aside-name.js";

interface Watched {
  file: string;
  /** Where its directory really was before the command: a directory swapped for a link meanwhile is not written through. */
  realDir: string;
  before: ManifestText;
  /** For one too long to read (TOO_LONG): its identity and times before the command, to tell whether the command changed it. */
  stamp: string | null;
}

/** A file's device, inode, size and change times; null for none. */
function stampOf(file: string): string | null {
  let stat;
  try {
    // ENOTDIR or ELOOP (a directory on the way made a file or a link by the command) as none: no throwIfNoEntry for those.
    stat = lstatSync(file, { bigint: true });
  } catch {
    return null;
  }
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

/**
 * Reads each of `files` (package.json paths; one that does not exist counts as none) before the
 * command, and returns what to do once it has ended: put back each that came to declare a program
 * named tacit, and say so (or "" where none did).
 */
export function watchLaunchManifests(files: readonly string[]): () => string {
  const watched: Watched[] = [];
  for (const file of new Set(files)) {
    let realDir: string;
    try {
      realDir = realpathSync.native(path.dirname(file));
    } catch {
      continue; // No directory: nothing npx would read there now.
    }
    const before = readManifest(file);
    watched.push({ file, realDir, before, stamp: before === TOO_LONG ? stampOf(file) : null });
  }
  return () => {
    const notes: string[] = [];
    for (const { file, realDir, before, stamp } of watched) {
      // One too long to judge that the command left as it was: nothing to put back (it was removed
      // before, whatever the command did, as its change could not be judged).
      if (before === TOO_LONG && stamp !== null && stampOf(file) === stamp) continue;
      const after = readManifest(file);
      if (after === null || tacitBinChange(before, after === TOO_LONG ? TOO_LONG : after) === null) continue;
      notes.push(putBack(file, realDir, before));
    }
    if (notes.length === 0) return "";
    return (
      `\n[tacit: the command made ${notes.join(", ")} declare a program named tacit (in bin, or through directories.bin), which the ` +
      "next `npx tacit` there runs instead of the installed tacit, with the user's full authority. A confined command may not do that; " +
      "change other fields of package.json]\n"
    );
  };
}

/** Puts `file` back as `before` (none: removed), and says what was done. Not through a directory that now leads elsewhere. */
function putBack(file: string, realDir: string, before: ManifestText): string {
  const shown = printable(file);
  try {
    if (realpathSync.native(path.dirname(file)) !== realDir) return `${shown} (its directory now leads elsewhere: tacit left it; remove it before you run npx there)`;
    if (before === TOO_LONG) {
      // No copy was kept to put back: set aside, where npx does not read it, rather than removed.
      const aside = asideName(file);
      renameSync(file, aside);
      return `${shown} (it is too long for tacit to keep a copy of, so tacit moved it to ${printable(aside)}: check that it declares no program named tacit, then move it back)`;
    }
    // The link or file the command left, not what a link leads to.
    if (lstatSync(file, { throwIfNoEntry: false }) !== undefined) rmSync(file, { force: true });
    if (before === null) return `${shown} (tacit removed it: there was none before)`;
    // A new file (O_EXCL: no link followed), as npm writes it.
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      writeSync(fd, before);
    } finally {
      closeSync(fd);
    }
    return `${shown} (tacit put back what it held before the command)`;
  } catch (error) {
    return `${shown} (tacit could not put it back: ${printable((error as Error).message)}; remove it before you run npx there)`;
  }
}
