// A recursive search's files, shared between the thread that walks the tree and a helper
// thread: both take the next file from one counter in shared memory, so neither waits on the
// other while there is work, and matches are put back in walk order by file index.
//
// A search's settings go to the helper as the search starts, before the walker has a file: the
// helper builds its own way to search (its classified patterns compiled, cold) while the walker
// builds its own and gathers the first batch, not once that batch has arrived.
//
// A batch's life, in one shared word (the batch number and a phase): the walker opens it and
// posts the files; the helper joins if it arrives while the batch is still open; the walker,
// out of files, closes it unless the helper joined, and then waits for the helper to be done.
// A helper that arrives after the close does nothing, so a slow-starting helper never holds
// the walker up.

import { receiveMessageOnPort } from "node:worker_threads";
import { ClassifiedPaths } from "./classified-paths.js";
import {
  type BatchResults,
  type BatchSearcher,
  type FileSearch,
  fileSearchOf,
  type GrepMatch,
  searchClaimed,
  tooManyMatches,
  type SearchTask,
} from "./grep-core.js";
import type { HelperLink } from "./helper-link.js";

/** How a search searches each file: sent to the helper once, as the search starts. */
export interface SearchSettings {
  pattern: string;
  realRoot: string;
  classifiedPatterns: readonly string[];
  hostSecrets: readonly string[];
}

/**
 * What the walker sends the helper, in order on one port: a search's settings, then its
 * batches. A batch is searched with the settings sent last before it.
 */
export type HelperMessage = ({ kind: "search" } & SearchSettings) | { kind: "batch"; batch: number; tasks: SentTasks };

/** The helper's answer: the matches of the files it searched, by index, and why it could not read those it could not. */
export interface BatchReply {
  batch: number;
  results: [number, GrepMatch[]][];
  unread: [number, string][];
  limited: boolean;
  /** The helper failed (a bug, not a file it could not read): its results are incomplete. */
  failure: string | null;
}

/**
 * A batch's files as sent to the helper: the two paths of each (as named, and as opened or
 * where its link leads) one after another in one text, where each ends, and which are links.
 * Sent as task objects, every file cost a structured clone of an object whose property names
 * were written and read again for each one: a tenth of the helper's time in a search of
 * 20,000 small files, and as much again of the walker's in writing them. Where each path ends
 * is given, not marked in the text, so no character a path may hold can shift one into another.
 */
export interface SentTasks {
  text: string;
  ends: Uint32Array;
  linked: Uint8Array;
}

export function sentTasks(tasks: readonly SearchTask[]): SentTasks {
  const ends = new Uint32Array(tasks.length * 2);
  const linked = new Uint8Array(tasks.length);
  const parts: string[] = [];
  let end = 0;
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i]!;
    const second = task.kind === "opened" ? task.path : task.real;
    parts.push(task.named, second);
    ends[2 * i] = end += task.named.length;
    ends[2 * i + 1] = end += second.length;
    linked[i] = task.kind === "linked" ? 1 : 0;
  }
  return { text: parts.join(""), ends, linked };
}

export function receivedTasks({ text, ends, linked }: SentTasks): SearchTask[] {
  const tasks: SearchTask[] = [];
  let start = 0;
  for (let i = 0; i < linked.length; i++) {
    const namedEnd = ends[2 * i]!;
    const end = ends[2 * i + 1]!;
    const named = text.slice(start, namedEnd);
    const second = text.slice(namedEnd, end);
    tasks.push(linked[i] === 1 ? { kind: "linked", named, real: second } : { kind: "opened", named, path: second });
    start = end;
  }
  return tasks;
}

const STATE = 0;
const NEXT = 1;
const OPEN = 0;
const JOINED = 1;
const DONE = 2;
const CLOSED = 3;

function tagged(batch: number, phase: number): number {
  return ((batch & 0x1fffffff) << 2) | phase;
}

/**
 * Takes files from the shared counter until none are left, or until this search has found
 * too many matches (then the counter is run out, so the other thread stops too).
 */
function claimAndSearch(
  tasks: readonly SearchTask[],
  control: Int32Array,
  search: FileSearch,
  found: (index: number, matches: GrepMatch[]) => void,
  unread: (index: number, reason: string) => void,
): boolean {
  const limited = searchClaimed(tasks, search, () => Atomics.add(control, NEXT, 1), found, unread);
  if (limited) Atomics.store(control, NEXT, tasks.length);
  return limited;
}

/**
 * The walker's side of one search: sends the helper the settings at once, and gives the batch
 * searcher for the walker's own way to search (`search`). The helper starts on a batch as soon
 * as it is begun; the walker joins in when it finishes the batch (after gathering the next),
 * takes what is left, and waits for the helper only if it joined.
 */
export function sharedSearcher(link: HelperLink, settings: SearchSettings): (search: FileSearch) => BatchSearcher {
  link.port.postMessage({ kind: "search", ...settings } satisfies HelperMessage);
  return (search) => batchesShared(link, search);
}

function batchesShared(link: HelperLink, search: FileSearch): BatchSearcher {
  const control = new Int32Array(link.control);
  let batch = Atomics.load(control, STATE) >>> 2;
  let tasks: readonly SearchTask[] = [];
  return {
    begin(next) {
      tasks = next;
      batch++;
      Atomics.store(control, NEXT, 0);
      Atomics.store(control, STATE, tagged(batch, OPEN));
      link.port.postMessage({ kind: "batch", batch, tasks: sentTasks(next) } satisfies HelperMessage);
    },
    finish() {
      const results: BatchResults = { matches: tasks.map(() => []), unread: [] };
      let limited: boolean;
      try {
        limited = claimAndSearch(
          tasks,
          control,
          search,
          (index, matches) => (results.matches[index] = matches),
          (index, reason) => results.unread.push([index, reason]),
        );
      } catch (error) {
        Atomics.store(control, NEXT, tasks.length); // the helper stops too
        throw error;
      }
      const open = tagged(batch, OPEN);
      if (Atomics.compareExchange(control, STATE, open, tagged(batch, CLOSED)) !== open) {
        // The helper joined: wait until it is done; its answer is posted before it says so.
        while (Atomics.load(control, STATE) === tagged(batch, JOINED)) Atomics.wait(control, STATE, tagged(batch, JOINED));
        const reply = answerFor(link.port, batch);
        if (reply.failure !== null) throw new Error(`the search helper failed: ${reply.failure}`);
        for (const [index, matches] of reply.results) results.matches[index] = matches;
        results.unread.push(...reply.unread);
        limited ||= reply.limited;
      }
      if (limited) throw tooManyMatches();
      return results;
    },
  };
}

/**
 * The helper's answer for `batch`. Answers to earlier batches are passed over: a search that
 * failed in the walker leaves its batch's answer unread.
 */
function answerFor(port: HelperLink["port"], batch: number): BatchReply {
  for (;;) {
    const reply = receiveMessageOnPort(port)?.message as BatchReply | undefined;
    if (reply === undefined) throw new Error("the search helper's answer went missing");
    if (reply.batch === batch) return reply;
  }
}

/** The helper's side: builds each search's way to search when its settings come, and joins each batch still open when it arrives. */
export function serveAsHelper(link: HelperLink): void {
  const control = new Int32Array(link.control);
  // The search's, or why it could not be built (told to the walker with its first batch joined).
  let search: FileSearch | { failure: string } = { failure: "no search was begun" };
  link.port.on("message", (message: HelperMessage) => {
    if (message.kind === "search") {
      try {
        // The classified patterns compiled (their absolute prefixes resolved) as the search starts, as the walker's are.
        search = fileSearchOf(message.pattern, message.realRoot, new ClassifiedPaths(message.classifiedPatterns), message.hostSecrets);
      } catch (error) {
        search = { failure: String(error) };
      }
      return;
    }
    const { batch } = message;
    const open = tagged(batch, OPEN);
    if (Atomics.compareExchange(control, STATE, open, tagged(batch, JOINED)) !== open) return; // done without us
    const results: [number, GrepMatch[]][] = [];
    const unread: [number, string][] = [];
    let limited = false;
    let failure: string | null = null;
    try {
      if ("failure" in search) throw new Error(search.failure);
      limited = claimAndSearch(
        receivedTasks(message.tasks),
        control,
        search,
        (index, matches) => results.push([index, matches]),
        (index, reason) => unread.push([index, reason]),
      );
    } catch (error) {
      failure = String(error);
      Atomics.store(control, NEXT, message.tasks.linked.length);
    } finally {
      // Whatever happened, the walker is told, or it would wait for ever.
      link.port.postMessage({ batch, results, unread, limited, failure } satisfies BatchReply);
      Atomics.store(control, STATE, tagged(batch, DONE));
      Atomics.notify(control, STATE);
    }
  });
}
