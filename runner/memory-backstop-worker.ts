// tacit serve's off-thread watch of its sandboxes' resident memory (see memory-backstop.ts): a
// thread that reads /proc itself and SIGKILLs a sandbox past its limit, so that the server's
// main thread being busy (validating a large script held it 1.3-3 s) does not stretch the limit.
// It records each kill in the sandbox's slot before it signals, so that the main thread, which
// reads the slot as it handles the sandbox's end, gives the reason whatever it sees first.

import { parentPort } from "node:worker_threads";
import { type BackstopKilled, type BackstopWatch, backstopRequest, SLOT_WATCHED, startTimeOf } from "./memory-backstop-protocol.js";
import { namespaceProcessDirs, onlyChildOf } from "./namespaced-program.js";
import { readStatFields } from "./proc-stat.js";
import { residentKbOfAll } from "./resident-memory.js";

/** How early a watch may be looked at, to share a wake with another's. */
const EARLY_MS = 10;

interface Watched {
  request: BackstopWatch;
  slot: Int32Array;
  ownProcMounted: boolean;
  dueAt: number;
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

  const look = (entry: Watched): void => {
    const { request, slot } = entry;
    if (Atomics.load(slot, 0) !== SLOT_WATCHED) return drop(request.id);
    const program = programOf(request);
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
    // Recorded before the signal, and only if the main thread has not seen the end: it reads the
    // slot as it handles the end, which may come before this thread's message.
    if (Atomics.compareExchange(slot, 0, SLOT_WATCHED, request.code) !== SLOT_WATCHED) return drop(request.id);
    // Looked up again at once: a pid signalled is the sandbox's.
    const now = programOf(request);
    if (now === program) {
      try {
        process.kill(program, "SIGKILL");
        // The process spawned reaps the program and ends (continued, should it be held), as the main thread's kill does.
        if (request.forksInit) process.kill(request.spawned, "SIGCONT");
      } catch {
        // Ended meanwhile.
      }
    }
    drop(request.id);
    port.postMessage({ kind: "killed", id: request.id } satisfies BackstopKilled);
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
    else watched.set(request.id, { request, slot: new Int32Array(request.slot, 0, 1), ownProcMounted: false, dueAt: Date.now() + request.intervalMs });
    schedule();
  });
}

if (parentPort !== null) watchThread(parentPort);
