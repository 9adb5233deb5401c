// tacit serve's type checker: the incremental checker (incremental-typecheck.ts) in a thread of
// its own, with a time limit. On the server's thread, a check blocked everything until it
// ended: in a security review a script of types that take about a second each to check (a
// template literal type of 10,000 members, inferred apart) held the server 8 s, every other
// session's calls and time limits with it, with no limit at all. A check past the limit kills
// the checker's process and thread and rejects the script; the next check starts a new one.
// So does a check whose snippet was cancelled (see checks.ts checksCancelledBy): left to run, it kept a core
// busy up to the time limit for a snippet that was gone, and every later check waited behind it.

import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { packageRoot } from "./paths.js";
import { readStatFields } from "./proc-stat.js";
import type { SnippetCheck } from "./split-check.js";
import { cancellationOfCheckAsked } from "./checks.js";
import { checkerMemoryLimitMb, type TypeCheckResult, typeCheckOverMemory, typeCheckTimedOut } from "./typecheck.js";
import { DEFAULT_MEMORY_LIMIT_MB } from "./limits.js";
import { residentKb, watchResidentMemory } from "./resident-memory.js";
import type { TypeCheckReply, TypeCheckRequest, TypeCheckWorkerData } from "./typecheck-worker.js";
import { NamespaceUnavailableError, sandboxNetwork } from "./network-namespace.js";

const WORKER_PATH = path.join(packageRoot, "dist", "bundle", "typecheck-worker.cjs");
/** How long a stopped checker's thread has to reap its killed process and end by itself (see stop). */
const STOP_GRACE_MS = 5000;

/** The verdict of a check stopped because its snippet was cancelled: never acted on (the snippet is gone), but a verdict that runs nothing. */
function typeCheckCancelled(): TypeCheckResult {
  return {
    ok: false,
    diagnostics: [{ line: 1, column: 1, code: "check-cancelled", message: "the type check was stopped because its snippet was cancelled; nothing of it ran" }],
  };
}

interface Running {
  worker: Worker;
  ready: Promise<{ pid: number; directory: string }>;
  pending: Map<number, (reply: TypeCheckReply) => void>;
  /** Checks apart whose answer on shadowed globals is still to come (it follows the verdict). */
  shadows: Map<number, (shadowsGlobal: boolean) => void>;
}

export class ThreadedTypeChecker {
  private running: Running | null = null;
  private nextId = 1;
  /** Checks run one at a time, as on one thread: each waits for the one before. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Checks asked for and not yet answered: with none, a check is sent at once, not a turn of the event loop later. */
  private queued = 0;

  /** The checker's resident-memory limit (checkerMemoryLimitMb), in MiB. */
  private readonly memoryLimitMb: number;

  constructor(
    private readonly limitMs: number,
    memoryLimitMb: number = DEFAULT_MEMORY_LIMIT_MB,
  ) {
    this.memoryLimitMb = checkerMemoryLimitMb(memoryLimitMb);
  }

  private start(): Running {
    // The checker process it starts inherits its environment, which Linux shows other processes
    // of the user (/proc/<pid>/environ): not the LLM key (hidden-key.ts blanks tacit's own copy).
    const { TACIT_LLM_API_KEY: _key, ...env } = process.env;
    // Its checker is kept off the network as this thread's processes are (--no-network-namespace included).
    const worker = new Worker(WORKER_PATH, { env, workerData: { network: sandboxNetwork() } satisfies TypeCheckWorkerData });
    worker.unref();
    const pending = new Map<number, (reply: TypeCheckReply) => void>();
    const shadows = new Map<number, (shadowsGlobal: boolean) => void>();
    let ready!: (value: { pid: number; directory: string }) => void;
    let broken!: (error: Error) => void;
    const running: Running = { worker, pending, shadows, ready: new Promise((resolve, reject) => ((ready = resolve), (broken = reject))) };
    running.ready.catch(() => undefined);
    worker.on("message", (reply: TypeCheckReply) => {
      if (reply.kind === "ready") return ready({ pid: reply.pid, directory: reply.directory });
      if (reply.kind === "shadows") return shadows.get(reply.id)?.(reply.shadowsGlobal);
      pending.get(reply.id)?.(reply);
      pending.delete(reply.id);
    });
    const end = (error: Error): void => {
      broken(error);
      // A thread's error keeps its name, not its class: the checker's start failing for want of a
      // namespace (incremental-typecheck.ts) is the host's failure, and said as such (see checkNow).
      const hostNamespace = error.name === "NamespaceUnavailableError";
      for (const settle of pending.values()) settle({ kind: "failed", id: 0, message: error.message, hostNamespace });
      pending.clear();
      for (const answer of shadows.values()) answer(true);
      if (this.running === running) this.running = null;
    };
    worker.on("error", end);
    worker.on("exit", () => end(new Error("the type checker's thread ended")));
    return running;
  }

  /** Starts the checker before the first check needs it (a person at a prompt is still typing). */
  prestart(): void {
    this.running ??= this.start();
  }

  check(code: string, snippet?: SnippetCheck): Promise<TypeCheckResult> {
    const signal = cancellationOfCheckAsked();
    const result = this.queued === 0 ? this.checkNow(code, snippet, signal) : this.chain.then(() => this.checkNow(code, snippet, signal));
    this.queued++;
    const settled = result.finally(() => this.queued--);
    this.chain = settled.catch(() => undefined);
    return settled;
  }

  private async checkNow(code: string, snippet: SnippetCheck | undefined, signal: AbortSignal | undefined): Promise<TypeCheckResult> {
    // Cancelled while it waited for its turn: never sent.
    if (signal?.aborted) return typeCheckCancelled();
    // A checker left holding more than half its limit by the checks before (its memory is not
    // given back at once) is replaced, so that a check is measured against what it grows itself.
    if (this.running !== null) {
      const held = await this.running.ready.then(({ pid }) => residentKb(pid), () => null);
      if (held !== null && held > (this.memoryLimitMb * 1024) / 2 && this.running !== null) this.stop(this.running);
    }
    // Cancelled while the memory check above was awaited: never sent either.
    if (signal?.aborted) return typeCheckCancelled();
    const running = (this.running ??= this.start());
    const id = this.nextId++;
    // No names, nothing to look up: the thread sends no answer for them.
    const shadowsGlobal = !snippet ? undefined : snippet.names.length === 0 ? Promise.resolve(false) : this.shadowsAnswer(running, id);
    let timer: NodeJS.Timeout | undefined;
    let stopWatch: () => void = () => undefined;
    let answered = false;
    let cancel: () => void = () => undefined;
    const reply = await new Promise<TypeCheckReply | "timeout" | "memory" | "cancelled">((resolve) => {
      running.pending.set(id, resolve);
      // Cancelled once sent: its checker is stopped below.
      cancel = () => resolve("cancelled");
      signal?.addEventListener("abort", cancel, { once: true });
      // The limit counts from the request: starting the checker is part of a check.
      timer = setTimeout(() => resolve("timeout"), this.limitMs);
      // Its process is watched from when it is known (at once, but for the first check).
      void running.ready.then(
        ({ pid }) => {
          if (!answered) stopWatch = watchResidentMemory(pid, this.memoryLimitMb * 1024, () => resolve("memory"));
        },
        () => undefined,
      );
      running.worker.postMessage((snippet ? { id, code, snippet } : { id, code }) satisfies TypeCheckRequest);
    });
    answered = true;
    clearTimeout(timer);
    stopWatch();
    signal?.removeEventListener("abort", cancel);
    if (reply === "cancelled") {
      // Its process is killed mid-check (it cannot be told to stop one); the next check starts a new one.
      this.stop(running);
      return typeCheckCancelled();
    }
    if (reply === "timeout") {
      this.stop(running);
      return typeCheckTimedOut(this.limitMs);
    }
    if (reply === "memory") {
      this.stop(running);
      return typeCheckOverMemory(this.memoryLimitMb);
    }
    if (reply.kind !== "result") {
      // Its process may be gone (it crashed, or was killed): kept, it failed the next check too,
      // and left the one after that waiting for the time limit. The next check starts a new one.
      this.stop(running);
      if (reply.kind === "failed" && reply.hostNamespace === true) throw new NamespaceUnavailableError(reply.message);
      throw new Error(`tacit: the type checker failed: ${reply.kind === "failed" ? reply.message : "no answer"}`);
    }
    return shadowsGlobal ? { ...reply.result, shadowsGlobal } : reply.result;
  }

  /**
   * The answer on shadowed globals that follows check `id`'s verdict: yes if none comes within
   * the time limit or the checker ends first (the session is then checked whole, never stuck).
   */
  private shadowsAnswer(running: Running, id: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => answer(true), this.limitMs);
      timer.unref();
      const answer = (shadowsGlobal: boolean): void => {
        clearTimeout(timer);
        running.shadows.delete(id);
        resolve(shadowsGlobal);
      };
      running.shadows.set(id, answer);
    });
  }

  /**
   * Kills the checker's process (the thread is blocked reading from it); the thread, its read
   * failed, reaps the process and ends itself (typecheck-worker.ts). Terminated at once, as it
   * was, the thread went before it reaped its checker: every check stopped at the time limit
   * left a zombie process for the server's life (3 slow checks, 3 zombies). Terminated anyway if
   * it has not ended within STOP_GRACE_MS, or if it never started a checker.
   */
  private stop(running: Running): void {
    if (this.running === running) this.running = null;
    running.pending.clear();
    for (const answer of running.shadows.values()) answer(true);
    const terminate = (): void => void running.worker.terminate();
    void running.ready.then(
      ({ pid, directory }) => {
        // Only while it is still this process's child: a pid freed by its death may be reused.
        if (isChildOfThisProcess(pid)) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // Gone already.
          }
        }
        rmSync(directory, { recursive: true, force: true });
        setTimeout(terminate, STOP_GRACE_MS).unref();
      },
      terminate,
    );
  }

  close(): void {
    const running = this.running;
    if (running) this.stop(running);
  }
}

function isChildOfThisProcess(pid: number): boolean {
  if (!existsSync("/proc/self/stat")) return true; // no procfs to ask: killed as before
  // Field 4 is the parent's pid.
  return readStatFields(`/proc/${pid}/stat`)?.(4) === process.pid;
}
