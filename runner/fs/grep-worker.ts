// The search worker thread: runs the agent's regular expressions and globs away from the
// host's event loop. A catastrophic pattern stalls only this thread; the host terminates it.

import { parentPort } from "node:worker_threads";
import { ClassifiedPaths } from "./classified-paths.js";
import {
  findEntries,
  type FindRequest,
  type GrepMatch,
  grepFile,
  grepRecursive,
  type GrepRecursiveRequest,
  MatchCollector,
  searchableCheck,
} from "./grep-core.js";

export type GrepJob =
  | { id: number; op: "grep"; named: string; real: string; realRoot: string; classifiedPatterns: readonly string[]; pattern: string }
  | ({ id: number; op: "grepRecursive" } & GrepRecursiveRequest)
  | ({ id: number; op: "find"; pattern: "" } & FindRequest);

export type GrepReply =
  | { id: number; ok: true; matches: GrepMatch[] }
  | { id: number; ok: true; paths: string[] }
  | { id: number; ok: false; message: string; invalidPattern: boolean };

function compile(pattern: string): RegExp {
  return new RegExp(pattern);
}

parentPort?.on("message", (job: GrepJob) => {
  let regex: RegExp;
  try {
    regex = compile(job.pattern);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, ok: false, invalidPattern: true, message: (error as Error).message } satisfies GrepReply);
    return;
  }
  try {
    if (job.op === "find") {
      parentPort!.postMessage({ id: job.id, ok: true, paths: findEntries(job) } satisfies GrepReply);
      return;
    }
    if (job.op === "grep") {
      const collector = new MatchCollector();
      grepFile(job.named, job.real, searchableCheck(job.realRoot, new ClassifiedPaths(job.classifiedPatterns)), regex, collector);
      parentPort!.postMessage({ id: job.id, ok: true, matches: collector.matches } satisfies GrepReply);
    } else {
      parentPort!.postMessage({ id: job.id, ok: true, matches: grepRecursive(job, regex) } satisfies GrepReply);
    }
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    parentPort!.postMessage({ id: job.id, ok: false, invalidPattern: false, message: e.code ?? e.message } satisfies GrepReply);
  }
});
