// The cost of the audit log: `tacit run` of a script doing 1,000 file reads, with and without
// --audit-log, interleaved. Every read is three chained, hashed events (requested, decision,
// result) plus the evaluation's start, end and signed head. Target: under 10% overhead on the
// whole run. The same run with no reads gives the fixed part (opening the log, loading the
// signing key) apart from the per-action part.

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { measureInterleaved } from "./measure.js";
import { heavyRuns, line, medianOf, ms, runChecked, tacitBin, tempDir } from "./helpers.js";

const READS = 1_000;
const TARGET_OVERHEAD = 0.1;

export function benchAudit(runs: number): boolean {
  const n = heavyRuns(runs) * 2;
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
    const samples = measureInterleaved(
      [
        { label: labels.plain, steps: [{ file: process.execPath, args: run("reads.ts", false), cwd: dir }] },
        { label: labels.audited, steps: [{ file: process.execPath, args: run("reads.ts", true), cwd: dir }] },
        { label: labels.plainIdle, steps: [{ file: process.execPath, args: run("reads0.ts", false), cwd: dir }] },
        { label: labels.auditedIdle, steps: [{ file: process.execPath, args: run("reads0.ts", true), cwd: dir }] },
      ],
      n,
    );
    const plainMs = medianOf(samples, labels.plain);
    const auditedMs = medianOf(samples, labels.audited);
    const plainIdle = medianOf(samples, labels.plainIdle);
    const auditedIdle = medianOf(samples, labels.auditedIdle);
    console.log(`\naudit: the cost of --audit-log on ${READS} file reads (${n} runs each, interleaved)`);
    line(labels.plain, `median ${ms(plainMs)}   (floor)`);
    line(labels.audited, `median ${ms(auditedMs)}`);
    line(labels.plainIdle, `median ${ms(plainIdle)}`);
    line(labels.auditedIdle, `median ${ms(auditedIdle)}`);
    line("fixed cost (open log, key, sign; 0 reads)", ms(auditedIdle - plainIdle));
    line("per read (3 events)", `${(((auditedMs - auditedIdle) - (plainMs - plainIdle)) / READS * 1000).toFixed(1)} µs`);
    const overhead = auditedMs / plainMs - 1;
    const met = overhead < TARGET_OVERHEAD;
    line("overhead on the whole run (headline)", `${(overhead * 100).toFixed(1)}%  target < ${TARGET_OVERHEAD * 100}%: ${met ? "met" : "MISSED"}`);
    line("log verified before timing", verify.trim().split("\n")[0] ?? "");
    return met;
  } finally {
    if (previousHome === undefined) delete process.env.TACIT_HOME;
    else process.env.TACIT_HOME = previousHome;
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}
