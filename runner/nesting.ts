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

import { spawnSync } from "node:child_process";
import path from "node:path";
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

const PROBE_PATH = path.join(packageRoot, "dist", "bundle", "parse-probe.cjs");
const PROBE_TIMEOUT_MS = 30_000;

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

/** Why the script cannot be parsed safely, or null: it was probed in a child process if it had to be. */
export function nestingRefusal(code: string): string | null {
  if (safeToParse(code)) return null;
  const probe = spawnSync(process.execPath, [PROBE_PATH], { input: code, timeout: PROBE_TIMEOUT_MS, stdio: ["pipe", "ignore", "ignore"] });
  if (probe.status === 0) return null;
  const how = probe.signal ? `crashed (${probe.signal})` : probe.error ? `failed (${probe.error.message})` : `failed (exit ${probe.status})`;
  return `the script nests too deeply for tacit's parser: parsing it in a separate process ${how}`;
}
