// The resident memory of a process tacit started, read from /proc: how the sandbox (beside its
// V8 heap limit) and the type checker (which has no heap limit of its own) are held to a limit.

import { readFileSync } from "node:fs";

/** How often a watched process is looked at: a checker grows about 50 MB a second at most here. */
const WATCH_INTERVAL_MS = 50;

/** Resident memory in KiB, or null when the process is gone or there is no /proc. */
export function residentKb(pid: number): number | null {
  return residentKbAt(`/proc/${pid}`);
}

/** Resident memory in KiB of the process whose /proc directory is `dir`, or null when it cannot be read. */
export function residentKbAt(dir: string): number | null {
  try {
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`${dir}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return null;
  }
}

/** Resident memory in KiB of the processes whose /proc directories are `dirs`, together; null when none can be read. */
export function residentKbOfAll(dirs: readonly string[]): number | null {
  let total: number | null = null;
  for (const dir of dirs) {
    const kb = residentKbAt(dir);
    if (kb !== null) total = (total ?? 0) + kb;
  }
  return total;
}

/** Calls `exceeded` once `pid`'s resident memory passes `limitKb`; the function returned stops the watch. */
export function watchResidentMemory(pid: number, limitKb: number, exceeded: () => void): () => void {
  const timer = setInterval(() => {
    const kb = residentKb(pid);
    if (kb !== null && kb > limitKb) {
      clearInterval(timer);
      exceeded();
    }
  }, WATCH_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
