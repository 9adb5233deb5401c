// The cost of the audit log: `tacit run` of a script doing 1,000 file reads, with and without
// --audit-log, interleaved. Every read is three chained, hashed events (requested, decision,
// result) plus the evaluation's start, end and signed head. Target: under 10% overhead on the
// whole run. The same run with no reads gives the fixed part (opening the log, loading the
// signing key, the signed head's fsync) apart from the per-action part.
//
// Every figure is paired by round: each round runs the four commands next to each other, and a
// difference or ratio is taken within the round before the median over rounds. Medians of each
// command taken apart moved by more than the log costs (one bench said 8.5% and the next 20.1%):
// load that changes over the bench's minute lands on some rounds and not others, and a difference
// of two medians took it from whichever side it fell on. The verdict says "met" only when both
// the paired median and the ratio of the medians are under the target, and says when the paired
// quartiles straddle it.
//
// Wall time on a shared two-core machine moves by tens of milliseconds from run to run, more than
// the log costs; the CPU time tacit's own process spends (its main thread, and all its threads:
// V8's compiler and GC helpers compete with the sandbox for the cores) moves by a few. Where
// Linux shows it (/proc/self/task/*/schedstat), it is read at each run's exit, for the same runs
// interleaved again, and the CPU the log adds is reported beside the wall times.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { heavyRuns, line, machineLoad, machineLoadLine, medianOf, ms, runChecked, tacitBin, tempDir } from "./helpers.js";
import { measureInterleaved, median, quantile } from "./measure.js";

const READS = 1_000;
const TARGET_OVERHEAD = 0.1;

/** Loaded into tacit's process with -r: at its exit, the CPU time (ms) of its main thread and of all its threads. */
const HOST_CPU_PRELOAD = `"use strict";
const fs = require("node:fs");
process.on("exit", () => {
  let main = 0, all = 0;
  try {
    for (const task of fs.readdirSync("/proc/self/task")) {
      const ns = Number(fs.readFileSync("/proc/self/task/" + task + "/schedstat", "utf8").split(" ")[0]);
      all += ns;
      if (Number(task) === process.pid) main = ns;
    }
  } catch {
    return; // no schedstat (a kernel without it): nothing is printed, and the bench says so
  }
  fs.writeSync(2, "\\ntacit-bench-host-cpu " + main / 1e6 + " " + all / 1e6 + "\\n");
});
`;

/** The host CPU (main thread, all threads) of one run, in ms, read from what the preload printed; null where it printed nothing. */
function hostCpuOf(args: string[], cwd: string, preload: string): { main: number; all: number } | null {
  const run = spawnSync(process.execPath, ["-r", preload, ...args], { cwd, input: "", stdio: ["pipe", "pipe", "pipe"] });
  if (run.status !== 0) throw new Error(`audit: ${args.join(" ")} exited ${run.status}: ${run.stderr.toString().slice(0, 500)}`);
  const found = /tacit-bench-host-cpu ([\d.]+) ([\d.]+)/.exec(run.stderr.toString());
  return found === null ? null : { main: Number(found[1]), all: Number(found[2]) };
}

export function benchAudit(runs: number): boolean {
  // Twice the rounds of the other heavy benchmarks: the log's cost is a few percent of a run, and a
  // paired median over more rounds is what keeps one bench from saying met and the next missed.
  const n = heavyRuns(runs) * 4;
  const dir = tempDir("audit");
  const home = tempDir("audit-home");
  const previousHome = process.env.TACIT_HOME;
  process.env.TACIT_HOME = home;
  try {
    for (let i = 0; i < 10; i++) writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}: ${"abcdefghij".repeat(9)}\n`);
    const script = (count: number) =>
      `requestFileSystem(".", (fs) => {\n  let n = 0;\n  for (let i = 0; i < ${count}; i++) n += fs.access("f" + (i % 10) + ".txt").read().length;\n  println(n);\n});\n`;
    writeFileSync(path.join(dir, "reads.ts"), script(READS));
    writeFileSync(path.join(dir, "reads0.ts"), script(0));
    const log = path.join(dir, "audit.jsonl");
    const run = (file: string, audited: boolean) => [tacitBin, "run", "--no-check", ...(audited ? ["--audit-log", log] : []), file];

    // Checked once before timing: the same answer, and the log really holds every read.
    const plain = runChecked(process.execPath, run("reads.ts", false), dir).trim();
    const audited = runChecked(process.execPath, run("reads.ts", true), dir).trim();
    if (plain !== audited) throw new Error(`audit: the runs disagree (${plain} vs ${audited})`);
    const reads = readFileSync(log, "utf8").split("\n").filter((l) => l.includes('"kind":"FsRead"')).length;
    if (reads !== READS) throw new Error(`audit: expected ${READS} FsRead events in the log, found ${reads}`);
    const verify = runChecked(process.execPath, [tacitBin, "audit", "verify", log], dir);

    const labels = {
      plain: `tacit run (${READS} reads, no log)`,
      audited: `tacit run --audit-log (${READS} reads)`,
      plainIdle: "tacit run (0 reads, no log)",
      auditedIdle: "tacit run --audit-log (0 reads)",
    };
    const loadBefore = machineLoad();
    const samples = measureInterleaved(
      [
        { label: labels.plain, steps: [{ file: process.execPath, args: run("reads.ts", false), cwd: dir }] },
        { label: labels.audited, steps: [{ file: process.execPath, args: run("reads.ts", true), cwd: dir }] },
        { label: labels.plainIdle, steps: [{ file: process.execPath, args: run("reads0.ts", false), cwd: dir }] },
        { label: labels.auditedIdle, steps: [{ file: process.execPath, args: run("reads0.ts", true), cwd: dir }] },
      ],
      n,
    );
    const wall = (label: string) => samples.get(label)!;
    console.log(`\naudit: the cost of --audit-log on ${READS} file reads (${n} rounds, interleaved; medians)`);
    machineLoadLine(loadBefore, machineLoad());
    line(labels.plain, `median ${ms(medianOf(samples, labels.plain))}   (floor)`);
    line(labels.audited, `median ${ms(medianOf(samples, labels.audited))}`);
    line(labels.plainIdle, `median ${ms(medianOf(samples, labels.plainIdle))}`);
    line(labels.auditedIdle, `median ${ms(medianOf(samples, labels.auditedIdle))}`);
    const cost = costByRound(wall(labels.plain), wall(labels.audited), wall(labels.plainIdle), wall(labels.auditedIdle));
    line("fixed cost, paired (open log, key, sign; 0 reads)", `${ms(median(cost.fixed))} [${quartiles(cost.fixed, 1)}]`);
    line("per read (3 events), paired", `${(median(cost.perRead) * 1000).toFixed(1)} µs [${quartiles(cost.perRead.map((v) => v * 1000), 1)}]`);
    const unpaired = medianOf(samples, labels.audited) / medianOf(samples, labels.plain) - 1;
    const paired = wall(labels.audited).map((audited, round) => audited / wall(labels.plain)[round]! - 1);
    const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
    const met = median(paired) < TARGET_OVERHEAD && unpaired < TARGET_OVERHEAD;
    const straddles = quantile(paired, 0.25) < TARGET_OVERHEAD && quantile(paired, 0.75) >= TARGET_OVERHEAD;
    line(
      "overhead on the whole run, paired (headline)",
      `${percent(median(paired))} [${percent(quantile(paired, 0.25))} .. ${percent(quantile(paired, 0.75))}]  target < ${TARGET_OVERHEAD * 100}%: ` +
        `${met ? "met" : "MISSED"}${straddles ? " (the quartiles straddle the target)" : ""}`,
    );
    line("overhead, ratio of the medians", `${percent(unpaired)}${(unpaired < TARGET_OVERHEAD) === (median(paired) < TARGET_OVERHEAD) ? "" : "  (disagrees with the paired median: not met)"}`);
    line("log verified before timing", verify.trim().split("\n")[0] ?? "");
    logAlone(dir, n);

    const notMeasured = () => line("host CPU the log adds", "not measured (needs Linux's /proc/self/task/*/schedstat)");
    if (!existsSync("/proc/self/task")) {
      notMeasured();
      return met;
    }
    const preload = path.join(dir, "host-cpu.cjs");
    writeFileSync(preload, HOST_CPU_PRELOAD);
    const cpu = new Map<string, { main: number[]; all: number[] }>(Object.values(labels).map((label) => [label, { main: [], all: [] }]));
    const cpuRuns: Array<[string, string[]]> = [
      [labels.plain, run("reads.ts", false)],
      [labels.audited, run("reads.ts", true)],
      [labels.plainIdle, run("reads0.ts", false)],
      [labels.auditedIdle, run("reads0.ts", true)],
    ];
    // Apart from the timed runs, whose wall time the preload would add to. Every other round in the
    // reverse order: a run starts while the last one's sandbox is still being torn down.
    for (let round = 0; round < n; round++) {
      for (const [label, args] of round % 2 === 0 ? cpuRuns : [...cpuRuns].reverse()) {
        const used = hostCpuOf(args, dir, preload);
        if (used === null) {
          notMeasured();
          return met;
        }
        cpu.get(label)!.main.push(used.main);
        cpu.get(label)!.all.push(used.all);
      }
    }
    console.log(`  host CPU of tacit's process (${n} rounds, interleaved; medians, paired by round [quartiles])`);
    for (const which of ["main", "all"] as const) {
      const of = (label: string) => cpu.get(label)![which];
      const name = which === "main" ? "main thread" : "all threads";
      const added = of(labels.audited).map((audited, round) => audited - of(labels.plain)[round]!);
      const cpuCost = costByRound(of(labels.plain), of(labels.audited), of(labels.plainIdle), of(labels.auditedIdle));
      line(`  ${name}: ${labels.plain}`, ms(median(of(labels.plain))));
      line(`  ${name}: the log adds`, `${ms(median(added))} [${quartiles(added, 1)}]`);
      line(
        `  ${name}: fixed, per read`,
        `${median(cpuCost.fixed).toFixed(1)} ms [${quartiles(cpuCost.fixed, 1)}], ${(median(cpuCost.perRead) * 1000).toFixed(1)} µs [${quartiles(cpuCost.perRead.map((v) => v * 1000), 1)}]`,
      );
    }
    rememberedLogsAtStart(dir, home, preload, n);
    return met;
  } finally {
    if (previousHome === undefined) delete process.env.TACIT_HOME;
    else process.env.TACIT_HOME = previousHome;
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

/** How many logs tacit's list of its own audit logs holds at most (remembered-files.ts MAX_FILES): a log rotated daily fills it. */
const REMEMBERED_LOGS = 256;

/**
 * What a long list of remembered audit logs (own-audit-logs.json) costs each start of `tacit run --audit-log`
 * (0 reads), a new log each run as with daily rotation: host CPU with REMEMBERED_LOGS logs on the list against
 * one, paired by round. Each run gets a home of its own holding the list and the bench's signing key (so that
 * no run makes a key). The logs on the list exist, as rotated logs do; their locks (FILE.lock, refused too) do not.
 */
function rememberedLogsAtStart(dir: string, benchHome: string, preload: string, rounds: number): void {
  const logs = tempDir("audit-remembered");
  try {
    const day = 24 * 60 * 60 * 1000;
    const listOf = (count: number): string => {
      const files = Array.from({ length: count }, (_, i) => {
        const file = path.join(logs, `old-${i}.jsonl`);
        writeFileSync(file, "");
        return { path: file, kind: "audit-log", usedAt: new Date(Date.now() - (i + 1) * day).toISOString() };
      });
      return JSON.stringify({ version: 1, files }, null, 2) + "\n";
    };
    const lists = { long: listOf(REMEMBERED_LOGS), short: listOf(1) };
    const key = readFileSync(path.join(benchHome, "audit-key.json"));
    const cpu = { long: { main: [] as number[], all: [] as number[] }, short: { main: [] as number[], all: [] as number[] } };
    let runs = 0;
    for (let round = 0; round < rounds; round++) {
      for (const which of round % 2 === 0 ? (["long", "short"] as const) : (["short", "long"] as const)) {
        const home = path.join(logs, `home-${runs}`);
        mkdirSync(home, { mode: 0o700 });
        writeFileSync(path.join(home, "audit-key.json"), key, { mode: 0o600 });
        writeFileSync(path.join(home, "own-audit-logs.json"), lists[which], { mode: 0o600 });
        process.env.TACIT_HOME = home;
        const used = hostCpuOf([tacitBin, "run", "--no-check", "--audit-log", path.join(logs, `new-${runs++}.jsonl`), "reads0.ts"], dir, preload);
        if (used === null) return;
        cpu[which].main.push(used.main);
        cpu[which].all.push(used.all);
      }
    }
    process.env.TACIT_HOME = benchHome;
    const added = (which: "main" | "all") => cpu.long[which].map((long, round) => long - cpu.short[which][round]!);
    line(
      `  start with ${REMEMBERED_LOGS} remembered logs, not 1`,
      `main thread +${median(added("main")).toFixed(1)} ms [${quartiles(added("main"), 1)}], all threads +${median(added("all")).toFixed(1)} ms [${quartiles(added("all"), 1)}]  (${rounds} rounds, paired)`,
    );
  } finally {
    process.env.TACIT_HOME = benchHome;
    rmSync(logs, { recursive: true, force: true });
  }
}

/**
 * The log alone, in a fresh process per round (see audit-log-alone.ts): the process's CPU by phase, medians [quartiles].
 * Each round runs it a second time under --no-opt (no optimizing compiler), interleaved: the difference in the events'
 * CPU is what V8's optimizing compiler spends on the log's code, on threads of its own (the "all threads" figure's
 * excess over the main thread's), code that a run of a thousand reads is mostly over before it can use.
 */
function logAlone(dir: string, rounds: number): void {
  const child = fileURLToPath(new URL("./audit-log-alone.js", import.meta.url));
  const log = path.join(dir, "alone.jsonl");
  type Phases = { open: number[]; events: number[]; head: number[]; headWallMs: number[]; close: number[] };
  const empty = (): Phases => ({ open: [], events: [], head: [], headWallMs: [], close: [] });
  const phases = empty();
  const unoptimized = empty();
  for (let round = 0; round < rounds; round++) {
    const order: Array<[Phases, string[]]> = [
      [phases, []],
      [unoptimized, ["--no-opt"]],
    ];
    for (const [into, flags] of round % 2 === 0 ? order : [...order].reverse()) {
      const run = spawnSync(process.execPath, [...flags, child, log, String(READS)], { cwd: dir, input: "", stdio: ["pipe", "pipe", "pipe"] });
      if (run.status !== 0) throw new Error(`audit: ${child} exited ${run.status}: ${run.stderr.toString().slice(0, 500)}`);
      const spent = JSON.parse(run.stdout.toString()) as Record<keyof Phases, number>;
      for (const key of Object.keys(into) as Array<keyof Phases>) into[key].push(spent[key]);
    }
  }
  const shown = (values: number[]) => `${median(values).toFixed(2)} ms [${quartiles(values, 2)}]`;
  console.log(`  the log alone: CPU of a fresh process, all threads (${rounds} runs; medians [quartiles])`);
  line("  open (key, lock, tail, anchor)", shown(phases.open));
  line(`  ${READS} reads' events (${READS * 3 + 2} lines)`, `${shown(phases.events)}, ${((median(phases.events) / READS) * 1000).toFixed(1)} µs a read`);
  const compiler = phases.events.map((events, round) => events - unoptimized.events[round]!);
  line("    the same under --no-opt", shown(unoptimized.events));
  line("    of which the optimizing compiler, paired", shown(compiler));
  line("  signed head (CPU; wall: its fsync, anchor)", `${shown(phases.head)}; wall ${shown(phases.headWallMs)}`);
  line("  close", shown(phases.close));
}

/**
 * The log's cost in each round, from its four runs: fixed (audited minus plain, 0 reads) and per
 * read (the same difference at READS reads, less the fixed part, over READS), in the samples' unit.
 */
function costByRound(plain: number[], audited: number[], plainIdle: number[], auditedIdle: number[]): { fixed: number[]; perRead: number[] } {
  const fixed = auditedIdle.map((value, round) => value - plainIdle[round]!);
  const perRead = audited.map((value, round) => (value - plain[round]! - fixed[round]!) / READS);
  return { fixed, perRead };
}

/** "q1 .. q3" of `values`, in `digits` decimals. */
function quartiles(values: number[], digits: number): string {
  return `${quantile(values, 0.25).toFixed(digits)} .. ${quantile(values, 0.75).toFixed(digits)}`;
}
