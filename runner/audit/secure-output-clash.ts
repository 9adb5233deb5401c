// The secure output and the audit log must be two files. The secure output receives the
// plaintext of every classified value a script prints; the audit log holds digests only, and is
// kept, copied off the machine and shown to check what ran. A security review gave both flags
// one file: the script's classified canary went into the log file in plaintext (and the run's
// own events never did: the log failed closed only as the script ended). And a later run given
// an earlier run's audit log as --secure-output appended the canary to that log, exit 0, with no
// word. Both are refused before anything runs.

import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { realPlace } from "./real-place.js";
import { printable } from "../printable.js";

/** How every audit log begins: its first line's opening, as the writer writes it (line.ts, lineText). */
const AUDIT_LOG_START = '{"seq":1,"time":"';

/** Why a run may not use `secureOutput` beside `auditLog` (either may be unset), or null. */
export function secureOutputClash(secureOutput: string | null, auditLog: string | null): string | null {
  if (secureOutput === null) return null;
  const shown = printable(secureOutput);
  if (auditLog !== null && sameFile(secureOutput, auditLog)) {
    return (
      `--secure-output and --audit-log name the same file (${shown}${auditLog === secureOutput ? "" : ` and ${printable(auditLog)}`}): ` +
      "the secure output receives the plaintext of every classified value a script prints, and the audit log must never hold " +
      "plaintext (it holds digests only, and is kept, copied and shown to check what ran); nothing was run. Give each its own " +
      "file (config libraryConfig.secureOutput and auditLog)"
    );
  }
  if (beginsAsAuditLog(secureOutput)) {
    return (
      `the secure output ${shown} is a tacit audit log (its first line is an audit log's first line): tacit would append the ` +
      "plaintext of classified values to it, and an audit log must never hold plaintext (it holds digests only, and is kept, " +
      "copied and shown to check what ran); nothing was run. Give --secure-output (config libraryConfig.secureOutput) a file of its own"
    );
  }
  return null;
}

/** Whether two names lead to one file: the same place, or (both there) the same device and inode. */
function sameFile(a: string, b: string): boolean {
  if (realPlace(a) === realPlace(b)) return true;
  try {
    const [one, other] = [statSync(a), statSync(b)];
    return one.dev === other.dev && one.ino === other.ino;
  } catch {
    return false;
  }
}

/**
 * Whether `file` is a regular file that starts as an audit log. Not following a link, nor waiting on a
 * FIFO: the secure output refuses both itself (secure-sink.ts), so neither can take its plaintext.
 */
function beginsAsAuditLog(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isFile()) return false;
    const start = Buffer.alloc(AUDIT_LOG_START.length);
    let read = 0;
    for (let n = -1; read < start.length && n !== 0; read += n) n = readSync(fd, start, read, start.length - read, read);
    return read === start.length && start.toString("latin1") === AUDIT_LOG_START;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
