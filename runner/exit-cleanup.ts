// Child processes tacit starts (a sandbox, a type check in a temporary directory of its own):
// if tacit exits while one still runs, it is killed and its directory deleted, so nothing
// outlives tacit. Kept free of dependencies: the CLI loads it first.

import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";

const running = new Map<ChildProcess, string | null>();
let hookInstalled = false;

/**
 * Kills `child` and deletes `dir` (if it has one) if tacit exits before the returned release
 * is called (once the child has ended and the directory is gone).
 */
export function cleanUpAtExit(child: ChildProcess, dir: string | null): () => void {
  if (!hookInstalled) {
    hookInstalled = true;
    process.on("exit", () => {
      for (const [leftover, leftoverDir] of running) {
        leftover.kill("SIGKILL");
        if (leftoverDir !== null) rmSync(leftoverDir, { recursive: true, force: true });
      }
    });
  }
  running.set(child, dir);
  return () => running.delete(child);
}
