// The host's handle on the grep worker: one thread per evaluation, started on first use,
// terminated when the evaluation ends or is aborted (a timeout kills a stuck search too).

import { createRequire } from "node:module";
import path from "node:path";
import type { Worker } from "node:worker_threads";
import { packageRoot } from "../paths.js";
import type { GrepMatch } from "./grep-core.js";
import type { GrepJob, GrepReply } from "./grep-worker.js";

const WORKER_PATH = path.join(packageRoot, "dist", "bundle", "grep-worker.cjs");

type JobInput = GrepJob extends infer J ? (J extends { id: number } ? Omit<J, "id"> : never) : never;

export class GrepRunner {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: GrepReply) => void; reject: (e: Error) => void }>();

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener("abort", () => this.close(), { once: true });
  }

  private start(): Worker {
    // Loaded on first search: most runs never search, and the module costs start-up time.
    const { Worker: WorkerThread } = createRequire(import.meta.url)("node:worker_threads") as typeof import("node:worker_threads");
    const worker = new WorkerThread(WORKER_PATH);
    worker.unref();
    worker.on("message", (reply: GrepReply) => {
      this.pending.get(reply.id)?.resolve(reply);
      this.pending.delete(reply.id);
    });
    const fail = (error: Error): void => {
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
      this.worker = null;
    };
    worker.on("error", fail);
    worker.on("exit", () => fail(new Error("the search was stopped")));
    return worker;
  }

  run(job: JobInput): Promise<GrepReply> {
    if (this.signal.aborted) return Promise.reject(new Error("the evaluation has ended"));
    this.worker ??= this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker!.postMessage({ ...job, id });
    });
  }

  close(): void {
    void this.worker?.terminate();
    this.worker = null;
  }
}

export type { GrepMatch };
