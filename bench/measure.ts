// Timing helpers shared by the benchmarks: wall time of whole commands, interleaved with
// their floor so that machine noise hits both alike, reported as medians and ratios.

import { spawnSync } from "node:child_process";

export interface CommandSpec {
  label: string;
  /** Commands run one after another; the sample is their total wall time. */
  steps: Array<{ file: string; args: string[]; cwd?: string; input?: string; env?: Record<string, string> }>;
}

function timeOnce(spec: CommandSpec): number {
  const started = performance.now();
  for (const step of spec.steps) {
    const run = spawnSync(step.file, step.args, {
      cwd: step.cwd,
      input: step.input ?? "",
      stdio: ["pipe", "pipe", "pipe"],
      env: step.env ? { ...process.env, ...step.env } : process.env,
    });
    if (run.status !== 0) {
      throw new Error(`${spec.label}: ${step.file} ${step.args.join(" ")} exited ${run.status}: ${run.stderr.toString().slice(0, 500)}`);
    }
  }
  return performance.now() - started;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The value at `fraction` of the way through `values` sorted (nearest rank): 0.25 and 0.75 give the quartiles. */
export function quantile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

/**
 * Runs every spec `runs` times, round-robin, after `warmup` unrecorded rounds. Every other round
 * goes in the reverse order: a command pays for what the one before it left running (a sandbox
 * still tearing down), and in a fixed order the same command always came after the same other
 * (an A/B of the audit log measured whichever build ran second 7-10 ms slower).
 */
export function measureInterleaved(specs: readonly CommandSpec[], runs: number, warmup = 2): Map<string, number[]> {
  const samples = new Map(specs.map((s) => [s.label, [] as number[]]));
  const reversed = [...specs].reverse();
  for (let round = 0; round < warmup + runs; round++) {
    for (const spec of round % 2 === 0 ? specs : reversed) {
      const ms = timeOnce(spec);
      if (round >= warmup) samples.get(spec.label)!.push(ms);
    }
  }
  return samples;
}

/** A ratio in two decimals, or three where two would hide which side of the target it is on (2.001 is not 2.00). */
export function ratioText(ratio: number, target?: number): string {
  const two = ratio.toFixed(2);
  return target !== undefined && Number(two) === target && ratio !== target ? ratio.toFixed(3) : two;
}

export function report(title: string, floorLabel: string, samples: Map<string, number[]>, targets: Record<string, number>): boolean {
  const floor = median(samples.get(floorLabel)!);
  console.log(`\n${title}`);
  console.log(`  ${floorLabel.padEnd(44)} median ${floor.toFixed(1).padStart(7)} ms   (floor)`);
  let allMet = true;
  for (const [label, values] of samples) {
    if (label === floorLabel) continue;
    const m = median(values);
    const ratio = m / floor;
    const target = targets[label];
    const verdict = target === undefined ? "" : ratio <= target ? `  target <= ${target.toFixed(1)}x: met` : `  target <= ${target.toFixed(1)}x: MISSED`;
    if (target !== undefined && ratio > target) allMet = false;
    console.log(`  ${label.padEnd(44)} median ${m.toFixed(1).padStart(7)} ms   ${ratioText(ratio, target)}x floor${verdict}`);
  }
  return allMet;
}
