// Reading (and replacing) a small file that only its owner may change (the signing key, the logs' anchors, the
// remembered approvals): checked on the descriptor that is read, so the file checked is the file
// read; a link is not followed (O_NOFOLLOW: another user's link would lead to a file of theirs);
// and the directories it lies in, up to tacit's home, must be the user's and writable by nobody
// else (or sticky, like /tmp), since whoever can write a directory can replace what is in it.

import { closeSync, constants, fstatSync, fsyncSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { isWithin } from "../fs/containment.js";
import { randomToken } from "../random-token.js";

/** What is wrong with such a file; the caller says it in its own words (ownFileProblemText says it for it). */
export type OwnFileProblem =
  | { kind: "unreadable"; message: string }
  | { kind: "not-a-file" }
  | { kind: "link" }
  | { kind: "mode"; mode: number }
  | { kind: "owner"; uid: number }
  | { kind: "directory-owner"; directory: string; uid: number }
  | { kind: "directory-mode"; directory: string; mode: number };

const uid = (): number | null => (typeof process.getuid === "function" ? process.getuid() : null);

/** The directories `file` lies in that must be the user's: its own, and each above it up to `home` when it lies there. */
function directoriesOf(file: string, home: string | null): string[] {
  const dirs = [path.dirname(file)];
  if (home === null || !isWithin(file, home)) return dirs;
  for (let at = dirs[0]!; at !== home && isWithin(at, home) && path.dirname(at) !== at; ) dirs.push((at = path.dirname(at)));
  return dirs;
}

/** The first problem with the directories `file` lies in, or null. */
function directoryProblem(file: string, home: string | null): OwnFileProblem | null {
  if (process.platform === "win32") return null;
  for (const directory of directoriesOf(path.resolve(file), home === null ? null : path.resolve(home))) {
    let stat;
    try {
      stat = statSync(directory);
    } catch {
      return null; // No directory: no file either (the open says so).
    }
    const me = uid();
    if (me !== null && stat.uid !== me && stat.uid !== 0) return { kind: "directory-owner", directory, uid: stat.uid };
    if ((stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0 /* not sticky */) return { kind: "directory-mode", directory, mode: stat.mode & 0o7777 };
  }
  return null;
}

/**
 * The text of `file`, or null when it does not exist. `forbidden`: mode bits that must be
 * clear (0o077: nobody else may even read it; 0o022: nobody else may write it). `home`: tacit's
 * home, when the file lies there: every directory from the file's up to it is checked. Anything
 * else wrong is thrown as `refuse` makes it.
 */
export function readOwnFile(file: string, forbidden: number, refuse: (problem: OwnFileProblem) => Error, home: string | null = null): string | null {
  const dirProblem = directoryProblem(file, home);
  if (dirProblem !== null) throw refuse(dirProblem);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") throw refuse({ kind: "link" });
    throw refuse({ kind: "unreadable", message: (error as Error).message });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse({ kind: "not-a-file" });
    const me = uid();
    if (me !== null && stat.uid !== me) throw refuse({ kind: "owner", uid: stat.uid });
    if (process.platform !== "win32" && (stat.mode & forbidden) !== 0) throw refuse({ kind: "mode", mode: stat.mode & 0o777 });
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * A problem said plainly, with the fix: `what` names the file ("the approvals file /x"),
 * `consequence` what tacit does about it ("its approvals are not used").
 */
export function ownFileProblemText(what: string, file: string, problem: OwnFileProblem, consequence: string): string {
  switch (problem.kind) {
    case "unreadable":
      return `cannot read ${what}: ${problem.message}; ${consequence}`;
    case "not-a-file":
      return `${what} is not a regular file, so ${consequence}; remove it (rm -r ${file})`;
    case "link":
      return `${what} is a symbolic link, so ${consequence} (a link can lead to a file someone else controls); remove it (rm ${file}) and let tacit write a new one`;
    case "mode":
      return `${what} can be written by others (mode ${problem.mode.toString(8)}), so ${consequence}; remove it, or chmod 600 ${file} if you trust its content`;
    case "owner":
      return `${what} belongs to another user (uid ${problem.uid}), so ${consequence}; remove it, or chown ${uid() ?? "$(id -u)"} ${file} if you made it`;
    case "directory-owner":
      return (
        `${what} lies in ${problem.directory}, which belongs to another user (uid ${problem.uid}), so ${consequence}; set TACIT_HOME to a ` +
        `directory of your own, or chown ${uid() ?? "$(id -u)"} ${problem.directory} if it is yours`
      );
    case "directory-mode":
      return (
        `${what} lies in ${problem.directory}, which others can write to (mode ${problem.mode.toString(8)}) and so could have replaced it, so ` +
        `${consequence}; chmod go-w ${problem.directory} (tacit keeps its home 700) if you trust what is in it`
      );
  }
}

/**
 * Replaces `file` with `text` whole: written to a new owner-only file beside it (never one that
 * exists: a planted link is not followed), synced unless `sync` is false, then renamed over it,
 * so a reader sees the old text or the new, never part of one. The caller holds the file's lock.
 */
export function replaceOwnFile(file: string, text: string, { sync = true }: { sync?: boolean } = {}): void {
  const temporary = `${file}.${randomToken(6)}.tmp`;
  const fd = openSync(temporary, "wx", 0o600);
  try {
    writeSync(fd, text);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, file);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // already gone: the rename's error is the one to tell
    }
    throw error;
  }
}
