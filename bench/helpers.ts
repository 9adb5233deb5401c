// Small helpers for the file and classified benchmarks: temp dirs, one checked run of a
// command (to verify what it prints before timing it), and the sample counts and report
// lines that the heavier benchmarks share.

import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { packageRoot } from "../runner/paths.js";
import { othersBorne, runnableNow } from "../runner/spin-read.js";
import { median, ratioText } from "./measure.js";

export const tacitBin = path.join(packageRoot, "bin", "tacit.js");

export function tempDir(tag: string): string {
  return mkdtempSync(path.join(tmpdir(), `tacit-bench-${tag}-`));
}

/** Fewer samples for benchmarks whose single sample takes seconds: runs/3, at least 3. */
export function heavyRuns(runs: number): number {
  return Math.max(3, Math.round(runs / 3));
}

/** Runs a command once and returns its stdout; throws (loudly) unless it exits 0. */
export function runChecked(file: string, args: string[], cwd: string): string {
  const run = spawnSync(file, args, { cwd, input: "", stdio: ["pipe", "pipe", "pipe"], maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) {
    throw new Error(`${file} ${args.join(" ")} (in ${cwd}) exited ${run.status}: ${run.stderr.toString().slice(0, 1000)}`);
  }
  return run.stdout.toString();
}

export function medianOf(samples: Map<string, number[]>, label: string): number {
  return median(samples.get(label)!);
}

export function line(label: string, text: string): void {
  console.log(`  ${label.padEnd(44)} ${text}`);
}

export function ms(value: number): string {
  return `${value.toFixed(1).padStart(7)} ms`;
}

/** One "ratio vs target" line; returns whether the target was met. */
export function verdictLine(label: string, ratio: number, target: number): boolean {
  const met = ratio <= target;
  line(label, `${ratioText(ratio, target)}x floor  target <= ${target.toFixed(1)}x: ${met ? "met" : "MISSED"}`);
  return met;
}

/**
 * The mean of others' runnable tasks over a second, as tacit's spinning gate counts them
 * (runner/spin-read.ts OthersLoad), this process not counted; null where they cannot be counted.
 * Printed beside the reads and the audit log's cost, which depend on whether tacit spun: a loaded machine turns it off.
 */
export function othersRunnableMean(): number | null {
  const counts: number[] = [];
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 20; i++) {
    const runnable = runnableNow();
    if (runnable === null) return null;
    counts.push(runnable - 1);
    Atomics.wait(pause, 0, 0, 50);
  }
  return counts.reduce((sum, count) => sum + count, 0) / counts.length;
}

/** The line saying others' runnable tasks before and after a bench's timed runs (see othersRunnableMean), where they could be counted. */
export function othersRunnableLine(before: number | null, after: number | null): void {
  if (before === null || after === null) return;
  line(
    "others' runnable tasks, a second's mean",
    `${before.toFixed(1)} before timing, ${after.toFixed(1)} after: tacit spins where their average stays at most ${othersBorne(availableParallelism()).toFixed(1)}  (for information)`,
  );
}
