// Child processes tacit starts (a sandbox, a type check in a temporary directory of its own, a
// command with its process group): if tacit exits while one still runs, it is killed and its
// directory deleted, so nothing outlives tacit. Kept free of dependencies: the CLI loads it first.

import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";

/** Each child's directory, whether it leads a process group to kill with it, and what to kill before it. */
const running = new Map<ChildProcess, { dir: string | null; group: boolean; killFirst: (() => void) | null; afterwards: (() => void) | null }>();
let hookInstalled = false;

/**
 * Kills `child` (with `group`, its whole process group: it was spawned detached) and deletes
 * `dir` (if it has one) if tacit exits before the returned release is called (once the child
 * has ended and the directory is gone). `killFirst`, where given, is called before: a program the
 * child forked outside its group (see sandbox-process.ts). `afterwards`, where given, is called once
 * it is killed: what a confined command left that must not outlive it (see executor.ts).
 */
export function cleanUpAtExit(
  child: ChildProcess,
  dir: string | null,
  group = false,
  killFirst: (() => void) | null = null,
  afterwards: (() => void) | null = null,
): () => void {
  if (!hookInstalled) {
    hookInstalled = true;
    process.on("exit", () => {
      for (const [leftover, how] of running) {
        how.killFirst?.();
        if (how.group && leftover.pid !== undefined) {
          try {
            process.kill(-leftover.pid, "SIGKILL");
          } catch {
            // Gone already.
          }
        } else {
          leftover.kill("SIGKILL");
        }
        if (how.dir !== null) rmSync(how.dir, { recursive: true, force: true });
        try {
          how.afterwards?.();
        } catch {
          // The others are still cleaned up.
        }
      }
    });
  }
  running.set(child, { dir, group, killFirst, afterwards });
  return () => running.delete(child);
}
