// The file-system capability against the tools it stands in for, in the same run:
//  - reads: 10,000 small files read through `requestFileSystem` + `FileEntry.read()` vs. raw
//    Deno (`--allow-read`, Deno.readTextFileSync). Target: at most 4x.
//  - grepRecursive over a generated 20,000-file tree vs. `grep -rn`. Target: at most 1.5x. The
//    least a Node loop with grepRecursive's system calls costs is printed too (search-floor.ts),
//    and the same loop opening files by name as grep does, not through /proc.
// Both are whole-process timings. The headline ratio is the loop's: each command's own
// startup (the same command doing no work) is subtracted from it before dividing, so the
// fixed cost of starting tacit (see the startup benchmark) does not hide or inflate the
// per-file cost. The whole-process ratio is printed too. For reads, so is the least a read
// checked by a separate process can cost here: the bare round trip (round-trip.ts) plus the
// host's checked open and read alone (checked-read.ts), and, on Linux, the CPU time the host and
// the sandbox each spend on each thousand reads (read-split.ts), and the machine's load before
// and after timing (tacit's spinning gate turns spinning off on a loaded machine).

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { denoExecutable } from "../runner/paths.js";
import { type CommandSpec, measureInterleaved, median } from "./measure.js";
import { heavyRuns, line, machineLoad, machineLoadLine, medianOf, ms, runChecked, tacitBin, tempDir, verdictLine } from "./helpers.js";
import { checkedReadMicros } from "./checked-read.js";
import { readSplit } from "./read-split.js";
import { pipeRoundTripMicros } from "./round-trip.js";
import { writeSearchFloor } from "./search-floor.js";

const READ_FILES = 10_000;
/** The reads timed together in the loop's shape (see benchReads). */
const READS_PER_SLICE = 1_000;
const GREP_DIRS = 200;
const GREP_FILES_PER_DIR = 100;
const PATTERN = "tacitneedle";

interface LoopComparison {
  title: string;
  floorWork: string;
  floorIdle: string;
  tacitWork: string;
  tacitIdle: string;
  target: number;
}

/** Prints medians, the loop-only ratio (the headline, judged against the target) and the whole-process ratio. */
function reportLoop(c: LoopComparison, samples: Map<string, number[]>): boolean {
  const floorWork = medianOf(samples, c.floorWork);
  const floorIdle = medianOf(samples, c.floorIdle);
  const tacitWork = medianOf(samples, c.tacitWork);
  const tacitIdle = medianOf(samples, c.tacitIdle);
  console.log(`\n${c.title}`);
  line(c.floorWork, `median ${ms(floorWork)}   (floor)`);
  line(c.floorIdle, `median ${ms(floorIdle)}   (floor's startup)`);
  line(c.tacitWork, `median ${ms(tacitWork)}`);
  line(c.tacitIdle, `median ${ms(tacitIdle)}   (tacit's startup)`);
  const floorLoop = floorWork - floorIdle;
  const tacitLoop = tacitWork - tacitIdle;
  line("floor loop (work - startup)", `${ms(floorLoop)}`);
  line("tacit loop (work - startup)", `${ms(tacitLoop)}`);
  line("whole process", `${(tacitWork / floorWork).toFixed(2)}x floor  (for information)`);
  return verdictLine("loop only (headline)", tacitLoop / Math.max(floorLoop, 0.1), c.target);
}

function tacitRun(label: string, script: string, cwd: string): CommandSpec {
  return { label, steps: [{ file: process.execPath, args: [tacitBin, "run", "--no-check", script], cwd }] };
}

export function benchReads(runs: number): boolean {
  const n = heavyRuns(runs);
  const scripts = tempDir("reads-scripts");
  const data = tempDir("reads-data");
  try {
    let expected = 0;
    for (let i = 0; i < READ_FILES; i++) {
      // ~100 bytes each, varying a little.
      const text = `file ${i}: ${"abcdefghij".repeat(9)}\n`;
      expected += text.length;
      writeFileSync(path.join(data, `f${i}.txt`), text);
    }
    const tacitScript = (count: number) =>
      `requestFileSystem(".", (fs) => {\n` +
      `  let n = 0;\n` +
      `  for (let i = 0; i < ${count}; i++) n += fs.access("f" + i + ".txt").read().length;\n` +
      `  println(n);\n` +
      `});\n`;
    const floorScript = (count: number) =>
      `let n = 0;\n` + `for (let i = 0; i < ${count}; i++) n += Deno.readTextFileSync("f" + i + ".txt").length;\n` + `console.log(n);\n`;
    // For information: the loop's shape, each thousand reads timed by the script's own clock
    // (the host's cold phase: before V8 has optimized its request path, a thousand reads cost
    // three or four times a warm thousand). Run apart from the timed loops, so those stay as they are.
    const tacitByThousands =
      `requestFileSystem(".", (fs) => {\n` +
      `  let n = 0;\n  let t = Date.now();\n  const each = [];\n` +
      `  for (let i = 0; i < ${READ_FILES}; i++) {\n` +
      `    n += fs.access("f" + i + ".txt").read().length;\n` +
      `    if (i % ${READS_PER_SLICE} === ${READS_PER_SLICE - 1}) { const now = Date.now(); each.push(now - t); t = now; }\n` +
      `  }\n` +
      `  println(n + " " + each.join(" "));\n` +
      `});\n`;
    const floorByThousands =
      `let n = 0;\nlet t = Date.now();\nconst each = [];\n` +
      `for (let i = 0; i < ${READ_FILES}; i++) {\n` +
      `  n += Deno.readTextFileSync("f" + i + ".txt").length;\n` +
      `  if (i % ${READS_PER_SLICE} === ${READS_PER_SLICE - 1}) { const now = Date.now(); each.push(now - t); t = now; }\n` +
      `}\n` +
      `console.log(n + " " + each.join(" "));\n`;
    const files = {
      tacitByThousands: path.join(scripts, "reads-by-thousands.ts"),
      floorByThousands: path.join(scripts, "floor-by-thousands.ts"),
      tacitWork: path.join(scripts, "reads.ts"),
      tacitHalf: path.join(scripts, "reads-half.ts"),
      tacitIdle: path.join(scripts, "reads0.ts"),
      floorWork: path.join(scripts, "floor.ts"),
      floorHalf: path.join(scripts, "floor-half.ts"),
      floorIdle: path.join(scripts, "floor0.ts"),
    };
    writeFileSync(files.tacitByThousands, tacitByThousands);
    writeFileSync(files.floorByThousands, floorByThousands);
    writeFileSync(files.tacitWork, tacitScript(READ_FILES));
    writeFileSync(files.tacitHalf, tacitScript(READ_FILES / 2));
    writeFileSync(files.tacitIdle, tacitScript(0));
    writeFileSync(files.floorWork, floorScript(READ_FILES));
    writeFileSync(files.floorHalf, floorScript(READ_FILES / 2));
    writeFileSync(files.floorIdle, floorScript(0));

    const deno = denoExecutable();
    const denoArgs = (script: string) => ["run", "--no-config", "--allow-read", script];
    const labels: LoopComparison = {
      title: `reads: ${READ_FILES} files of ~100 bytes, FileEntry.read() vs Deno.readTextFileSync (${n} runs each, interleaved; BENCH_RUNS/3, min 3)`,
      floorWork: `floor: deno run --allow-read (${READ_FILES} reads)`,
      floorIdle: "floor: deno run --allow-read (0 reads)",
      tacitWork: `tacit run --no-check (${READ_FILES} reads)`,
      tacitIdle: "tacit run --no-check (scope, 0 reads)",
      target: 4,
    };

    // Both must read the same bytes before either is timed.
    const fromTacit = runChecked(process.execPath, [tacitBin, "run", "--no-check", files.tacitWork], data).trim();
    const fromDeno = runChecked(deno, denoArgs(files.floorWork), data).trim();
    if (fromTacit !== String(expected) || fromDeno !== String(expected)) {
      throw new Error(`reads: expected ${expected} characters, tacit read ${fromTacit}, deno read ${fromDeno}`);
    }

    const loadBefore = machineLoad();
    const floorHalf = `floor: deno run --allow-read (${READ_FILES / 2} reads)`;
    const tacitHalf = `tacit run --no-check (${READ_FILES / 2} reads)`;
    const samples = measureInterleaved(
      [
        { label: labels.floorWork, steps: [{ file: deno, args: denoArgs(files.floorWork), cwd: data }] },
        { label: labels.floorIdle, steps: [{ file: deno, args: denoArgs(files.floorIdle), cwd: data }] },
        tacitRun(labels.tacitWork, files.tacitWork, data),
        tacitRun(labels.tacitIdle, files.tacitIdle, data),
        { label: floorHalf, steps: [{ file: deno, args: denoArgs(files.floorHalf), cwd: data }] },
        tacitRun(tacitHalf, files.tacitHalf, data),
      ],
      n,
    );
    const loadAfter = machineLoad();
    const met = reportLoop(labels, samples);
    machineLoadLine(loadBefore, loadAfter);
    // For information: the second half of the loop alone, after both processes' JIT has warmed
    // up (tacit's host takes a few thousand requests to reach its steady per-read time; raw
    // Deno warms up too), so the headline is not read as warm-up cost only.
    const tacitWarm = medianOf(samples, labels.tacitWork) - medianOf(samples, tacitHalf);
    const floorWarm = medianOf(samples, labels.floorWork) - medianOf(samples, floorHalf);
    line(`reads ${READ_FILES / 2 + 1}-${READ_FILES} (warm; t(${READ_FILES}) - t(${READ_FILES / 2}))`, `tacit ${ms(tacitWarm)}, floor ${ms(floorWarm)}: ${(tacitWarm / Math.max(floorWarm, 0.1)).toFixed(2)}x  (for information)`);
    line("characters read (checked before timing)", `${expected}, the same from both`);
    const slices = (command: string, args: string[]): string => {
      const runsBySlice: number[][] = [];
      for (let run = 0; run < n; run++) {
        const [read, ...each] = runChecked(command, args, data).trim().split(" ").map(Number);
        if (read !== expected || each.length !== READ_FILES / READS_PER_SLICE) throw new Error(`reads by thousands: expected ${expected} characters and ${READ_FILES / READS_PER_SLICE} times, got ${read} and ${each.length}`);
        each.forEach((msTaken, slice) => (runsBySlice[slice] ??= []).push(msTaken!));
      }
      return runsBySlice.map((times) => median(times).toFixed(0)).join(" ");
    };
    line(`each ${READS_PER_SLICE} reads in turn, ms (medians of ${n})`, `tacit ${slices(process.execPath, [tacitBin, "run", "--no-check", files.tacitByThousands])}  (for information)`);
    line("", `floor ${slices(deno, denoArgs(files.floorByThousands))}  (for information)`);
    if (process.platform === "linux") {
      // Which side those thousands' time goes to: CPU ms each spends on them (see read-split.ts).
      const split = readSplit(scripts, data, READ_FILES, READS_PER_SLICE, n, expected);
      const cpu = (values: number[]): string => values.map((value) => value.toFixed(0)).join(" ");
      line(`each ${READS_PER_SLICE} reads, CPU ms (medians of ${n})`, `host main thread       ${cpu(split.hostMain)}  (TACIT_SPIN=never; for information)`);
      line("", `host other threads     ${cpu(split.hostOther)}  (V8's compiler, GC helpers; for information)`);
      line("", `sandbox main thread    ${cpu(split.sandboxMain)}  (for information)`);
      line("", `sandbox other threads  ${cpu(split.sandboxOther)}  (for information)`);
    }
    // For information: what the protocol alone costs per read on this machine, measured now.
    const floorPerRead = ((medianOf(samples, labels.floorWork) - medianOf(samples, labels.floorIdle)) / READ_FILES) * 1000;
    const tacitPerRead = ((medianOf(samples, labels.tacitWork) - medianOf(samples, labels.tacitIdle)) / READ_FILES) * 1000;
    const ofFloor = (micros: number) => `${micros.toFixed(1)} µs = ${(micros / Math.max(floorPerRead, 0.01)).toFixed(2)}x the floor's ${floorPerRead.toFixed(1)} µs per read`;
    let spinningRoundTrip = 0;
    const modes = [
      ["sleeping", "a pipe Deno sleeps on"],
      ["spinning", "tacit's sandbox input, Deno spinning"],
      ["both-spinning", "and Node spinning as tacit's host does"],
    ] as const;
    for (const [mode, what] of modes) {
      const roundTrip = pipeRoundTripMicros(scripts, READ_FILES, n, mode);
      if (mode === "both-spinning") spinningRoundTrip = roundTrip;
      line(`bare round trip Node <-> Deno, ${what}`, `${ofFloor(roundTrip)}  (for information)`);
    }
    const checkedRead = checkedReadMicros(scripts, data, READ_FILES, n, expected);
    line("host's checked open+read, bare Node loop", `${ofFloor(checkedRead)}  (for information)`);
    // No read checked by a separate process can cost less here: the headline's own floor.
    line("  + round trip, both spinning: the least possible", `${ofFloor(checkedRead + spinningRoundTrip)}  (for information)`);
    line("tacit per read", `${ofFloor(tacitPerRead)}  (for information)`);
    return met;
  } finally {
    rmSync(scripts, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  }
}

export function benchGrepRecursive(runs: number): boolean {
  const n = heavyRuns(runs);
  const scripts = tempDir("grep-scripts");
  const tree = tempDir("grep-tree");
  const small = tempDir("grep-one");
  try {
    // 200 dirs x 100 files, five lines each; every seventh file has one matching line.
    let expected = 0;
    for (let d = 0; d < GREP_DIRS; d++) {
      const dir = path.join(tree, `d${d}`);
      mkdirSync(dir);
      for (let f = 0; f < GREP_FILES_PER_DIR; f++) {
        const k = d * GREP_FILES_PER_DIR + f;
        const hit = k % 7 === 0;
        if (hit) expected++;
        const lines = [
          `// file ${k} in directory ${d}`,
          `const value${k} = ${k * 31} + offset;`,
          hit ? `// ${PATTERN}: marker for file ${k}` : `// nothing to see in file ${k}`,
          `export function f${k}(x: number) { return x * ${k}; }`,
          `// end of file ${k}`,
        ];
        writeFileSync(path.join(dir, `f${f}.ts`), lines.join("\n") + "\n");
      }
    }
    // The floor's startup: grep over a directory holding one matching file (grep exits 1
    // when nothing matches, which the timer would take for a failure).
    writeFileSync(path.join(small, "one.ts"), `// ${PATTERN}\n`);

    const files = {
      tacitWork: path.join(scripts, "grep.ts"),
      tacitIdle: path.join(scripts, "scope.ts"),
    };
    writeFileSync(files.tacitWork, `requestFileSystem(".", (fs) => {\n  println(fs.grepRecursive(".", "${PATTERN}").length);\n});\n`);
    writeFileSync(files.tacitIdle, `requestFileSystem(".", (fs) => {\n  println(0);\n});\n`);

    const total = GREP_DIRS * GREP_FILES_PER_DIR;
    const labels: LoopComparison = {
      title: `grepRecursive: ${total} files (${GREP_DIRS} dirs x ${GREP_FILES_PER_DIR}) vs grep -rn (${n} runs each, interleaved; BENCH_RUNS/3, min 3)`,
      floorWork: `floor: grep -rn (${total} files)`,
      floorIdle: "floor: grep -rn (1 file)",
      tacitWork: `tacit run --no-check grepRecursive`,
      tacitIdle: "tacit run --no-check (scope only)",
      target: 1.5,
    };

    const bareLoop = writeSearchFloor(scripts);
    const fromGrep = runChecked("grep", ["-rn", PATTERN, "."], tree).split("\n").filter((l) => l !== "").length;
    const fromTacit = Number(runChecked(process.execPath, [tacitBin, "run", "--no-check", files.tacitWork], tree).trim());
    const fromBare = Number(runChecked(process.execPath, [bareLoop, tree, PATTERN], tree).trim());
    const fromBareByName = Number(runChecked(process.execPath, [bareLoop, tree, PATTERN, "by-name"], tree).trim());
    if (fromGrep !== expected || fromTacit !== expected || fromBare !== expected || fromBareByName !== expected) {
      throw new Error(
        `grepRecursive: expected ${expected} matches, grep -rn found ${fromGrep}, grepRecursive found ${fromTacit}, ` +
          `the bare Node loop ${fromBare}, opening files by name ${fromBareByName}`,
      );
    }

    const bareWork = `bare Node loop (${total} files)`;
    const bareIdle = "bare Node loop (1 file)";
    const bareByName = `bare Node loop, files by name (${total} files)`;
    const samples = measureInterleaved(
      [
        { label: labels.floorWork, steps: [{ file: "grep", args: ["-rn", PATTERN, "."], cwd: tree }] },
        { label: labels.floorIdle, steps: [{ file: "grep", args: ["-rn", PATTERN, "."], cwd: small }] },
        tacitRun(labels.tacitWork, files.tacitWork, tree),
        tacitRun(labels.tacitIdle, files.tacitIdle, tree),
        { label: bareWork, steps: [{ file: process.execPath, args: [bareLoop, tree, PATTERN], cwd: tree }] },
        { label: bareIdle, steps: [{ file: process.execPath, args: [bareLoop, small, PATTERN], cwd: small }] },
        { label: bareByName, steps: [{ file: process.execPath, args: [bareLoop, tree, PATTERN, "by-name"], cwd: tree }] },
      ],
      n,
    );
    const met = reportLoop(labels, samples);
    line("matching lines (checked before timing)", `${expected}, the same from grep -rn, grepRecursive and both bare Node loops`);
    // For information: the least a Node search with grepRecursive's system calls costs here (search-floor.ts).
    const floorLoop = medianOf(samples, labels.floorWork) - medianOf(samples, labels.floorIdle);
    const bareLoopMs = medianOf(samples, bareWork) - medianOf(samples, bareIdle);
    const tacitLoop = medianOf(samples, labels.tacitWork) - medianOf(samples, labels.tacitIdle);
    line("bare Node loop, same system calls (loop)", `${ms(bareLoopMs)} = ${(bareLoopMs / Math.max(floorLoop, 0.1)).toFixed(2)}x grep -rn's loop  (for information)`);
    // For information: the same loop opening each file by name, as grep does (search-floor.ts): what is left is Node's own cost per file.
    const byNameLoopMs = medianOf(samples, bareByName) - medianOf(samples, bareIdle);
    line("  files opened by name, not through /proc", `${ms(byNameLoopMs)} = ${(byNameLoopMs / Math.max(floorLoop, 0.1)).toFixed(2)}x grep -rn's loop  (for information)`);
    line("tacit loop / bare Node loop", `${(tacitLoop / Math.max(bareLoopMs, 0.1)).toFixed(2)}x  (for information)`);
    return met;
  } finally {
    for (const dir of [scripts, tree, small]) rmSync(dir, { recursive: true, force: true });
  }
}
