// The host's overhead on exec: `proc.exec("true")` through tacit against spawning the same
// program directly from Node, per command. The tacit figure is (t(N) - t(0)) / N over whole
// runs, so start-up cancels out; the floor is Node's own spawnSync, timed in this process.
// The issue sets no target: the figure is for the closing note. BENCH_EXEC_CONFINED=1 runs the
// commands with --confine-commands (exec/confinement.ts), to measure what confinement costs.

import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { findOnPath } from "../runner/exec/executor.js";
import { measureInterleaved, median } from "./measure.js";
import { heavyRuns, line, medianOf, ms, runChecked, tacitBin, tempDir } from "./helpers.js";

const COMMANDS = 200;
const CONFINED = process.env.BENCH_EXEC_CONFINED === "1";

export function benchExec(runs: number): boolean {
  const samples = heavyRuns(runs);
  const dir = tempDir("exec");
  try {
    const script = (n: number): string => {
      const file = path.join(dir, `exec-${n}.ts`);
      writeFileSync(file, `requestExecPermission(["true"], (proc) => { let failed = 0; for (let i = 0; i < ${n}; i++) failed += proc.exec("true").exitCode; println(failed); });\n`);
      return file;
    };
    // A time limit that fits 200 commands on a loaded machine (confined, each costs a few mounts).
    const args = (file: string): string[] => [tacitBin, "run", "--no-check", "--exec-timeout-ms", "600000", "--command-permissions", "true", ...(CONFINED ? ["--confine-commands"] : []), file];
    const withCommands = script(COMMANDS);
    const without = script(0);
    if (runChecked(process.execPath, args(withCommands), dir).trim() !== "0") throw new Error("exec bench: a `true` failed");

    const program = findOnPath("true");
    if (!program) throw new Error("exec bench: `true` is not on PATH");
    const direct: number[] = [];
    for (let round = 0; round < samples; round++) {
      const started = performance.now();
      for (let i = 0; i < COMMANDS; i++) spawnSync(program, [], { stdio: "ignore" });
      direct.push((performance.now() - started) / COMMANDS);
    }

    const labelWith = `tacit run (${COMMANDS} × exec("true")${CONFINED ? ", confined" : ""})`;
    const labelWithout = "tacit run (scope only)";
    const timed = measureInterleaved(
      [
        { label: labelWith, steps: [{ file: process.execPath, args: args(withCommands), cwd: dir }] },
        { label: labelWithout, steps: [{ file: process.execPath, args: args(without), cwd: dir }] },
      ],
      samples,
      1,
    );
    const perExec = (medianOf(timed, labelWith) - medianOf(timed, labelWithout)) / COMMANDS;
    const floor = median(direct);
    console.log(`\nexec: ${COMMANDS} commands per run (${samples} runs each; BENCH_RUNS/3, min 3)`);
    line("floor: Node spawnSync(\"true\")", `${ms(floor)} per command   (floor)`);
    line(labelWith, ms(medianOf(timed, labelWith)));
    line(labelWithout, ms(medianOf(timed, labelWithout)));
    line("tacit per exec (t(N) - t(0)) / N", `${ms(perExec)} per command   ${(perExec / floor).toFixed(2)}x floor (no target)`);
    return true;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
