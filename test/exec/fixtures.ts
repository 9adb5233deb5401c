// Shared pieces of the commands suite: the real CLI run in a temp working directory (the
// default allowed root) with extra environment, and a look at the host's process table from
// outside (never taking the script's word for it). Attempt reporting is the files suite's.

import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, closeSync, constants, openSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { type CliResult, runCli, unchecked } from "../helpers.js";

export { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeCanary, realTempDir, writeTree } from "../files/fixtures.js";
export type { CliResult };

/** `tacit run --no-check -` (see unchecked) with the script on stdin, working directory `cwd`, extra environment `env`. */
export function tacit(cwd: string, script: string, args: string[] = [], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(unchecked(["run", ...args, "-"]), { cwd, env, input: script });
}

/**
 * A command's lifeline (runner/exec/lifeline.ts) as tacit answers it, for a first shell a test
 * starts with spawnSync, which cannot answer: a pipe (a FIFO in `dir`, open for reading and
 * writing) that already holds the answer. The shell's question is left in it after. Close it when done.
 */
export function answeredLifeline(dir: string): number {
  const fd = withFifo(dir, (fifo) => openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
  writeSync(fd, "\n");
  return fd;
}

/** A descriptor like tacit's lifeline once tacit has gone: the write end of a pipe (a FIFO in `dir`) nobody can read any more. Close it when done. */
export function deadLifeline(dir: string): number {
  return withFifo(dir, (fifo) => {
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    closeSync(reader);
    return writer;
  });
}

/** What `open` makes of a new FIFO in `dir`, which is removed once opened. */
function withFifo(dir: string, open: (fifo: string) => number): number {
  const fifo = path.join(dir, `lifeline-${randomUUID()}`);
  execFileSync("mkfifo", [fifo]);
  try {
    return open(fifo);
  } finally {
    rmSync(fifo);
  }
}

/** Writes an executable shell script (run through an allowed `bash`, or found on no PATH). */
export function makeExecutable(file: string): void {
  chmodSync(file, 0o755);
}

/** Full command lines of live processes whose command line contains `needle` (pgrep -f). */
export function livePrograms(needle: string): string[] {
  try {
    const out = execFileSync("pgrep", ["-a", "-f", needle], { encoding: "utf8" });
    // pgrep never lists itself; drop the shells that vitest or we might have spawned to look.
    return out.split("\n").filter((line) => line.trim() !== "" && !line.includes("pgrep"));
  } catch {
    return []; // exit status 1: nothing matched
  }
}

/** Polls until no live process matches `needle`, or `withinMs` passes; returns what is left. */
export async function leftAlive(needle: string, withinMs = 2_000): Promise<string[]> {
  const until = Date.now() + withinMs;
  for (;;) {
    const alive = livePrograms(needle);
    if (alive.length === 0 || Date.now() >= until) return alive;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Kills, by pid, whatever live process matches `needle` (a test's leftovers). */
export function killLive(needle: string): void {
  for (const line of livePrograms(needle)) {
    try {
      process.kill(Number(line.split(" ")[0]), "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

/** A fractional sleep duration no other test or process uses, so pgrep finds only ours. */
export function uniqueSleep(): string {
  return `31.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

export const at = (root: string, p: string): string => path.join(root, p);
