// tacit serve's backstop for its sandboxes' resident-memory and time limits: one thread (started at
// the first watch, sandbox-backstop-worker.ts) that reads each watched sandbox's memory from /proc,
// and its time limit's deadline from the slot it shares with the main thread, on its own, and
// SIGKILLs one past its memory limit or a grace past its deadline. The watchdog and the time
// limit's timer on the server's main thread (sandbox-process.ts, pausable-timer.ts) stay what gives
// the reasons and counts the sessions' budget, but the main thread can be busy: a reviewer's script
// of 24,000 declarations held it 1.3-3 s while it was validated, and a sandbox limited to 384 MiB
// grew to 1.4 GB meanwhile; snippets sent at once to large sessions held it 3-8 s, and a script
// looping under a 500 ms time limit ran on for all of it. `tacit run` has one sandbox and nothing
// else to be busy with, and a thread's start would cost its start-up: it keeps the main thread's
// watch alone.

import path from "node:path";
import type { Worker } from "node:worker_threads";
import { type BackstopUnwatch, type BackstopWatch, deadlineAt, newBackstopSlot, SLOT_ENDED, SLOT_WATCHED, startTimeOf } from "./sandbox-backstop-protocol.js";
import { packageRoot } from "./paths.js";

/** Bundled apart (rolldown.config.mjs): nothing of it is shared with, or loaded by, `tacit run`. */
const WORKER_PATH = path.join(packageRoot, "dist", "sandbox-backstop", "worker.cjs");

/** Whether sandboxes are watched off the main thread too (see watchSandboxesOffThread). */
let offThread = false;

/** From now on, in this process, every sandbox's memory watch and time limit has the backstop beside it: tacit serve's. */
export function watchSandboxesOffThread(): void {
  offThread = true;
}

interface Thread {
  worker: Worker;
  /** The sandboxes watched, by id: told of the kills the thread made. */
  watched: Map<number, SandboxBackstop>;
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
export class SandboxBackstop {
  private readonly id = nextId++;
  private readonly slot = newBackstopSlot();

  /** A link for a new sandbox where this process watches off the main thread (see watchSandboxesOffThread), else null. `killed` is told of the thread's kill. */
  static forSandbox(killed: () => void): SandboxBackstop | null {
    return offThread ? new SandboxBackstop(killed) : null;
  }

  private constructor(private readonly killed: () => void) {}

  /**
   * Watches `spawned` (the process tacit spawned: see namespaced-program.ts for `forksInit`) every
   * `intervalMs` from now on, in place of any watch before; a kill for memory stores `code`, one
   * for time `timeCode` (positive, apart).
   */
  watch(spawned: number, forksInit: boolean, limitKb: number, intervalMs: number, code: number, timeCode: number): void {
    // Read now, while the process cannot have been reaped (that waits for this thread): the pid is the sandbox's while it matches.
    const startTime = startTimeOf(spawned);
    if (startTime === null || Atomics.load(this.slot.state, 0) !== SLOT_WATCHED) return;
    thread ??= startThread();
    thread.watched.set(this.id, this);
    const request: BackstopWatch = { kind: "watch", id: this.id, spawned, startTime, forksInit, limitKb, intervalMs, code, timeCode, slot: this.slot.buffer };
    thread.worker.postMessage(request);
  }

  /**
   * The sandbox's time limit is due at `atMs` (monotonic.ts's clock), or is not running (null:
   * not started, paused while a person is asked, or stopped). Read by the thread at each look of
   * a watch: it kills the sandbox once the deadline has passed by TIME_LIMIT_GRACE_MS.
   */
  setDeadline(atMs: number | null): void {
    Atomics.store(this.slot.deadline, 0, deadlineAt(atMs));
  }

  unwatch(): void {
    if (thread?.watched.delete(this.id)) thread.worker.postMessage({ kind: "unwatch", id: this.id } satisfies BackstopUnwatch);
  }

  /** The code the thread's kill stored, or null where it made none. */
  killCode(): number | null {
    const value = Atomics.load(this.slot.state, 0);
    return value > 0 ? value : null;
  }

  /** The sandbox has ended, as the main thread sees it: nothing is killed after this. The code of a kill made before, or null. */
  ended(): number | null {
    const value = Atomics.compareExchange(this.slot.state, 0, SLOT_WATCHED, SLOT_ENDED);
    this.unwatch();
    return value > 0 ? value : null;
  }

  /** The thread's message that it killed the sandbox: see forSandbox. */
  tellKilled(): void {
    this.unwatch();
    this.killed();
  }
}
