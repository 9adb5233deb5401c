// Whether a script is safe to give the native parser. oxc, run in the host's own process,
// crashes the whole process (a segmentation fault) on a script nested some thousands deep
// (`(((…)))` 10,000 deep, or a chain of some 50,000 binary operators): a security review took
// `tacit serve` down, every session with it, with 20 KB of brackets.
//
// A scan of the raw text counts every opening bracket and operator character, in strings and
// comments too (no lexing, so nothing a script writes can make it count less than is there),
// and its length bounds everything else. Within the bounds the script is safe as it stands.
// Beyond them (long or bracket-heavy scripts), it is parsed once in a child process first: if
// that one crashes, the script is refused, and the host never parses it.
//
// The probe also measures the syntax tree, and a script whose tree is larger than the host can
// afford to check is refused too (checkedTreeLimit). The checks build that tree on the host's
// main thread, about 290 bytes of heap for each character of dense code: a security review's
// one 1 MiB snippet of "0;\n" repeated killed a tacit serve with a 250 MB heap (out of memory
// in JSON.parse, every session with it), and at the default heap a 4 MiB script peaked at
// 1.18 GB and held every other session for 12.6 s. A script within SAFE_LENGTH cannot make a
// tree larger than about 1 M characters (125 a character of code).

import { spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { getHeapStatistics } from "node:v8";
import { ConcurrencyLimit } from "./concurrency-limit.js";
import { CHECKED_TREE_HEAP_BYTES_PER_CHAR, CHECKED_TREE_LIMIT_CHARS, TOO_LARGE_TO_HAND_OVER } from "./limits.js";
import { PROGRAM_OPTIONS, programSize } from "./parser.js";
import { packageRoot } from "./paths.js";

/**
 * What a script may hold and skip the probe: openers/SAFE_OPENERS + operators/SAFE_OPERATORS
 * at most 1. Each can add a level, and the levels of both kinds add up on one stack (2,000
 * brackets and 20,000 "!" in one expression crash the parser; either alone does not). Measured
 * here: brackets crash it between 3,000 and 10,000 deep, unary and binary chains past 25,000.
 */
export const SAFE_OPENERS = 2000;
export const SAFE_OPERATORS = 20_000;
/**
 * And at most this long: nesting needs no bracket or operator (labels `a:a:…`, `void void …`,
 * `new new …`, `typeof`, `if (a) if (a) …` crash the parser some 8,000-30,000 deep), but each
 * level takes two characters or more, and 8 KiB of them, mixed with the brackets allowed, parsed
 * safely here. A longer script is probed first (a child process: about 60 ms).
 */
export const SAFE_LENGTH = 8192;

/** What to do about a script that nests too deeply (also the validator's, for a tree too deep for its walk). */
export const HINT_TOO_DEEP = "Split the expression into named parts (const a = …; const b = f(a);), or put large data in a file and read it.";

const PROBE_PATH = path.join(packageRoot, "dist", "bundle", "parse-probe.cjs");
const PROBE_TIMEOUT_MS = 30_000;
/**
 * The probe's own heap, whatever NODE_OPTIONS gave the host (a flag on its command line wins):
 * the tree's JSON may be as long as V8's longest string, and a probe that ran out of heap for
 * it would read as a crash of the parser.
 */
const PROBE_HEAP_MB = 1536;
const PROBE_ARGS = [`--max-old-space-size=${PROBE_HEAP_MB}`, PROBE_PATH];

const OPERATORS = "+-*/%<>&|^!~?=";

/** The raw counts: an upper bound on how deep the script's tree can be. */
export function roughCounts(code: string): { openers: number; operators: number } {
  let openers = 0;
  let operators = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c === 40 || c === 91 || c === 123) openers++; // ( [ {
    else if (OPERATORS.includes(code[i]!)) operators++;
  }
  return { openers, operators };
}

/** True when the counts cannot reach a depth the parser fails on. */
export function safeToParse(code: string): boolean {
  const { openers, operators } = roughCounts(code);
  return code.length <= SAFE_LENGTH && openers / SAFE_OPENERS + operators / SAFE_OPERATORS <= 1;
}

/**
 * The largest tree the host checks, in characters of its JSON: CHECKED_TREE_LIMIT_CHARS, or
 * less where the checks at CHECKED_TREE_HEAP_BYTES_PER_CHAR would take more than an eighth of
 * this process's heap limit (the other shares go to sessions' replies, classified values and
 * kept code: heap-share.ts). At a 250 MB heap: about 5 M, some 130 KB of ordinary code.
 */
export function checkedTreeLimit(): number {
  const heapShare = getHeapStatistics().heap_size_limit / 8;
  return Math.min(CHECKED_TREE_LIMIT_CHARS, Math.floor(heapShare / CHECKED_TREE_HEAP_BYTES_PER_CHAR));
}

/** Characters of a tree's JSON, in millions, as the messages give them. */
export const millions = (chars: number): string => (chars / 1e6).toFixed(1);

/** What `limit` (checkedTreeLimit) is, for a refusal. */
export function treeLimitText(limit: number): string {
  return (
    `the ${millions(limit)} M tacit checks at once on its host (about ${CHECKED_TREE_HEAP_BYTES_PER_CHAR} bytes of its heap each, ` +
    `within an eighth of its ${(getHeapStatistics().heap_size_limit / (1024 * 1024)).toFixed(0)} MB heap limit, and at most ${millions(CHECKED_TREE_LIMIT_CHARS)} M: ` +
    "checking a larger tree would hold every other call up for seconds, or take the host's heap)"
  );
}

export interface ParseRefusal {
  rule: "too-deep" | "too-large" | "parse-probe-failed";
  message: string;
  hint: string;
}

const HINT_TOO_LARGE =
  "Split the script into smaller runs (in a REPL session: smaller snippets, each checked on its own), and keep large data " +
  "out of the code: put it in a file and read it with requestFileSystem. Whoever runs tacit can give it a larger heap " +
  "(NODE_OPTIONS=--max-old-space-size=MB) where its limit is lower than the default.";

const HINT_PROBE_FAILED =
  "Run it again: the probe failed for a reason of the host's, not of the script's. If it fails the same way again, split the " +
  "script into smaller runs (in a REPL session: smaller snippets) and keep large data out of the code (put it in a file and read " +
  "it with requestFileSystem); whoever runs tacit can look at the host's memory and processes.";

/** How a probe ended: as spawnSync reports it, with whether it was stopped at PROBE_TIMEOUT_MS and the end of its stderr. */
interface ProbeOutcome {
  status: number | null;
  signal: NodeJS.Signals | null;
  error?: Error | undefined;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** How much of the end of a probe's stderr is kept: enough for V8's out-of-memory report. */
const PROBE_STDERR_KEPT = 4096;

/**
 * Why a probe that gave no size failed. Only a crash by SIGSEGV (or SIGBUS) is the parser
 * running out of stack, which deep nesting does; every other end (the probe could not start,
 * ran out of heap or time, was killed by another process or the out-of-memory killer) was
 * reported as "nests too deeply" too, which sent the agent to rewrite a script that was fine.
 */
function probeFailure(probe: ProbeOutcome): ParseRefusal {
  if (probe.signal === "SIGSEGV" || probe.signal === "SIGBUS") {
    const message = `the script nests too deeply for tacit's parser: parsing it in a separate process crashed (${probe.signal})`;
    return { rule: "too-deep", message, hint: HINT_TOO_DEEP };
  }
  // Checked before the error: one that died before it read the whole script also failed the write (EPIPE).
  const how = probe.timedOut
    ? `took longer than ${PROBE_TIMEOUT_MS / 1000} s and was stopped`
    : /heap out of memory|Reached heap limit/i.test(probe.stderr)
      ? `ran out of memory (its heap limit is ${PROBE_HEAP_MB} MB)`
      : probe.signal
        ? `was ended by ${probe.signal} (sent by another process, or by the system's out-of-memory killer)`
        : probe.error
          ? `could not be run (${probe.error.message})`
          : probe.status !== 0
            ? `failed (exit ${probe.status}${probe.stderr.trim() === "" ? "" : `: ${probe.stderr.trim().split("\n").slice(-1)[0]}`})`
            : `answered ${JSON.stringify(probe.stdout.slice(0, 80))}, not the size of a syntax tree`;
  return {
    rule: "parse-probe-failed",
    message: `refused before it was checked: tacit parses a script this long or bracket-heavy in a separate process first, and that process ${how}; nothing ran`,
    hint: HINT_PROBE_FAILED,
  };
}

/** A script's probe: why it cannot be parsed safely (or null), and its tree's size in characters of JSON (Infinity: too large to hand over). */
export interface TreeProbe {
  refusal: ParseRefusal | null;
  size: number;
}

/** The verdict on a probe of `code`. */
function judged(probe: ProbeOutcome, code: string): TreeProbe {
  const oversize = probe.status === 0 && probe.stdout === TOO_LARGE_TO_HAND_OVER;
  const size = oversize ? Number.POSITIVE_INFINITY : probe.status === 0 ? Number(probe.stdout) : Number.NaN;
  if (!oversize && (probe.status !== 0 || !Number.isSafeInteger(size))) return { refusal: probeFailure(probe), size };
  const limit = checkedTreeLimit();
  if (size <= limit) return { refusal: null, size };
  const message =
    `refused before it was checked: the script's syntax tree is ${oversize ? "more than 500" : millions(size)} M characters (${(code.length / 1024).toFixed(0)} KiB of code), ` +
    `more than ${treeLimitText(limit)}; nothing ran`;
  return { refusal: { rule: "too-large", message, hint: HINT_TOO_LARGE }, size };
}

/**
 * Why the script cannot be parsed safely, or null: it was probed in a child process if it had
 * to be, synchronously (the host waits, doing nothing else: parseRefusalAsync does not).
 */
export function parseRefusal(code: string): ParseRefusal | null {
  if (safeToParse(code)) return null;
  const probe = spawnSync(process.execPath, PROBE_ARGS, { input: code, timeout: PROBE_TIMEOUT_MS, killSignal: "SIGKILL", stdio: "pipe", encoding: "utf8" });
  const timedOut = (probe.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT";
  const outcome: ProbeOutcome = {
    status: probe.status,
    signal: probe.signal,
    error: timedOut ? undefined : probe.error,
    timedOut,
    stdout: probe.stdout,
    stderr: probe.stderr.slice(-PROBE_STDERR_KEPT),
  };
  return judged(outcome, code).refusal;
}

/**
 * parseRefusal, with the host free while the child parses: a probe takes about a second for
 * each MiB of dense code, and a spawnSync held every other call of tacit serve (its sessions,
 * cancellations and time limits) for all of it.
 */
export async function parseRefusalAsync(code: string, signal?: AbortSignal): Promise<ParseRefusal | null> {
  return safeToParse(code) ? null : (await probed(code, signal)).refusal;
}

/**
 * parseRefusalAsync, and the size of the script's tree: from the probe, or, for a script short
 * enough not to need one, measured here (a parse of at most SAFE_LENGTH: a millisecond or so).
 */
export async function probeTree(code: string, signal?: AbortSignal): Promise<TreeProbe> {
  return safeToParse(code) ? { refusal: null, size: programSize("script.ts", code, PROGRAM_OPTIONS) } : probed(code, signal);
}

/**
 * A probe given up on: its caller's signal was aborted (a cancelled call) while the probe ran, which
 * ends it, or waited for its turn, which it then never takes. Ran to its end, a cancelled call's probe
 * (up to 30 s and 1.5 GB) held the probes of every later call behind it, and the call its evaluation slot.
 */
export class ProbeCancelled extends Error {
  constructor() {
    super("tacit: the parse probe was stopped: its call was cancelled");
    this.name = "ProbeCancelled";
  }
}

/**
 * Probes running at once: one, as when the host waited for each (spawnSync). A probe of a
 * 10 MiB message may take the child a gigabyte or more (the parser's tree, its JSON), and
 * every session and call of tacit serve may send one together.
 */
const probes = new ConcurrencyLimit(1);

/** The probe, in a child process, with the host free meanwhile; rejects with ProbeCancelled once `signal` aborts. */
async function probed(code: string, signal?: AbortSignal): Promise<TreeProbe> {
  const probe = await probes.run(() => (signal?.aborted ? Promise.reject(new ProbeCancelled()) : spawnProbe(code, signal)), signal, () => new ProbeCancelled());
  if (signal?.aborted) throw new ProbeCancelled();
  return judged(probe, code);
}

function spawnProbe(code: string, signal?: AbortSignal): Promise<ProbeOutcome> {
  return new Promise<ProbeOutcome>((resolve) => {
    const child = spawn(process.execPath, PROBE_ARGS, { stdio: ["pipe", "pipe", "pipe"] });
    const stop = (): void => void child.kill("SIGKILL");
    signal?.addEventListener("abort", stop, { once: true });
    if (signal?.aborted) stop();
    let stdout = "";
    let stderr = "";
    let error: Error | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, PROBE_TIMEOUT_MS);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-PROBE_STDERR_KEPT)));
    child.on("error", (failure) => (error ??= failure));
    // A child that dies before it has read everything closes the pipe: its exit says why.
    child.stdin.on("error", () => undefined);
    child.on("close", (status, endedBy) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
      resolve({ status: error ? null : status, signal: endedBy, error, timedOut, stdout, stderr });
    });
    child.stdin.end(code);
  });
}

/** Why the script cannot be parsed safely, as a message, or null (parseRefusal). */
export function nestingRefusal(code: string): string | null {
  return parseRefusal(code)?.message ?? null;
}
