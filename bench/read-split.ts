// Where each thousand reads' time goes: the CPU time tacit's host (Node) and its sandbox (Deno)
// spend on each thousand reads of a loop, each on its main thread and on its other threads
// (V8's compiler and GC helpers, mostly). The reads bench's "each 1000 reads in turn" line shows
// the first thousands costing several times a warm thousand; this says on which side.
//
// Measured from outside tacit, so that nothing in tacit carries the bench's instruments: a Node
// process of its own starts `tacit run`, reads /proc/<pid>/task/*/schedstat (CPU time in ns per
// thread) of the host and of its Deno every millisecond, and interpolates them at the times the
// script took (Date.now() before its loop and after each thousand reads, which it prints).
// TACIT_SPIN=never: a side spinning while it waits for the other counts its wait as CPU time.
// Linux only (/proc); the sampling takes a little CPU of its own, so this run is apart from the
// timed ones.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { median } from "./measure.js";
import { runChecked, tacitBin } from "./helpers.js";

// argv: tacit's bin, the script, its working directory. Prints JSON: for each slice of the loop,
// [host main, host other threads, sandbox main, sandbox other threads] in ms, and what the script printed.
const SAMPLER = `const { spawn } = require("node:child_process");
const { readdirSync, readFileSync } = require("node:fs");
const [tacitBin, script, cwd] = process.argv.slice(2);
const read = (file) => { try { return readFileSync(file, "utf8"); } catch { return null; } };
/** [main thread, other threads] CPU ns of process pid, or null once it is gone. */
function cpuOf(pid) {
  let tids;
  try { tids = readdirSync("/proc/" + pid + "/task"); } catch { return null; }
  let main = 0, other = 0;
  for (const tid of tids) {
    const stat = read("/proc/" + pid + "/task/" + tid + "/schedstat");
    if (stat === null) continue;
    const ns = Number(stat.split(" ")[0]);
    if (tid === String(pid)) main = ns; else other += ns;
  }
  return [main, other];
}
/** The sandbox's Deno among pid's descendants (behind unshare and setpriv, where tacit uses them). */
function denoBelow(pid) {
  const children = (read("/proc/" + pid + "/task/" + pid + "/children") ?? "").trim().split(/\\s+/).filter(Boolean);
  for (const child of children) {
    if ((read("/proc/" + child + "/comm") ?? "").trim() === "deno" && (read("/proc/" + child + "/cmdline") ?? "").includes("bootstrap")) return Number(child);
    const below = denoBelow(child);
    if (below !== null) return below;
  }
  return null;
}
const child = spawn(process.execPath, [tacitBin, "run", "--no-check", script], { cwd, stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, TACIT_SPIN: "never" } });
let output = "";
child.stdout.setEncoding("utf8").on("data", (text) => (output += text));
const samples = [];
let deno = null;
const sample = () => {
  const host = cpuOf(child.pid);
  deno ??= denoBelow(child.pid);
  const sandbox = deno === null ? null : cpuOf(deno);
  if (host !== null && sandbox !== null) samples.push([performance.timeOrigin + performance.now(), ...host, ...sandbox]);
};
const timer = setInterval(sample, 1);
child.on("exit", (code) => {
  clearInterval(timer);
  if (code !== 0) { console.error("tacit exited " + code); process.exit(1); }
  const [printed, ...times] = output.trim().split(" ");
  /** The four counters at time t, interpolated between the samples around it. */
  const at = (t) => {
    const after = samples.findIndex((s) => s[0] >= t);
    if (after <= 0) throw new Error("no sample around " + t);
    const [a, b] = [samples[after - 1], samples[after]];
    const f = (t - a[0]) / (b[0] - a[0]);
    return [1, 2, 3, 4].map((i) => a[i] + (b[i] - a[i]) * f);
  };
  const marks = times.map(Number).map(at);
  const slices = marks.slice(1).map((m, i) => m.map((v, k) => (v - marks[i][k]) / 1e6));
  console.log(JSON.stringify({ printed, slices }));
});
`;

export interface SideSplit {
  hostMain: number[];
  hostOther: number[];
  sandboxMain: number[];
  sandboxOther: number[];
}

/**
 * Medians over `runs` runs of the CPU ms each side spends on each `perSlice` reads of `count`
 * files f0.txt … in `dataDir`; throws unless each run read `expectedChars`.
 */
export function readSplit(scratchDir: string, dataDir: string, count: number, perSlice: number, runs: number, expectedChars: number): SideSplit {
  const sampler = path.join(scratchDir, "read-split.cjs");
  writeFileSync(sampler, SAMPLER);
  const script = path.join(scratchDir, "read-split.ts");
  writeFileSync(
    script,
    `requestFileSystem(".", (fs) => {\n` +
      `  let n = 0;\n  const times = [Date.now()];\n` +
      `  for (let i = 0; i < ${count}; i++) {\n` +
      `    n += fs.access("f" + i + ".txt").read().length;\n` +
      `    if (i % ${perSlice} === ${perSlice - 1}) times.push(Date.now());\n` +
      `  }\n` +
      `  println(n + " " + times.join(" "));\n` +
      `});\n`,
  );
  const bySide: number[][][] = [[], [], [], []];
  for (let run = 0; run < runs; run++) {
    const { printed, slices } = JSON.parse(runChecked(process.execPath, [sampler, tacitBin, script, dataDir], dataDir)) as { printed: string; slices: number[][] };
    if (printed !== String(expectedChars) || slices.length !== count / perSlice) throw new Error(`read split: expected ${expectedChars} characters and ${count / perSlice} slices, got ${printed} and ${slices.length}`);
    slices.forEach((slice, index) => slice.forEach((msTaken, side) => (bySide[side]![index] ??= []).push(msTaken)));
  }
  const medians = (side: number): number[] => bySide[side]!.map((values) => median(values));
  return { hostMain: medians(0), hostOther: medians(1), sandboxMain: medians(2), sandboxOther: medians(3) };
}
