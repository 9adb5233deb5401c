// Small helpers for the file and classified benchmarks: temp dirs, one checked run of a
// command (to verify what it prints before timing it), and the sample counts and report
// lines that the heavier benchmarks share.

import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
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
