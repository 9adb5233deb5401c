// Small helpers for the file and classified benchmarks: temp dirs, one checked run of a
// command (to verify what it prints before timing it), and the sample counts and report
// lines that the heavier benchmarks share.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { packageRoot } from "../runner/paths.js";
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

/** The machine's load as a bench's timed runs start or end: what decides whether tacit spins. */
export interface MachineLoad {
  /** The one-minute load average: tacit spins while it is at most the CPUs (runner/spin-read.ts spinningPays). */
  loadAverage: number;
  /** The mean of the runnable tasks over a second, this process not counted (/proc/loadavg's 4th field); null without /proc. */
  othersRunnable: number | null;
}

/** The machine's load now (see MachineLoad): a second's counts of its runnable tasks, and the load average. */
export function machineLoad(): MachineLoad {
  const counts: number[] = [];
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 20; i++) {
    let text: string;
    try {
      text = readFileSync("/proc/loadavg", "latin1");
    } catch {
      counts.length = 0;
      break;
    }
    const match = /^\S+ \S+ \S+ (\d+)\//.exec(text);
    if (match) counts.push(Number(match[1]) - 1);
    Atomics.wait(pause, 0, 0, 50);
  }
  const othersRunnable = counts.length === 0 ? null : counts.reduce((sum, count) => sum + count, 0) / counts.length;
  return { loadAverage: loadavg()[0]!, othersRunnable };
}

/**
 * The line saying the machine's load before and after a bench's timed runs: the reads' and the
 * audit log's costs depend on whether tacit spun, which a loaded machine turns off.
 */
export function machineLoadLine(before: MachineLoad, after: MachineLoad): void {
  const cpus = availableParallelism();
  const others = before.othersRunnable === null || after.othersRunnable === null ? "" : `; others' runnable tasks ${before.othersRunnable.toFixed(1)} and ${after.othersRunnable.toFixed(1)}`;
  line(
    "machine load before and after timing",
    `one-minute load ${before.loadAverage.toFixed(2)} and ${after.loadAverage.toFixed(2)} on ${cpus} CPUs (tacit spins while it stays at most ${cpus})${others}  (for information)`,
  );
}
