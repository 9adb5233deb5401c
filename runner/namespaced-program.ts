// The sandbox's program seen from the host, where it runs in a PID namespace of its own (see
// network-namespace.ts). A PID namespace is its maker's children's: `unshare --pid --fork` forks,
// and the process tacit spawns stays outside, waits for the namespace's first process and ends
// as it does. That first process is the program (the mount setup runs the program in its place,
// see sandbox-mounts.ts), and the spawned process's only child: its resident memory and CPU time
// are read, and its stops and continues sent, at the pid found there. Found afresh at each use,
// in the spawned process's list of children, never remembered: the spawned process is not reaped
// until tacit sees it end, and lists the program only until it has reaped it, so a pid found
// there is the program's (or its zombie's), never another process's that took the number since.
// Where the sandbox has no PID namespace, the spawned process is the program (each wrapper runs
// the next in its place).

import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";

/**
 * What util-linux unshare (2.38) writes, and its exit status, where the namespace's first process
 * was killed by SIGKILL: it means to end by the same signal, but cannot set SIGKILL's handler, and
 * gives up instead. Seen only on the last line of stderr of a process that exited with 1.
 */
const UNSHARE_SIGKILL_FAILURE = "unshare: sigprocmask unblock failed: Invalid argument\n";
const UNSHARE_FAILED = 1;

export class NamespacedProgram {
  /** Whether the namespace's own /proc has been seen mounted (nothing in it can unmount it). */
  private ownProcMounted = false;

  /**
   * `spawned`: the process tacit spawned; `forksInit`: whether it forks the program in a PID
   * namespace (see network-namespace.ts ConfinedLaunch).
   */
  constructor(
    private readonly spawned: ChildProcess,
    readonly forksInit: boolean,
  ) {}

  /**
   * The program's pid in the host's PID namespace, or null where it is not running (yet, or any
   * more). Never once the spawned process is reaped: its pid, and so the children listed under it,
   * may then be another process's.
   */
  pid(): number | null {
    const spawned = this.spawned.pid;
    if (spawned === undefined || this.spawned.exitCode !== null || this.spawned.signalCode !== null) return null;
    return this.forksInit ? onlyChildOf(spawned) : spawned;
  }

  /**
   * The /proc directory, as this process reads it, of every process in the program's PID
   * namespace, the program's own first; or null where the program is not running. Deno may start
   * no process, but native code in it can fork, and a child's memory and CPU time are not the
   * program's: the watchdogs count them all (see sandbox-process.ts). Listed in the namespace's own
   * /proc, reached through the program's root: nothing in the namespace can unmount or cover it
   * (no capability, see sandbox-mounts.ts), it lists every process of the namespace wherever it
   * was re-parented or whatever session it made, and by pid, so that one which stays is not
   * missed while others come and go (as a walk of children lists can miss it). Where there is no
   * PID namespace, or that /proc cannot be read (the program ending meanwhile), the program's alone.
   */
  processDirs(): string[] | null {
    const pid = this.pid();
    if (pid === null) return null;
    if (!this.forksInit) return [`/proc/${pid}`];
    const found = namespaceProcessDirs(pid, this.ownProcMounted);
    this.ownProcMounted = found.ownProcMounted;
    return found.dirs;
  }

  /**
   * Sends `signal` to the program (SIGSTOP, SIGCONT: stopping the process outside would not stop
   * it). From outside its namespace, even its first process takes SIGSTOP and SIGCONT without a
   * handler. Nothing is sent where it is not found; whether it was sent.
   */
  signal(signal: NodeJS.Signals): boolean {
    const pid = this.forksInit ? this.pid() : null;
    if (pid === null) return false;
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false; // Ended meanwhile.
    }
  }

  /**
   * The program's end as the spawned process reports it. Where unshare could not end by the
   * SIGKILL that killed the program (see UNSHARE_SIGKILL_FAILURE), the SIGKILL, as a program
   * started without a PID namespace reports it. A script that writes those words and exits with 1
   * is reported as killed: a protocol violation either way.
   */
  end<End extends { code: number | null; signal: NodeJS.Signals | null; stderr: string }>(end: End): End {
    if (!this.forksInit || end.code !== UNSHARE_FAILED || end.signal !== null || !end.stderr.endsWith(UNSHARE_SIGKILL_FAILURE)) return end;
    return { ...end, code: null, signal: "SIGKILL", stderr: end.stderr.slice(0, -UNSHARE_SIGKILL_FAILURE.length) };
  }
}

/**
 * What NamespacedProgram.processDirs lists for `pid`, a PID namespace's first process: its /proc
 * directory, then those of the others in its namespace once the namespace's own /proc is mounted
 * (`ownProcMounted`: seen mounted before; returned as it is now). Apart from the class so that
 * tacit serve's off-thread watch (sandbox-backstop-worker.ts) counts the same processes.
 */
export function namespaceProcessDirs(pid: number, ownProcMounted: boolean): { dirs: string[]; ownProcMounted: boolean } {
  const own = `/proc/${pid}`;
  const namespaceProc = `${own}/root/proc`;
  // Until the namespace's first process has mounted a /proc of its own (unshare --mount-proc,
  // as it starts), the /proc under its root is the host's, which lists every process of the
  // machine: a watchdog's look then took 113 of them for processes native code had started,
  // and ended a pure evaluator as it started. The program's alone until then.
  if (!ownProcMounted && !isAnotherProc(namespaceProc)) return { dirs: [own], ownProcMounted: false };
  let names: string[];
  try {
    names = readdirSync(namespaceProc);
  } catch {
    return { dirs: [own], ownProcMounted: true };
  }
  // The program is the namespace's pid 1; the others by their pid there.
  const others = names.filter((name) => /^\d+$/.test(name) && name !== "1").map((name) => `${namespaceProc}/${name}`);
  return { dirs: [own, ...others], ownProcMounted: true };
}

/** The only child of `pid` (its first thread's, which unshare's single thread is), or null. */
export function onlyChildOf(pid: number): number | null {
  let listed: string;
  try {
    listed = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8");
  } catch {
    return null;
  }
  const children = listed.trim().split(" ").filter((word) => word !== "");
  if (children.length !== 1) return null;
  const child = Number(children[0]);
  return Number.isSafeInteger(child) && child > 0 ? child : null;
}

/** The device of this process's /proc, looked up once. */
let hostProcDevice: number | null | undefined;

/**
 * Whether `dir` is a procfs other than this process's: a /proc mounted in another PID namespace
 * is a file system of its own, on a device of its own. False where either cannot be looked at.
 */
function isAnotherProc(dir: string): boolean {
  if (hostProcDevice === undefined) {
    try {
      hostProcDevice = statSync("/proc").dev;
    } catch {
      hostProcDevice = null;
    }
  }
  if (hostProcDevice === null) return false;
  try {
    return statSync(dir).dev !== hostProcDevice;
  } catch {
    return false;
  }
}
