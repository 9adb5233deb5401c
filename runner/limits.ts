// Default limits, in a module with no dependencies so the CLI can start the sandbox before
// it loads anything heavy.

import { totalmem } from "node:os";

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MEMORY_LIMIT_MB = 512;
export const MIN_MEMORY_LIMIT_MB = 64;
/** Resident memory allowed on top of the V8 heap limit: Deno's own footprint and young space. */
export const RSS_ALLOWANCE_MB = 256;
/** The largest sessionsMemoryLimitMb taken (1 PiB: more than any machine has, so a bound in name only). */
export const MAX_SESSIONS_MEMORY_LIMIT_MB = 2 ** 30;

/**
 * tacit serve's default budget for the resident memory all its REPL sessions' sandboxes hold
 * together (sessionsMemoryLimitMb, see sessions-memory.ts): a quarter of the machine's memory
 * (or of the container's, where a cgroup limits it), so that an agent's idle sessions leave the
 * rest to the MCP client, the one-shot calls (up to maxConcurrentEvaluations sandboxes at once)
 * and everything else the person runs; at least one sandbox's own limit (`memoryLimitMb` and
 * RSS_ALLOWANCE_MB), so that by default one session can grow as far as `tacit run` can. A quarter
 * of 16 GiB is 4 GiB: a hundred sessions of the 35 MiB a booted one holds, or five at 768 MiB.
 */
export function defaultSessionsMemoryLimitMb(memoryLimitMb: number): number {
  return Math.max(Math.floor(machineMemoryMb() / 4), memoryLimitMb + RSS_ALLOWANCE_MB);
}

/** The machine's memory in MiB, or the container's where a cgroup limits it to less. */
function machineMemoryMb(): number {
  // 0 where nothing is known, and a huge number (2^64) where no cgroup limits the process.
  const constrained = process.constrainedMemory?.() ?? 0;
  const machineBytes = constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
  return machineBytes / (1024 * 1024);
}
/** The V8 heap limit of a pure evaluator (the process that runs map/flatMap functions), whatever the sandbox's. */
export const PURE_MEMORY_LIMIT_MB = 256;

/**
 * How long a pure evaluator (runner/classified/pure-evaluator.ts) with no job pending or running is kept before it is ended (the next
 * job starts a fresh one, as after a failure). A session's evaluator outlived the snippets that
 * used it, holding what its last function grew to: three idle sessions, each having run one map
 * that made a 160 MB array, held about 183 MiB each, and 100 sessions could hold some 50 GB, out
 * of the server-wide sessions budget (which must not count evaluators, see sessions-memory.ts).
 * Only the time since the last job ended decides: nothing the plaintext makes (not the process's
 * memory, not its reply) is looked at, so whether and when it is ended tells nothing of a secret
 * beyond what a function's own run time already decides, and the store's schedule for map
 * results (MAP_SETTLE_MS) never waits for the fresh start. A few seconds: maps asked back to
 * back, the jobs of one snippet, reuse the warm process; between an agent's snippets (an LLM
 * turn, seconds at least) the memory is given back. The ended process is replaced at once by a
 * fresh one, which holds only what a start holds: the next map finds it ready, as it found the
 * old one. Its cost: a Deno start (250-360 ms of CPU on a loaded machine) per pause after maps.
 * The default of config "pureIdleStopMs", which the operator may set (warm longer, or memory
 * back sooner); nothing a script does changes it.
 */
export const PURE_IDLE_STOP_MS = 3_000;

/**
 * How long one map/flatMap function may run in the pure evaluator: the default of config
 * "pureJobTimeoutMs", which the operator may set. Within it, a snippet's or a call's own time
 * limit still ends its maps (see evaluate.ts): raising it never lets a map outlive that.
 */
export const PURE_JOB_TIMEOUT_MS = 5_000;

/**
 * tacit serve's default budget for the resident memory all its pure evaluators (its sessions'
 * and its one-shot calls') hold together (evaluatorsMemoryLimitMb, see EvaluatorsMemory in sessions-memory.ts): an eighth of
 * the machine's memory (half what the sessions' sandboxes get by default: an evaluator holds
 * what one function makes, between snippets only what a start holds), and at least one
 * evaluator's own limit, so that one map can always grow as far as under `tacit run`. An eighth
 * of 16 GiB is 2 GiB: four evaluators at their limit, or some sixty idle ones.
 */
export function defaultEvaluatorsMemoryLimitMb(): number {
  return Math.max(Math.floor(machineMemoryMb() / 8), PURE_MEMORY_LIMIT_MB + RSS_ALLOWANCE_MB);
}
/**
 * What a script prints is cut here, with a visible marker: the default of config
 * outputLimitBytes, and its most (an MCP client reads at most 10 MiB of one message, and the
 * host holds the output until the evaluation ends).
 */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024;
/**
 * Each of a command's streams (stdout, stderr) is cut here, with a visible marker: the default of
 * config libraryConfig.execOutputLimitBytes, and its most (the host holds both streams whole until
 * the command ends).
 */
export const DEFAULT_EXEC_OUTPUT_LIMIT_BYTES = 8 * 1024 * 1024;
/** An HTTP answer's body is cut here, with a visible marker. */
export const DEFAULT_RESPONSE_LIMIT_BYTES = 8 * 1024 * 1024;
/** An HTTP request (redirects included) must be answered within this. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
/**
 * Classified plaintext one evaluation or session may hold in the host (its classified store
 * keeps every value until it ends): enough for real secrets and documents, far below what
 * takes a host, or a server holding many sessions, down.
 */
export const DEFAULT_CLASSIFIED_STORE_LIMIT_BYTES = 256 * 1024 * 1024;
/**
 * Classified values one evaluation or session keeps, at most (see classified/store.ts): each
 * costs the host about 300 bytes beyond its plaintext, which the plaintext limit does not see.
 */
export const DEFAULT_CLASSIFIED_VALUES_LIMIT = 100_000;
/**
 * tacit serve: execute_typescript calls that run at once (each is a sandbox process with its
 * own heap limit); later calls wait their turn. Agents rarely send more than a few together.
 */
export const DEFAULT_MAX_CONCURRENT_EVALUATIONS = 8;
/**
 * Replies one REPL session keeps to rebuild its sandbox after a failed snippet (file contents
 * included); past it the session goes on, but a failed snippet then ends it.
 */
export const DEFAULT_SESSION_RECORDING_LIMIT_BYTES = 256 * 1024 * 1024;
/**
 * The longest delay a timer honours (2^31-1 ms, about 24.8 days): setTimeout fires at once for
 * anything longer, so no time limit may exceed it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * The code one REPL session keeps, its snippets together: each snippet is checked with all the
 * earlier ones (the validator on the host's main thread), so what a check reads is bounded.
 */
export const SESSION_CODE_LIMIT_CHARS = 16 * 1024 * 1024;
/**
 * The largest syntax tree the checks read at once, in characters of its JSON (how the parser
 * hands it over; a character of code makes up to about 125 of them: `a.b;` repeated). The checks
 * run on the host's main thread and hold about six bytes of heap for each (the JSON, the tree
 * built from it, the scope analysis): 16 Mi of them take about 100 MB and one second, about
 * 400 KB of ordinary code. A smaller heap lowers it further (nesting.ts).
 */
export const CHECKED_TREE_LIMIT_CHARS = 16 * 1024 * 1024;
/** What the parse probe answers for a tree too large for one string (parse-probe.ts). */
export const TOO_LARGE_TO_HAND_OVER = "too-large-to-hand-over";
/** Heap the checks hold for each character of a tree's JSON, at most (measured: 380 MB for 71 M). */
export const CHECKED_TREE_HEAP_BYTES_PER_CHAR = 6;
/**
 * The most identifier uses the checks take, each counted once for every function or block around
 * it (scope-nesting.ts): the scope analysis's work and memory grow with it, about 0.4 µs each here,
 * so a script at the limit takes some 0.4 s of the host's main thread. Ordinary code counts two
 * or three for each identifier (tacit's own gate.ts: 3,767; zod's 107 KB schemas.js: 15,381),
 * far below it.
 */
export const NESTED_NAME_USES_LIMIT = 1_000_000;
/**
 * The most comparisons the scope analysis may make keeping each declaring node's list of names
 * (declared-names.ts): N names bound by one declaration cost about N²/2, some 1 ns each here,
 * so a script at the limit takes about 0.1 s of the host's main thread. It lets one `const [...]`
 * bind 10,000 names (ordinary code binds a few in each; tacit's own gate.ts at most 7).
 */
export const DECLARED_NAMES_WORK_LIMIT = 100_000_000;
/**
 * Calls of one tacit serve that run code (execute_typescript, execute_in_session), under way
 * or waiting for their turn, at most; and their code together, in characters. Each holds its
 * code (a message may be 10 MiB) until it ends, and only maxConcurrentEvaluations run at once:
 * without a bound, a client sending calls faster than they end fills the server's heap.
 */
export const CALLS_IN_FLIGHT_LIMIT = 256;
export const CODE_IN_FLIGHT_LIMIT_CHARS = 64 * 1024 * 1024;
/**
 * The most a command's words (program and arguments) may hold together, in characters, to be
 * run: the most Linux passes a program by default (ARG_MAX, 2 MiB, environment included). The
 * audit log records every word of a command whole up to this (audit/action-record.ts), so a
 * command that runs is never known by its digest alone.
 */
export const EXEC_WORDS_LIMIT_CHARS = 2 * 1024 * 1024;

/** The characters a command's words hold together (what EXEC_WORDS_LIMIT_CHARS bounds). */
export function wordsChars(words: readonly string[]): number {
  let chars = 0;
  for (const word of words) chars += word.length;
  return chars;
}
/** The longest URL (as the script gives it) a request is sent to; the audit log records every URL sent whole. */
export const HTTP_URL_LIMIT_CHARS = 64 * 1024;
