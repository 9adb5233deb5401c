// The host's handle on the grep worker: one thread per evaluation, started on first use,
// terminated when the evaluation ends or is aborted (a timeout kills a stuck search too).
// A recursive search also gets a helper thread, where there are cores to spare for it (see
// searchHelperWanted), that takes a share of its files (see shared-search.ts); it is ended
// with the worker.

import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import path from "node:path";
import type { Worker } from "node:worker_threads";
import { packageRoot } from "../paths.js";
import type { GrepMatch } from "./grep-core.js";
import type { ConnectHelper, GrepJob, GrepReply, WorkerRole } from "./grep-worker.js";
import { CONTROL_BYTES } from "./helper-link.js";

const WORKER_PATH = path.join(packageRoot, "dist", "bundle", "grep-worker.cjs");

type JobInput = GrepJob extends infer J ? (J extends { id: number } ? Omit<J, "id"> : never) : never;

/**
 * Whether a recursive search gets a helper thread: only with at least three cores. On two, the
 * helper competes for the second core with V8's compiler and GC threads, the host and the
 * sandbox, and does not pay for itself: it takes ~22 ms of CPU to boot, warms up its own copy
 * of the search code, and two threads opening files in the same directories cost more per
 * file than one (over 20,000 files: ~95 ms more CPU, and no faster). TACIT_SEARCH_HELPER=on
 * gives a search its helper on any machine (the tests of the shared search use it), =off never.
 */
function searchHelperWanted(): boolean {
  const setting = process.env.TACIT_SEARCH_HELPER;
  if (setting === "on") return true;
  if (setting === "off") return false;
  return availableParallelism() >= 3;
}

function workerThreads(): typeof import("node:worker_threads") {
  // Loaded on first search: most runs never search, and the module costs start-up time.
  return createRequire(import.meta.url)("node:worker_threads") as typeof import("node:worker_threads");
}

/** A script that may search recursively (a mention is enough: starting threads early is only an optimisation). */
export function mayRunRecursiveSearch(code: string): boolean {
  return /\bgrepRecursive\b/.test(code);
}

function startSearchThread(): Worker {
  const worker = new (workerThreads().Worker)(WORKER_PATH, { workerData: { role: "search" } satisfies WorkerRole });
  worker.unref();
  return worker;
}

/** A search thread started before any evaluation (see prestartSearchThread), and whether it has ended since. */
let spareThread: { worker: Worker; ended: boolean } | null = null;

/**
 * Starts a search thread for the next evaluation to take, as soon as a script is known to mention
 * a recursive search (`tacit run`, once it has read it): a thread takes ~25 ms of CPU to boot,
 * which, started by the evaluation, lay between the script's request and its search. The first
 * GrepRunner to need a thread takes it; one that ended before (it should not) is replaced.
 */
export function prestartSearchThread(): void {
  if (spareThread !== null) return;
  const spare = { worker: startSearchThread(), ended: false };
  // Until a runner takes it, the thread's end is only noted (a runner that takes it listens too).
  spare.worker.on("error", () => (spare.ended = true));
  spare.worker.on("exit", () => (spare.ended = true));
  spareThread = spare;
}

/** The spare search thread, if there is one still running, which the caller now owns. */
function takeSpareThread(): Worker | null {
  const spare = spareThread;
  spareThread = null;
  if (spare === null || spare.ended) return null;
  return spare.worker;
}

export class GrepRunner {
  private worker: Worker | null = null;
  private helper: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: GrepReply) => void; reject: (e: Error) => void }>();

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener("abort", () => this.close(), { once: true });
  }

  private start(): Worker {
    const worker = takeSpareThread() ?? startSearchThread();
    worker.on("message", (reply: GrepReply) => {
      this.pending.get(reply.id)?.resolve(reply);
      this.pending.delete(reply.id);
    });
    // Only the current threads' ends count: those of threads already closed are expected.
    worker.on("error", (error) => this.worker === worker && this.fail(error));
    worker.on("exit", () => this.worker === worker && this.fail(new Error("the search was stopped")));
    return worker;
  }

  /** Starts the helper and hands the worker its end of the link; the worker does not wait for it to start. */
  private connectHelper(worker: Worker): Worker {
    const { Worker: WorkerThread, MessageChannel } = workerThreads();
    const { port1, port2 } = new MessageChannel();
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const helper = new WorkerThread(WORKER_PATH, { workerData: { role: "helper", port: port2, control } satisfies WorkerRole, transferList: [port2] });
    helper.unref();
    // A helper that dies could leave the worker waiting for its answer: the search ends with it.
    helper.on("error", (error) => this.helper === helper && this.fail(error));
    helper.on("exit", () => this.helper === helper && this.fail(new Error("the search helper stopped")));
    worker.postMessage({ op: "connect-helper", port: port1, control } satisfies ConnectHelper, [port1]);
    return helper;
  }

  private fail(error: Error): void {
    this.close(error);
  }

  /**
   * Starts the search thread before a recursive search is asked for (a thread takes ~20 ms of
   * CPU to boot). Not its helper: while the host loads and the sandbox boots, a second thread
   * booting beside them delays the one needed first. The helper is started with the search,
   * boots while the search thread walks, and joins the first batch still open once it is ready.
   */
  prestart(): void {
    if (this.signal.aborted) return;
    this.worker ??= this.start();
  }

  private threadsFor(op: JobInput["op"]): Worker {
    const worker = (this.worker ??= this.start());
    if (op === "grepRecursive" && this.helper === null && searchHelperWanted()) this.helper = this.connectHelper(worker);
    return worker;
  }

  run(job: JobInput): Promise<GrepReply> {
    if (this.signal.aborted) return Promise.reject(new Error("the evaluation has ended"));
    const worker = this.threadsFor(job.op);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...job, id });
    });
  }

  /** Ends both threads; a search still waiting for its answer fails with `reason`. */
  close(reason: Error = new Error("the search was stopped")): void {
    for (const { reject } of this.pending.values()) reject(reason);
    this.pending.clear();
    const { worker, helper } = this;
    this.worker = null;
    this.helper = null;
    void worker?.terminate();
    void helper?.terminate();
  }
}

export type { GrepMatch };
