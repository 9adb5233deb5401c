// The git repositories a confined command (--confine-commands) made in the roots where there was
// none. A repository's configuration and hooks are kept read-only where one exists (confinement.ts,
// gitControls), and tacit's file API refuses to make a `.git` anywhere, but a confined `sh` could
// `mkdir sub/.git` and write a config whose core.fsmonitor git runs, with the user's full
// authority and unconfined, at their next `git status` there, or at once when a shell prompt that
// shows git's state is opened in that directory. A name that does not exist cannot be covered, so
// each `.git` the command made (a directory, a file naming a git directory elsewhere, or a link)
// is set aside once it has ended, as `.git.tacit-unjudged`, where git does not look for it: kept
// for the user to judge (a `git init` or `git clone` the agent meant), never run.
//
// Found from the walk before the command: a directory whose change time, inode and device are
// the same has the entries it had (a name made in it sets its change time); each other one is
// listed again, and each directory in it that the walk did not know is looked through whole (the
// command made it, or moved it there). Directories under node_modules are left alone, as for the
// package.json files npx reads (launch-manifests.ts): no one runs git there.

import { type Dirent, lstatSync, readdirSync, realpathSync, renameSync } from "node:fs";
import path from "node:path";
import { printable } from "../printable.js";
import { asideName } from "./aside-name.js";

/** A directory as the walk before the command found it. */
export interface WalkedDirectory {
  /** Its real path. */
  dir: string;
  ctimeNs: bigint;
  ino: bigint;
  dev: bigint;
  /** Whether it held an entry named `.git` (in any case) then. */
  hadGit: boolean;
}

const GIT = ".git";
const NODE_MODULES = "node_modules";

/**
 * Returns what to do once the command has ended: set aside each `.git` it made in `walked` or in a
 * directory it made there, and say so for its stderr ("" where it made none).
 */
export function newRepositoriesSetAside(walked: readonly WalkedDirectory[]): () => string {
  return () => {
    const known = new Set(walked.map(({ dir }) => dir));
    const notes: string[] = [];
    const pending: string[] = [];
    for (const before of walked) {
      if (before.dir.split(path.sep).includes(NODE_MODULES) || unchanged(before)) continue;
      // Not through a directory swapped for a link: what it leads to was not walked, and may lie outside the roots.
      if (!isRealDirectory(before.dir)) continue;
      const entries = entriesOf(before.dir, notes);
      for (const entry of entries) {
        const full = path.join(before.dir, entry.name);
        if (isGitName(entry.name)) {
          if (!before.hadGit) notes.push(setAside(full));
        } else if (entry.isDirectory() && !known.has(full) && entry.name !== NODE_MODULES) pending.push(full);
      }
    }
    // The directories the command made (or moved into the roots' walked directories): every `.git` in them is new here.
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
      for (const entry of entriesOf(dir, notes)) {
        const full = path.join(dir, entry.name);
        if (isGitName(entry.name)) notes.push(setAside(full));
        else if (entry.isDirectory() && entry.name !== NODE_MODULES) pending.push(full);
      }
    }
    if (notes.length === 0) return "";
    return (
      `\n[tacit: the command made a git repository where there was none: ${notes.join(", ")}. git runs what a repository's ` +
      "configuration and hooks name (core.fsmonitor at every git status, in a shell prompt too), with the user's full authority, " +
      "outside the sandbox, and a confined command may not leave one for it to run; ask the user to make the repository (git init, " +
      "git clone), or to check the configuration and hooks of one set aside and move it back]\n"
    );
  };
}

function unchanged(before: WalkedDirectory): boolean {
  const now = lstatSync(before.dir, { bigint: true, throwIfNoEntry: false });
  return now !== undefined && now.ctimeNs === before.ctimeNs && now.ino === before.ino && now.dev === before.dev;
}

function isRealDirectory(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory() && realpathSync.native(dir) === dir;
  } catch {
    return false;
  }
}

/** Git looks for `.git` as named; on a case-insensitive file system `.GIT` is that name too. */
function isGitName(name: string): boolean {
  return name.toLowerCase() === GIT;
}

/** `dir`'s entries; where it cannot be listed, none, and a note that says so. */
function entriesOf(dir: string, notes: string[]): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Gone since (the command removed it, or another step of this check moved it): nothing in it to set aside.
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    notes.push(`${printable(dir)} (tacit could not look in it for one: ${(error as Error).message}; look for a .git in it before you run git there)`);
    return [];
  }
}

/** Moves `made` aside, to a name git does not look for, and says where. */
function setAside(made: string): string {
  const shown = printable(made);
  try {
    const aside = asideName(made);
    renameSync(made, aside);
    return `${shown} (set aside as ${printable(aside)})`;
  } catch (error) {
    return `${shown} (tacit could not set it aside: ${(error as Error).message}; remove it before you run git there)`;
  }
}
