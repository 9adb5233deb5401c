// A lock file holding its owner's pid, created exclusively (exclusive-file.ts). A lock whose
// owner is dead (a crash) is stale and taken over, so it must lie where only tacit writes: a lock
// anyone else can make says nothing about who holds it or who crashed. The audit log's writer
// holds one in tacit's home for as long as it writes (two writers would break its chain); the
// approvals file holds one (FILE.lock, beside it in the home) around each read-modify-write (a
// revoke and a concurrent remember must not undo each other).

import { readFileSync, unlinkSync } from "node:fs";
import { createExclusive } from "./audit/exclusive-file.js";

/** `tookOver`: the file was taken from a dead owner (a crash left it), not found free. */
export type LockAttempt = { ok: true; lock: FileLock; tookOver: boolean } | { ok: false; heldBy: number | null };

export class FileLock {
  private held = true;

  private constructor(readonly file: string) {}

  /**
   * Takes `file` if no live process holds it. Not fsynced: a lock need not outlive a crash,
   * whose owner is then dead and its lock stale (an empty or missing one counts as released).
   * `heldBy` is the live owner's pid, or null when other processes kept taking the file.
   */
  static tryAcquire(file: string): LockAttempt {
    const content = `${process.pid}\n`;
    let heldBy: number | null = null;
    let tookOver = false;
    // A few rounds: find a stale lock and remove it, then take the file (unless another
    // process took it first).
    for (let round = 0; round < 3; round++) {
      if (createExclusive(file, content, { durable: false })) return { ok: true, lock: new FileLock(file), tookOver };
      const found = readOrNull(file);
      if (found === null) continue; // released meanwhile
      const pid = livePidIn(found);
      if (pid !== null) return { ok: false, heldBy: pid };
      // Stale. Removed only if it still holds what was read, so a lock another process took
      // over meanwhile is left alone (a narrow race remains between this read and the unlink).
      if (readOrNull(file) === found) unlinkQuietly(file);
      tookOver = true;
      heldBy = null;
    }
    return { ok: false, heldBy };
  }

  /**
   * Waits up to `waitMs` for the lock (blocking: the operations it guards take milliseconds),
   * or returns the last failed attempt.
   */
  static acquireWaiting(file: string, waitMs: number): LockAttempt {
    const deadline = Date.now() + waitMs;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      const attempt = FileLock.tryAcquire(file);
      if (attempt.ok || Date.now() >= deadline) return attempt;
      Atomics.wait(pause, 0, 0, delay);
    }
  }

  /** The live process that holds `file`, or null (free, or left by a process that is gone); takes nothing. */
  static holder(file: string): number | null {
    const found = readOrNull(file);
    return found === null ? null : livePidIn(found);
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    if (readOrNull(this.file) === `${process.pid}\n`) unlinkQuietly(this.file);
  }
}

/** The pid a lock file holds, if that process is alive. */
function livePidIn(content: string): number | null {
  const pid = /^\d+\n?$/.test(content) ? Number(content) : 0;
  return pid > 0 && isAlive(pid) ? pid : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
