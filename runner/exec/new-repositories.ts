// The git repositories a confined command (--confine-commands) made in the roots where there was
// none. A repository's configuration and hooks are kept read-only where one exists (confinement.ts,
// gitControls), and tacit's file API refuses to make a `.git` anywhere, but a confined `sh` could
// `git init` a directory and set a core.fsmonitor that git runs, with the user's full authority and
// unconfined, at their next `git status` there, or at once when a shell prompt that shows git's
// state is opened in that directory. A name that does not exist cannot be covered, so once the
// command has ended:
//   - each `.git` it made where there was none (a directory, a file naming a git directory
//     elsewhere, or a link) is set aside as `.git.tacit-unjudged`, where git does not look for it
//     from the directory around it (and a directory's configuration and hooks, as below: git run
//     inside it takes it for a bare repository);
//   - each directory that has become a repository by its shape (see isRepository: a bare one, as
//     `git init --bare` makes, which git takes for a repository when run inside it) has its
//     configuration, hooks and commondir set aside the same way.
// Kept for the user to judge (a `git init` or `git clone` the agent meant), never run.
//
// Found from the walk before the command: a directory whose change time, inode and device are
// the same has the entries it had (a name made in it sets its change time), and a `.git` is the
// one it had only by its identity (see gitIdentity), not its name; each other one is
// listed again, and each directory in it that the walk did not know is looked through whole (the
// command made it, or moved it there). Directories under node_modules too: git runs there, as the
// `git status` of the project around them runs in each submodule it has in its index (a confined
// `sh` made node_modules/evil a repository with a core.fsmonitor and added it to the project's
// index as a submodule, which it may write, and the user's next `git status` in the project ran it).

import { chmodSync, type Dirent, lstatSync, readdirSync, realpathSync, renameSync } from "node:fs";
import path from "node:path";
import { printable } from "../printable.js";
import { asideName, inOwnersDirectory, isPermissionDenied, openToOwner } from "./aside-name.js";
import { mayHoldNotUtf8, notUtf8Names, shownName } from "./not-utf8-names.js";
import { isRepository, REPOSITORY_CONTROLS } from "./repository-shape.js";

/** A directory as the walk before the command found it. */
export interface WalkedDirectory {
  /** Its real path. */
  dir: string;
  /**
   * Whether its entries may have changed since: its change time, inode or device is not what the
   * walk found, or it cannot be stat'ed now (confinement.ts, sameStamp: gone, or a directory on the
   * way made a file or a loop of links by the command).
   */
  changed(): boolean;
  /** The identities (see gitIdentity) of its entries named `.git` (in any case) then. */
  gits: readonly string[];
  /** Whether it was a repository's directory then (see isRepository). */
  wasRepository: boolean;
  /** As one, the identities (see gitIdentity) of its configuration, hooks and commondir then. */
  controls: readonly string[];
}

const GIT = ".git";

/**
 * Returns what to do once the command has ended: set aside each `.git` it made in `walked` or in a
 * directory it made there, and the configuration and hooks of each directory it made a
 * repository, and say so for its stderr ("" where it made none).
 */
export function newRepositoriesSetAside(walked: readonly WalkedDirectory[]): () => string {
  return () => {
    const known = new Set(walked.map(({ dir }) => dir));
    const notes: string[] = [];
    const pending: string[] = [];
    /** Sets aside what in `dir` makes a repository git would run from, and queues the directories to look through. */
    const judge = (dir: string, entries: Dirent[], before: WalkedDirectory | null): void => {
      const names = new Set(entries.map((entry) => entry.name.toLowerCase()));
      const repository = isRepository(dir, names);
      const becameRepository = !(before?.wasRepository ?? false) && repository;
      // A repository by its shape alone (not a .git, nor in one: its .git is judged by its identity)
      // whose configuration, hooks or commondir is not one it had: another tacit run's command made
      // it (a bare remote.git) and this command's walk saw it, that run set them aside, and this
      // command made them again. Left, the user's next push to it ran its pre-receive.
      const replaced = (full: string): boolean =>
        before !== null && before.wasRepository && repository && !dir.split(path.sep).some((part) => part.toLowerCase() === GIT) && !before.controls.includes(gitIdentity(full) ?? "");
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        const name = entry.name.toLowerCase();
        if (name === GIT) {
          // The one that was there (not one made in its place: another tacit run's command set aside the
          // .git its command made, which this one's walk had seen, and this command made it again).
          if (before !== null && before.gits.includes(gitIdentity(full) ?? "")) continue;
          const aside = setAside(full, notes);
          // Set aside, a repository's directory is still one by its shape where git is run inside it: its configuration and hooks too.
          if (aside !== null && entry.isDirectory()) pending.push(aside);
        } else if (REPOSITORY_CONTROLS.has(name) && (becameRepository || replaced(full))) {
          setAside(full, notes);
        } else if (entry.isDirectory() && !known.has(full)) {
          pending.push(full);
        }
      }
    };
    // The directories whose owner's read and search permissions this check gave back to list them, and their modes, put back after.
    const opened: Array<{ dir: string; mode: number }> = [];
    const renamed: string[] = [];
    try {
      for (const before of walked) {
        if (!before.changed()) continue;
        // Not through a directory swapped for a link: what it leads to was not walked, and may lie outside the roots.
        if (!isRealDirectory(before.dir)) continue;
        judge(before.dir, entriesOf(before.dir, notes, opened, renamed), before);
      }
      // The directories the command made (or moved into the roots' walked directories): every repository in them is new here.
      for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) judge(dir, entriesOf(dir, notes, opened, renamed), null);
    } finally {
      for (const { dir, mode } of opened.reverse()) {
        try {
          chmodSync(dir, mode);
        } catch {
          // Gone since.
        }
      }
    }
    const renamedNote =
      renamed.length === 0
        ? ""
        : `\n[tacit: the command made directories whose names are not UTF-8, which tacit cannot look in for a git repository (git would run ` +
          `what one's configuration names, at the user's next git status): ${renamed.join(", ")}; give directories UTF-8 names]\n`;
    if (notes.length === 0) return renamedNote;
    return (
      renamedNote +
      `\n[tacit: the command made a git repository where there was none: ${notes.join(", ")}. git runs what a repository's ` +
      "configuration and hooks name (core.fsmonitor at every git status, in a shell prompt too), with the user's full authority, " +
      "outside the sandbox, and a confined command may not leave one for it to run; ask the user to make the repository (git init, " +
      "git clone), or to check what was set aside and move it back]\n"
    );
  };
}

/**
 * What tells a `.git` from one made in its place: its device, inode and birth time (an inode number
 * freed by a removal is given to the next file made; its birth time is new). null: there is none.
 */
export function gitIdentity(file: string): string | null {
  try {
    const stat = lstatSync(file, { bigint: true });
    return `${stat.dev}:${stat.ino}:${stat.birthtimeNs}`;
  } catch {
    return null;
  }
}

function isRealDirectory(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory() && realpathSync.native(dir) === dir;
  } catch {
    return false;
  }
}

/**
 * `dir`'s entries; where it cannot be listed, none, and a note that says so. A command that runs as
 * the directory's owner may have taken the owner's read permission off it (`chmod 311 A` over
 * A/B/.git, still reached by `cd A/B`, or by the project's `git status` where the index names A/B a
 * submodule), which kept tacit, run as that user too, from listing it: it gets the owner's rwx
 * until the check ends (`opened`, put back then).
 */
function entriesOf(dir: string, notes: string[], opened: Array<{ dir: string; mode: number }>, renamed: string[]): Dirent[] {
  try {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      if (!isPermissionDenied(error)) throw error;
      opened.push({ dir, mode: openToOwner(dir) });
      entries = readdirSync(dir, { withFileTypes: true });
    }
    // A name that is not UTF-8 is read back with U+FFFD in its place, a path that leads nowhere:
    // nothing in such a directory was looked at. A confined `sh` made "\xff" a repository with a
    // core.fsmonitor and a submodule of the project, and the user's next git status ran it. Each such
    // directory is given a UTF-8 name (git no longer finds it where the index says), then judged.
    if (mayHoldNotUtf8(entries) && renameNotUtf8Directories(dir, renamed)) entries = readdirSync(dir, { withFileTypes: true });
    return entries;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Gone since (the command removed it, or this check set it aside): nothing in it to set aside.
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    notes.push(`${printable(dir)} (tacit could not look in it for one: ${printable((error as Error).message)}; look for a .git in it before you run git there)`);
    return [];
  }
}

/** Renames each directory in `dir` whose name is not UTF-8 to one that is, noting each in `renamed`; whether any was. */
function renameNotUtf8Directories(dir: string, renamed: string[]): boolean {
  let any = false;
  for (const name of notUtf8Names(dir)) {
    const raw = Buffer.concat([Buffer.from(`${dir}/`), name]);
    const shown = `${printable(dir)}/${shownName(name)}`;
    try {
      if (!lstatSync(raw).isDirectory()) continue;
      const aside = asideName(path.join(dir, "not-utf8-name"));
      inOwnersDirectory(aside, () => renameSync(raw, aside));
      renamed.push(`${shown} (renamed ${printable(aside)})`);
      any = true;
    } catch (error) {
      renamed.push(`${shown} (tacit could not rename it: ${printable((error as Error).message)}; look for a .git in it before you run git there)`);
    }
  }
  return any;
}

/** Moves `made` aside, to a name git does not look for, and notes where; returns that name (null: it could not be moved). */
function setAside(made: string, notes: string[]): string | null {
  const shown = printable(made);
  try {
    const aside = asideName(made);
    // Where the command took the write permission off the directory, given back for the rename (see inOwnersDirectory).
    inOwnersDirectory(made, () => renameSync(made, aside));
    notes.push(`${shown} (set aside as ${printable(aside)})`);
    return aside;
  } catch (error) {
    notes.push(`${shown} (tacit could not set it aside: ${printable((error as Error).message)}; remove it before you run git there)`);
    return null;
  }
}
