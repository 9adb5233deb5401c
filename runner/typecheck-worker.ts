// The thread a long-lived server type-checks in (see typecheck-thread.ts): TypeScript's
// synchronous API blocks the thread it runs on until the checker answers, and a script can
// make that take minutes.

import { parentPort, workerData } from "node:worker_threads";
import { IncrementalTypeChecker } from "./incremental-typecheck.js";
import { adoptSandboxNetwork, type SandboxNetwork } from "./network-namespace.js";
import type { SnippetCheck } from "./split-check.js";
import type { TypeCheckResult } from "./typecheck.js";

export type TypeCheckRequest = { id: number; code: string; snippet?: SnippetCheck };
export type TypeCheckReply =
  | { kind: "ready"; pid: number; directory: string }
  | { kind: "result"; id: number; result: TypeCheckResult }
  | { kind: "shadows"; id: number; shadowsGlobal: boolean }
  /** `hostNamespace`: the checker could not start for want of a network namespace (NamespaceUnavailableError). */
  | { kind: "failed"; id: number; message: string; hostNamespace?: boolean };
/** What the thread is started with: the network its checker is kept off as its starter found it (see adoptSandboxNetwork). */
export type TypeCheckWorkerData = { network: SandboxNetwork };

const port = parentPort!;
adoptSandboxNetwork((workerData as TypeCheckWorkerData).network);
const checker = new IncrementalTypeChecker();
// Its process gone, the thread ends: the server starts a new checker for the next check instead
// of failing it (the checker refuses to be asked anything now, see IncrementalTypeChecker.speak).
checker.onProcessEnd(() => process.exit(1));
port.postMessage({ kind: "ready", pid: checker.processId, directory: checker.directory } satisfies TypeCheckReply);
port.on("message", ({ id, code, snippet }: TypeCheckRequest) => {
  try {
    port.postMessage({ kind: "result", id, result: checker.check(code, snippet) } satisfies TypeCheckReply);
  } catch (error) {
    port.postMessage({ kind: "failed", id, message: error instanceof Error ? error.message : String(error) } satisfies TypeCheckReply);
    return;
  }
  if (snippet && snippet.names.length > 0) {
    // After the verdict, which the caller acts on at once; this answer is needed by the session's next check.
    let shadowsGlobal = true;
    try {
      shadowsGlobal = checker.shadowsGlobal(snippet.names);
    } catch {
      // Taken as yes: the session is checked whole from now on.
    }
    port.postMessage({ kind: "shadows", id, shadowsGlobal } satisfies TypeCheckReply);
  }
  try {
    checker.releaseStale(); // after the answer: it is not part of the check
  } catch {
    // The checker's process failed: the next check finds out, and a new checker takes over.
  }
});
