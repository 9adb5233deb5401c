// The search worker thread: runs the agent's regular expressions and globs away from the
// host's event loop. A catastrophic pattern stalls only this thread (and the search helper);
// the host terminates them. The same file runs as the search helper, which takes a share of
// a recursive search's files (see shared-search.ts).

import { parentPort, workerData } from "node:worker_threads";
import { ClassifiedPaths } from "./classified-paths.js";
import {
  findEntries,
  type FindRequest,
  type GrepMatch,
  grepFile,
  grepRecursive,
  type GrepRecursiveRequest,
  MatchCollector,
  maskOf,
  searchableCheck,
  SearchRefusal,
} from "./grep-core.js";
import type { HelperLink } from "./helper-link.js";
import type { LeftOut } from "./left-out.js";
import { DirectoryChanged, listEntries, type ListRequest, PathChanged } from "./walk.js";
import { serveAsHelper, sharedSearcher } from "./shared-search.js";

export type GrepJob =
  | { id: number; op: "grep"; named: string; real: string; realRoot: string; classifiedPatterns: readonly string[]; hostSecrets: readonly string[]; pattern: string; exact?: boolean }
  | ({ id: number; op: "grepRecursive" } & GrepRecursiveRequest)
  | ({ id: number; op: "find"; pattern: "" } & FindRequest)
  | ({ id: number; op: "list"; pattern: "" } & ListRequest);

/** Sent once, before the first recursive search: the walker's end of the link to the helper. */
export type ConnectHelper = { op: "connect-helper" } & HelperLink;

/** A search's answer carries the entries it could not read (left-out.ts); a grep of one file fails on its own file instead. */
export type GrepReply =
  | { id: number; ok: true; matches: GrepMatch[]; leftOut: LeftOut }
  | { id: number; ok: true; paths: string[]; leftOut: LeftOut }
  | { id: number; ok: false; message: string; failure: SearchFailure };

/**
 * Why a search failed: its pattern does not compile; the file it was to read led outside the
 * scope or to a classified file once opened, or elsewhere than the gate judged (refused); the
 * directory it was asked about was not where it was resolved once opened (changed, see
 * DirectoryChanged); or the file system said no.
 */
export type SearchFailure = "invalid-pattern" | "refused" | "changed" | "error";

/** How the thread is started: as the search worker, or as its helper. */
export type WorkerRole = { role: "search" } | ({ role: "helper" } & HelperLink);

const NOTHING_LEFT_OUT: LeftOut = { count: 0, first: [] };

function compile(pattern: string): RegExp {
  return new RegExp(pattern);
}

function serveSearches(): void {
  let helper: HelperLink | null = null;
  parentPort?.on("message", (job: GrepJob | ConnectHelper) => {
    if (job.op === "connect-helper") {
      helper = { port: job.port, control: job.control };
      return;
    }
    let regex: RegExp;
    try {
      regex = compile(job.pattern);
    } catch (error) {
      parentPort!.postMessage({ id: job.id, ok: false, failure: "invalid-pattern", message: (error as Error).message } satisfies GrepReply);
      return;
    }
    try {
      if (job.op === "find") {
        parentPort!.postMessage({ id: job.id, ok: true, ...findEntries(job) } satisfies GrepReply);
        return;
      }
      if (job.op === "list") {
        parentPort!.postMessage({ id: job.id, ok: true, ...listEntries(job) } satisfies GrepReply);
        return;
      }
      if (job.op === "grep") {
        const collector = new MatchCollector();
        const searchable = searchableCheck(job.realRoot, new ClassifiedPaths(job.classifiedPatterns));
        // Opened where the approval gate judged it, or not searched (see ListRequest.exact).
        const verify = !job.exact
          ? searchable
          : (actual: string): void => {
              if (actual !== job.real) throw new PathChanged(`${job.named}: the file changed while it was being opened`);
              searchable(actual);
            };
        grepFile(job.named, job.real, verify, regex, collector, maskOf(job.hostSecrets));
        parentPort!.postMessage({ id: job.id, ok: true, matches: collector.matches, leftOut: NOTHING_LEFT_OUT } satisfies GrepReply);
      } else {
        const settings = { pattern: job.pattern, realRoot: job.realRoot, classifiedPatterns: job.classifiedPatterns, hostSecrets: job.hostSecrets };
        const shared = helper && sharedSearcher(helper, settings);
        parentPort!.postMessage({ id: job.id, ok: true, ...grepRecursive(job, regex, shared) } satisfies GrepReply);
      }
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      const failure: SearchFailure =
        error instanceof SearchRefusal || error instanceof PathChanged ? "refused" : error instanceof DirectoryChanged ? "changed" : "error";
      parentPort!.postMessage({ id: job.id, ok: false, failure, message: e.code ?? e.message } satisfies GrepReply);
    }
  });
}

const role = (workerData as WorkerRole | null) ?? { role: "search" };
if (role.role === "helper") serveAsHelper(role);
else serveSearches();
