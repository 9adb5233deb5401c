// Writes through the file-system capability against Deno's own, in the same run: 2,000 small
// files overwritten through `requestFileSystem` + `FileEntry.write()` vs. raw Deno
// (Deno.writeTextFileSync, with --allow-write, or --allow-all where Deno asks for it: see
// writesDirectory). Each script times its own loop (startup is not in it), both interleaved; the
// headline is writes per second, tacit's against the floor's.
// A checked write costs what a raw one does plus a round trip to the host and the host's checks:
// the path resolved and confined, tacit's own files and what other programs run (git, direnv,
// mise, AI clients' hooks, …) looked up, the directory opened and verified, the file looked at
// before and after it is opened. So the CPU of one write (every process of the run) is printed
// too, and on Linux the system calls of one write (strace, if installed).

import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { denoExecutable } from "../runner/paths.js";
import { median } from "./measure.js";
import { heavyRuns, line, runChecked, tacitBin, tempDir, verdictLine } from "./helpers.js";

const WRITE_FILES = 2_000;
/** Writes counted under strace: enough that what a run does once (loading modules) is a small share of each. */
const STRACED_WRITES = 1_000;
/**
 * tacit's writes per second may be at most this many times fewer than Deno's in memory: a guard
 * against regressions (about 60x on a loaded 2-core machine, where each write's round trip between
 * the sandbox and the host waits for the scheduler), not a goal.
 */
const TARGET_RATIO = 75;

/** The loop's milliseconds, as the script printed them. */
function loopMs(output: string, what: string): number {
  const ms = Number(output.trim().split("\n").at(-1));
  if (!Number.isFinite(ms)) throw new Error(`writes: ${what} printed no time: ${output.slice(0, 500)}`);
  return ms;
}

/** System calls per write by name, from `strace -f -c` of `count` writes less those of none; null where strace cannot run. */
function syscallsPerWrite(script: (count: number) => string, scripts: string, data: string, count: number): Map<string, number> | null {
  if (process.platform !== "linux" || spawnSync("strace", ["-V"]).status !== 0) return null;
  const counts = (writes: number): Map<string, number> | null => {
    const file = path.join(scripts, `strace-${writes}.ts`);
    const out = path.join(scripts, `strace-${writes}.txt`);
    writeFileSync(file, script(writes));
    const run = spawnSync("strace", ["-f", "-c", "-o", out, process.execPath, tacitBin, "run", "--no-check", file], { cwd: data, stdio: "ignore" });
    if (run.status !== 0) return null;
    const calls = new Map<string, number>();
    for (const row of readFileSync(out, "utf8").split("\n")) {
      const fields = row.trim().split(/\s+/);
      const name = fields.at(-1) ?? "";
      // "% time seconds usecs/call calls [errors] syscall"
      if (/^[\d.]+$/.test(fields[0] ?? "") && /^[a-z_0-9]+$/.test(name) && fields.length >= 5) calls.set(name, Number(fields[3]));
    }
    return calls;
  };
  const none = counts(0);
  const some = counts(count);
  if (none === null || some === null) return null;
  const each = new Map<string, number>();
  for (const [name, calls] of some) each.set(name, (calls - (none.get(name) ?? 0)) / count);
  return each;
}

/** One run of `file args` in `cwd`: the loop's milliseconds it printed, and the CPU milliseconds (user + system) of it and every process it started, from bash's `times`. */
function timedRun(file: string, args: readonly string[], cwd: string, outDir: string, what: string): { loopMs: number; cpuMs: number } {
  const out = path.join(outDir, `${what}.out`);
  // What the command prints goes to a file: bash's `times` is all its own stdout holds.
  const run = spawnSync("bash", ["-c", '"$@" > "$0"; status=$?; times; exit $status', out, file, ...args], { cwd, input: "", stdio: ["pipe", "pipe", "pipe"] });
  const printed = readFileSync(out, "utf8");
  rmSync(out, { force: true });
  if (run.status !== 0) throw new Error(`writes: ${what} exited ${run.status}: ${run.stderr.toString().slice(0, 1000)}`);
  // times: the shell's user and system time, then its children's ("0m1.234s 0m0.567s").
  const children = run.stdout.toString().trim().split("\n").at(-1)!.split(" ");
  const seconds = (text: string): number => {
    const [minutes, rest] = text.replace(/s$/, "").split("m");
    return Number(minutes) * 60 + Number(rest);
  };
  return { loopMs: loopMs(printed, what), cpuMs: (seconds(children[0]!) + seconds(children[1]!)) * 1000 };
}

/**
 * Where the files are written: in memory (/dev/shm) where there is such a directory, so that what
 * is measured is the writes' own cost and not the disk's (overwriting a file on ext4 waits for its
 * old data to be flushed, a millisecond a write here, which drowned the checks' cost in noise).
 */
function writesDirectory(): string {
  const shm = "/dev/shm";
  try {
    accessSync(shm, constants.W_OK);
    return mkdtempSync(path.join(shm, "tacit-bench-writes-data-"));
  } catch {
    return tempDir("writes-data");
  }
}

export function benchWrites(runs: number): boolean {
  const n = heavyRuns(runs);
  const scripts = tempDir("writes-scripts");
  const data = writesDirectory();
  try {
    const text = (i: string) => `"line " + ${i} + " ${"abcdefghij".repeat(9)}\\n"`;
    const tacitScript = (count: number) =>
      `requestFileSystem(".", (fs) => {\n` +
      `  const started = Date.now();\n` +
      `  for (let i = 0; i < ${count}; i++) fs.access("f" + i + ".txt").write(${text("i")});\n` +
      `  println(Date.now() - started);\n` +
      `});\n`;
    const floorScript = (count: number) =>
      `const started = performance.now();\n` +
      `for (let i = 0; i < ${count}; i++) Deno.writeTextFileSync("f" + i + ".txt", ${text("i")});\n` +
      `console.log(performance.now() - started);\n`;
    const files = { tacit: path.join(scripts, "writes.ts"), tacitIdle: path.join(scripts, "writes0.ts"), floor: path.join(scripts, "floor.ts"), floorIdle: path.join(scripts, "floor0.ts") };
    writeFileSync(files.tacit, tacitScript(WRITE_FILES));
    writeFileSync(files.tacitIdle, tacitScript(0));
    writeFileSync(files.floor, floorScript(WRITE_FILES));
    writeFileSync(files.floorIdle, floorScript(0));
    const deno = denoExecutable();
    // Deno asks for every permission to write under /dev (as in /dev/shm), not --allow-write alone.
    const floorFlag = data.startsWith("/dev/") ? "--allow-all" : "--allow-write";
    const commands = {
      tacit: () => timedRun(process.execPath, [tacitBin, "run", "--no-check", files.tacit], data, scripts, "tacit"),
      tacitIdle: () => timedRun(process.execPath, [tacitBin, "run", "--no-check", files.tacitIdle], data, scripts, "tacit-idle"),
      floor: () => timedRun(deno, ["run", "--no-config", floorFlag, files.floor], data, scripts, "floor"),
      floorIdle: () => timedRun(deno, ["run", "--no-config", floorFlag, files.floorIdle], data, scripts, "floor-idle"),
    };
    // Both write the same files, which exist from here on (each run overwrites them).
    runChecked(process.execPath, [tacitBin, "run", "--no-check", files.tacit], data);
    runChecked(deno, ["run", "--no-config", floorFlag, files.floor], data);
    const samples = new Map<keyof typeof commands, Array<{ loopMs: number; cpuMs: number }>>();
    const order = Object.keys(commands) as Array<keyof typeof commands>;
    for (let run = 0; run < n; run++) {
      for (const name of run % 2 === 0 ? order : [...order].reverse()) {
        const list = samples.get(name) ?? [];
        list.push(commands[name]());
        samples.set(name, list);
      }
    }
    const loop = (name: keyof typeof commands): number => median(samples.get(name)!.map((s) => s.loopMs));
    const cpu = (name: keyof typeof commands): number => median(samples.get(name)!.map((s) => s.cpuMs));
    const perSecond = (ms: number): number => (WRITE_FILES * 1000) / Math.max(ms, 0.1);
    const tacitRate = perSecond(loop("tacit"));
    const floorRate = perSecond(loop("floor"));
    // CPU per write: the whole run's (every process of it) less that of the same run writing nothing.
    const cpuPerWrite = (work: keyof typeof commands, idle: keyof typeof commands): number => ((cpu(work) - cpu(idle)) * 1000) / WRITE_FILES;
    console.log(`\nwrites: ${WRITE_FILES} files of ~100 bytes overwritten in ${path.dirname(data)}, FileEntry.write() vs Deno.writeTextFileSync (${n} runs each, interleaved; loop timed by each script)`);
    line(`floor: deno run ${floorFlag}`, `${floorRate.toFixed(0).padStart(8)} writes/s  (median loop ${loop("floor").toFixed(1)} ms)`);
    line("tacit run --no-check", `${tacitRate.toFixed(0).padStart(8)} writes/s  (median loop ${loop("tacit").toFixed(1)} ms)`);
    line("CPU per write (all processes, less a run of 0)", `tacit ${cpuPerWrite("tacit", "tacitIdle").toFixed(1)} µs, floor ${cpuPerWrite("floor", "floorIdle").toFixed(1)} µs  (medians; for information)`);
    const met = verdictLine("floor's writes/s over tacit's", floorRate / tacitRate, TARGET_RATIO);
    const calls = syscallsPerWrite(tacitScript, scripts, data, STRACED_WRITES);
    if (calls !== null) {
      const shown = [...calls].filter(([, each]) => each >= 0.5).sort((a, b) => b[1] - a[1]);
      line(`system calls per write (strace -f -c, ${STRACED_WRITES} writes less 0)`, shown.map(([name, each]) => `${name} ${each.toFixed(1)}`).join(", ") + "  (for information)");
    }
    return met;
  } finally {
    rmSync(scripts, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  }
}
