// What tests read about processes from /proc: whether one is still running, its children, its
// command line. Used by the tests that kill tacit and look for what it left behind.

import { readdirSync, readFileSync } from "node:fs";

/** The pids of `pid`'s children (from /proc: a process's children file lists those of each of its threads). */
export function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** Its command line, NUL-separated; "" once it is gone. */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Alive and not a zombie waiting to be reaped (a container's init may never reap it). */
export function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
