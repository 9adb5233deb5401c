// tacit serve's backstop for its sandboxes' resident-memory limit: one thread (started at the first
// watch, memory-backstop-worker.ts) that reads each watched sandbox's memory from /proc on its own
// and SIGKILLs one past its limit. The watchdog on the server's main thread (sandbox-process.ts)
// stays what gives the reasons and counts the sessions' budget, but the main thread can be busy: a
// reviewer's script of 24,000 declarations held it 1.3-3 s while it was validated, and a sandbox
// limited to 384 MiB grew to 1.4 GB meanwhile. `tacit run` has one sandbox and nothing else to be
// busy with, and a thread's start would cost its start-up: it keeps the main thread's watch alone.

import path from "node:path";
import type { Worker } from "node:worker_threads";
import { type BackstopUnwatch, type BackstopWatch, SLOT_ENDED, SLOT_WATCHED, startTimeOf } from "./memory-backstop-protocol.js";
import { packageRoot } from "./paths.js";

/** Bundled apart (rolldown.config.mjs): nothing of it is shared with, or loaded by, `tacit run`. */
const WORKER_PATH = path.join(packageRoot, "dist", "memory-backstop", "worker.cjs");

/** Whether sandboxes are watched off the main thread too (see watchMemoryOffThread). */
let offThread = false;

/** From now on, in this process, every sandbox's memory watch has the backstop beside it: tacit serve's. */
export function watchMemoryOffThread(): void {
  offThread = true;
}

interface Thread {
  worker: Worker;
  /** The sandboxes watched, by id: told of the kills the thread made. */
  watched: Map<number, MemoryBackstop>;
}

let thread: Thread | null = null;
let nextId = 1;

function startThread(): Thread {
  // Loaded here: `tacit run` never starts the thread, and need not load the module.
  const { Worker: WorkerThread } = process.getBuiltinModule("node:worker_threads");
  const worker = new WorkerThread(WORKER_PATH);
  // It watches what runs; it keeps nothing alive.
  worker.unref();
  const started: Thread = { worker, watched: new Map() };
  worker.on("message", (message: unknown) => {
    if (typeof message !== "object" || message === null) return;
    const { kind, id } = message as Record<string, unknown>;
    if (kind === "killed" && typeof id === "number") started.watched.get(id)?.tellKilled();
  });
  // Should the thread fail, the main thread's watchdog still holds every limit; the next watch starts another.
  const end = (): void => {
    if (thread === started) thread = null;
  };
  worker.on("error", end);
  worker.on("exit", end);
  return started;
}

/** One sandbox's link to the backstop. */
export class MemoryBackstop {
  private readonly id = nextId++;
  private readonly slot = new SharedArrayBuffer(4);
  private readonly cell = new Int32Array(this.slot);

  /** A link for a new sandbox where this process watches off the main thread (see watchMemoryOffThread), else null. `killed` is told of the thread's kill. */
  static forSandbox(killed: () => void): MemoryBackstop | null {
    return offThread ? new MemoryBackstop(killed) : null;
  }

  private constructor(private readonly killed: () => void) {}

  /**
   * Watches `spawned` (the process tacit spawned: see namespaced-program.ts for `forksInit`) every
   * `intervalMs` from now on, in place of any watch before; a kill stores `code` (positive).
   */
  watch(spawned: number, forksInit: boolean, limitKb: number, intervalMs: number, code: number): void {
    // Read now, while the process cannot have been reaped (that waits for this thread): the pid is the sandbox's while it matches.
    const startTime = startTimeOf(spawned);
    if (startTime === null || Atomics.load(this.cell, 0) !== SLOT_WATCHED) return;
    thread ??= startThread();
    thread.watched.set(this.id, this);
    thread.worker.postMessage({ kind: "watch", id: this.id, spawned, startTime, forksInit, limitKb, intervalMs, code, slot: this.slot } satisfies BackstopWatch);
  }

  unwatch(): void {
    if (thread?.watched.delete(this.id)) thread.worker.postMessage({ kind: "unwatch", id: this.id } satisfies BackstopUnwatch);
  }

  /** The code the thread's kill stored, or null where it made none. */
  killCode(): number | null {
    const value = Atomics.load(this.cell, 0);
    return value > 0 ? value : null;
  }

  /** The sandbox has ended, as the main thread sees it: nothing is killed after this. The code of a kill made before, or null. */
  ended(): number | null {
    const value = Atomics.compareExchange(this.cell, 0, SLOT_WATCHED, SLOT_ENDED);
    this.unwatch();
    return value > 0 ? value : null;
  }

  /** The thread's message that it killed the sandbox: see forSandbox. */
  tellKilled(): void {
    this.unwatch();
    this.killed();
  }
}
