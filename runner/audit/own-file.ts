// Reading a small file that only its owner may change (the signing key, the logs' anchors):
// checked on the descriptor that is read, so the file checked is the file read.

import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";

/** What is wrong with such a file; the caller says it in its own words. */
export type OwnFileProblem =
  | { kind: "unreadable"; message: string }
  | { kind: "not-a-file" }
  | { kind: "mode"; mode: number }
  | { kind: "owner" };

/**
 * The text of `file`, or null when it does not exist. `forbidden`: mode bits that must be
 * clear (0o077: nobody else may even read it; 0o022: nobody else may write it). Anything else
 * wrong is thrown as `refuse` makes it.
 */
export function readOwnFile(file: string, forbidden: number, refuse: (problem: OwnFileProblem) => Error): string | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw refuse({ kind: "unreadable", message: (error as Error).message });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse({ kind: "not-a-file" });
    if (process.platform !== "win32" && (stat.mode & forbidden) !== 0) throw refuse({ kind: "mode", mode: stat.mode & 0o777 });
    if (typeof process.getuid === "function" && stat.uid !== process.getuid()) throw refuse({ kind: "owner" });
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}
