// Printing many lines: `tacit run` of a script printing 10,000 lines with println vs. raw Deno
// printing them with console.log, in the same run. No issue sets a target (for information):
// a print is a post the sandbox does not wait on (library/protocol.ts PostedAction), so what
// is left per line is the host's work on it, beside the script's. Loop-only, as for reads:
// each command's own start (the same script printing nothing) is subtracted first.

import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { denoExecutable } from "../runner/paths.js";
import { measureInterleaved } from "./measure.js";
import { heavyRuns, line, medianOf, ms, runChecked, tacitBin, tempDir } from "./helpers.js";

const LINES = 10_000;

export function benchPrint(runs: number): boolean {
  const n = heavyRuns(runs);
  const dir = tempDir("print");
  try {
    const tacitScript = (count: number) => `for (let i = 0; i < ${count}; i++) println("line " + i);\n`;
    const denoScript = (count: number) => `for (let i = 0; i < ${count}; i++) console.log("line " + i);\n`;
    const files = { tacit: "tacit.ts", tacitIdle: "tacit0.ts", deno: "deno.ts", denoIdle: "deno0.ts" };
    writeFileSync(path.join(dir, files.tacit), tacitScript(LINES));
    writeFileSync(path.join(dir, files.tacitIdle), tacitScript(0));
    writeFileSync(path.join(dir, files.deno), denoScript(LINES));
    writeFileSync(path.join(dir, files.denoIdle), denoScript(0));
    const deno = denoExecutable();
    const tacitArgs = (file: string) => [tacitBin, "run", "--no-check", file];
    const denoArgs = (file: string) => ["run", "--no-config", file];

    // Both print the same lines before either is timed.
    const expected = Array.from({ length: LINES }, (_, i) => `line ${i}\n`).join("");
    if (runChecked(process.execPath, tacitArgs(files.tacit), dir) !== expected || runChecked(deno, denoArgs(files.deno), dir) !== expected) {
      throw new Error("print: tacit and deno did not print the same lines");
    }
    const labels = {
      deno: `floor: deno run, console.log (${LINES} lines)`,
      denoIdle: "floor: deno run (0 lines)",
      tacit: `tacit run --no-check, println (${LINES} lines)`,
      tacitIdle: "tacit run --no-check (0 lines)",
    };
    const samples = measureInterleaved(
      [
        { label: labels.deno, steps: [{ file: deno, args: denoArgs(files.deno), cwd: dir }] },
        { label: labels.denoIdle, steps: [{ file: deno, args: denoArgs(files.denoIdle), cwd: dir }] },
        { label: labels.tacit, steps: [{ file: process.execPath, args: tacitArgs(files.tacit), cwd: dir }] },
        { label: labels.tacitIdle, steps: [{ file: process.execPath, args: tacitArgs(files.tacitIdle), cwd: dir }] },
      ],
      n,
    );
    console.log(`\nprint: ${LINES} lines, println vs console.log (${n} runs each, interleaved; BENCH_RUNS/3, min 3)`);
    for (const label of Object.values(labels)) line(label, `median ${ms(medianOf(samples, label))}`);
    const floorLoop = medianOf(samples, labels.deno) - medianOf(samples, labels.denoIdle);
    const tacitLoop = medianOf(samples, labels.tacit) - medianOf(samples, labels.tacitIdle);
    line("per line (work - startup)", `tacit ${((tacitLoop / LINES) * 1000).toFixed(1)} µs, floor ${((floorLoop / LINES) * 1000).toFixed(1)} µs`);
    line("loop only", `${(tacitLoop / Math.max(floorLoop, 0.1)).toFixed(2)}x floor  (for information; no target)`);
    return true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
