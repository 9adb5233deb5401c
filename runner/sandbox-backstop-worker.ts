// tacit serve's off-thread watch of its sandboxes' resident memory and time limits (see
// sandbox-backstop.ts): a thread that reads /proc and the sandboxes' deadlines itself and SIGKILLs
// a sandbox past its memory limit, or past its deadline by a grace, so that the server's main
// thread being busy (validating a large script held it 1.3-3 s) does not stretch either limit.
// It records each kill in the sandbox's slot before it signals, so that the main thread, which
// reads the slot as it handles the sandbox's end, gives the reason whatever it sees first.

import { parentPort } from "node:worker_threads";
import {
  type BackstopKilled,
  type BackstopSlot,
  type BackstopWatch,
  backstopRequest,
  NO_DEADLINE,
  SLOT_WATCHED,
  slotOver,
  SPAWNED_KILL_GRACE_MS,
  startTimeOf,
  TIME_LIMIT_GRACE_MS,
} from "./sandbox-backstop-protocol.js";
import { monotonicMs } from "./monotonic.js";
import { namespaceProcessDirs, onlyChildOf } from "./namespaced-program.js";
import { readStatFields } from "./proc-stat.js";
import { residentKbOfAll } from "./resident-memory.js";

/** How early a watch may be looked at, to share a wake with another's. */
const EARLY_MS = 10;

interface Watched {
  request: BackstopWatch;
  slot: BackstopSlot;
  ownProcMounted: boolean;
  dueAt: number;
  /** Killed by this thread in a PID namespace: the process spawned is killed too if it has not ended by then (Date.now()), as the main thread's kill does. */
  spawnedKillAt: number | null;
}

function watchThread(port: NonNullable<typeof parentPort>): void {
  const watched = new Map<number, Watched>();
  let timer: NodeJS.Timeout | null = null;

  /** Wakes for the next watch due, and only then: between a session's snippets, 4 times a second, as the main thread's idle watch; with nothing watched, never. */
  const schedule = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    let next = Infinity;
    for (const entry of watched.values()) next = Math.min(next, entry.dueAt);
    if (next !== Infinity) timer = setTimeout(tick, Math.max(0, next - Date.now()));
  };

  const drop = (id: number): void => {
    watched.delete(id);
  };

  /** The program's pid while `spawned` is still the sandbox's (its start time matches: not reaped, its pid not reused), else null. */
  const programOf = (request: BackstopWatch): number | null => {
    if (startTimeOf(request.spawned) !== request.startTime) return null;
    if (!request.forksInit) return request.spawned;
    const program = onlyChildOf(request.spawned);
    // Its parent's child still: unshare reaps it only as it ends, so the pid is not another's.
    return program !== null && readStatFields(`/proc/${program}/stat`)?.(4) === request.spawned ? program : null;
  };

  /**
   * Kills the sandbox (as SandboxProcess.kill does), `code` recorded first, then tells the main
   * thread. `program`: the program's pid as the look found it (null: not found; then whatever runs now).
   */
  const kill = (entry: Watched, program: number | null, code: number): void => {
    const { request, slot } = entry;
    // Recorded before the signal, and only if the main thread has not seen the end: it reads the
    // slot as it handles the end, which may come before this thread's message.
    if (Atomics.compareExchange(slot.state, 0, SLOT_WATCHED, code) !== SLOT_WATCHED) return drop(request.id);
    // Looked up again at once: a pid signalled is the sandbox's.
    const now = programOf(request);
    let programKilled = false;
    try {
      if (now !== null && (program === null || now === program)) {
        process.kill(now, "SIGKILL");
        programKilled = true;
        // The process spawned reaps the program and ends (continued, should it be held), as the main thread's kill does.
        if (request.forksInit) process.kill(request.spawned, "SIGCONT");
      } else if (now === null && startTimeOf(request.spawned) === request.startTime) {
        // The program not forked yet (or reaped, the process spawned ending): the process spawned, whose death ends the program.
        process.kill(request.spawned, "SIGKILL");
      }
    } catch {
      // Ended meanwhile.
    }
    port.postMessage({ kind: "killed", id: request.id } satisfies BackstopKilled);
    if (!programKilled || !request.forksInit) return drop(request.id);
    entry.spawnedKillAt = Date.now() + SPAWNED_KILL_GRACE_MS;
    entry.dueAt = entry.spawnedKillAt;
  };

  /** The process spawned, killed where it has not ended within its grace after its program was (as SandboxProcess.kill does); then never looked at again. */
  const endSpawned = (entry: Watched): void => {
    const { request } = entry;
    try {
      // Its start time still: not reaped, so the pid is not another's.
      if (startTimeOf(request.spawned) === request.startTime) process.kill(request.spawned, "SIGKILL");
    } catch {
      // Ended meanwhile.
    }
    drop(request.id);
  };

  const look = (entry: Watched): void => {
    const { request, slot } = entry;
    if (entry.spawnedKillAt !== null) return endSpawned(entry);
    if (Atomics.load(slot.state, 0) !== SLOT_WATCHED) return drop(request.id);
    // The main thread moves the deadline (a person asked stops the clock), so it is read at each look.
    const deadline = Atomics.load(slot.deadline, 0);
    const pastDeadline = deadline !== NO_DEADLINE && monotonicMs() >= Number(deadline) + TIME_LIMIT_GRACE_MS;
    const program = programOf(request);
    if (pastDeadline) {
      // Gone (or reaped, its pid free for another process): nothing to kill.
      if (program === null && startTimeOf(request.spawned) !== request.startTime) return drop(request.id);
      return kill(entry, program, request.timeCode);
    }
    if (program === null) {
      // Gone (or reaped, its pid free for another process): never looked at again.
      if (startTimeOf(request.spawned) !== request.startTime) drop(request.id);
      return; // Not forked yet, or ending.
    }
    let dirs = [`/proc/${program}`];
    if (request.forksInit) {
      const found = namespaceProcessDirs(program, entry.ownProcMounted);
      entry.ownProcMounted = found.ownProcMounted;
      dirs = found.dirs;
    }
    // Summed as the main thread's watchdog sums them (sandbox-process.ts rssKb).
    const totalKb = residentKbOfAll(dirs);
    if (totalKb === null || totalKb <= request.limitKb) return;
    kill(entry, program, request.code);
  };

  const tick = (): void => {
    const now = Date.now();
    for (const entry of [...watched.values()]) {
      // A watch due within a few ms is looked at now too: one wake for watches begun apart.
      if (entry.dueAt > now + EARLY_MS) continue;
      entry.dueAt = now + entry.request.intervalMs;
      look(entry);
    }
    schedule();
  };

  port.on("message", (message: unknown) => {
    const request = backstopRequest(message);
    if (request === null) return;
    if (request.kind === "unwatch") drop(request.id);
    else watched.set(request.id, { request, slot: slotOver(request.slot), ownProcMounted: false, dueAt: Date.now() + request.intervalMs, spawnedKillAt: null });
    schedule();
  });
}

if (parentPort !== null) watchThread(parentPort);
