// When tacit spins (runner/spin-read.ts spinningPays): not where other work keeps the machine's
// CPUs busy, and not switched off by its own spinning. The gate once counted the one-minute load
// average, tacit's own processes in it: alone on a machine of two CPUs, a long loop of reads with
// its host and its sandbox spinning brought that load to about 2 by itself, and turned its own
// spinning off. It now counts others' runnable tasks (OthersLoad), which these check on counts
// given to it, and on a real `tacit run` beside real processes that keep every CPU busy.

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { OthersLoad, runnableNow } from "../../runner/spin-read.js";
import { childEnv, tacitBin, tempDir } from "../helpers.js";
import { commandLineOf, descendantsOf } from "../processes.js";

const O_NONBLOCK = 0o4000;
/** As spinningPays counts: every 50 ms while requests come. */
const COUNT_EVERY_MS = 50;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** When `tacit run`'s first request comes, about, in ms from its start: its gate's first count. */
const FIRST_REQUEST_MS = 200;

/** Feeds `gate` a count every COUNT_EVERY_MS from `from` ms for `forMs` ms; returns whether it was busy after each. */
function countFor(gate: OthersLoad, from: number, forMs: number, count: (i: number) => { runnable: number; own: number }): boolean[] {
  const busy: boolean[] = [];
  for (let i = 0; i * COUNT_EVERY_MS < forMs; i++) {
    const { runnable, own } = count(i);
    gate.counted(runnable, own, from + i * COUNT_EVERY_MS);
    busy.push(gate.busy);
  }
  return busy;
}

describe("OthersLoad", () => {
  it("never calls a machine of two CPUs busy with only tacit's own spinning on it, however long it spins", () => {
    const gate = new OthersLoad(2);
    // Ten minutes of a loop of reads: the host and a spinning sandbox runnable at every count, and
    // now and then one of V8's threads or a kernel thread besides (1 count in 8, as measured here).
    const busy = countFor(gate, FIRST_REQUEST_MS, 600_000, (i) => ({ runnable: i % 8 === 0 ? 3 : 2, own: 2 }));
    expect(busy.filter(Boolean).length, "counts after which the machine was called busy").toBe(0);
  });

  it("calls a machine of two CPUs busy within about a second of another process starting to compute, and free again once it stops", () => {
    const gate = new OthersLoad(2);
    expect(countFor(gate, FIRST_REQUEST_MS, 5_000, () => ({ runnable: 2, own: 2 })).some(Boolean)).toBe(false);
    const computing = countFor(gate, 5_000 + FIRST_REQUEST_MS, 5_000, () => ({ runnable: 3, own: 2 }));
    const firstBusy = computing.indexOf(true);
    expect(firstBusy, "counts before the machine was called busy").toBeGreaterThanOrEqual(0);
    expect(firstBusy * COUNT_EVERY_MS).toBeLessThanOrEqual(1_000);
    expect(computing.slice(firstBusy).every(Boolean), "busy for as long as the other process computes").toBe(true);
    const after = countFor(gate, 10_000 + FIRST_REQUEST_MS, 5_000, () => ({ runnable: 2, own: 2 }));
    expect(after.at(-1), "busy 5 s after the other process stopped").toBe(false);
  });

  it("is not called busy by one short burst of others' tasks (a process starting)", () => {
    const gate = new OthersLoad(2);
    const busy = countFor(gate, FIRST_REQUEST_MS, 3_000, (i) => ({ runnable: i === 20 ? 6 : 2, own: 2 }));
    expect(busy.some(Boolean)).toBe(false);
  });

  it("sees a machine busy with others' work from its first count", () => {
    const gate = new OthersLoad(2);
    expect(countFor(gate, FIRST_REQUEST_MS, COUNT_EVERY_MS, () => ({ runnable: 10, own: 1 }))).toEqual([true]);
  });

  it("leaves others the CPUs spinning does not take: on four, two others' tasks are borne, three are not", () => {
    const two = new OthersLoad(4);
    expect(countFor(two, FIRST_REQUEST_MS, 10_000, () => ({ runnable: 4, own: 2 })).some(Boolean)).toBe(false);
    const three = new OthersLoad(4);
    expect(countFor(three, FIRST_REQUEST_MS, 10_000, () => ({ runnable: 5, own: 2 })).at(-1)).toBe(true);
  });

  it("never lets spinning pay on one CPU", () => {
    const gate = new OthersLoad(1);
    expect(countFor(gate, FIRST_REQUEST_MS, 1_000, () => ({ runnable: 1, own: 1 })).every(Boolean)).toBe(true);
  });
});

/**
 * Processes that compute without end, one a CPU: others' work keeping the machine busy. At the
 * lowest priority (nice 19), so that tacit's host still answers at once beside them and its
 * sandbox would spin, but for the gate (where CPUs are few, a sandbox spins only through prompt
 * answers: spin-read.ts sandboxSpinningPays).
 */
async function busyEveryCpu(): Promise<ChildProcessWithoutNullStreams[]> {
  const hogs = Array.from({ length: availableParallelism() }, () =>
    spawn("nice", ["-n", "19", process.execPath, "-e", `process.stdout.write("computing\\n"); for (;;) {}`]),
  );
  cleanups.push(() => {
    for (const hog of hogs) hog.kill("SIGKILL");
  });
  await Promise.all(hogs.map((hog) => once(hog.stdout, "data")));
  return hogs;
}

/** The flags of `pid`'s fd 0 (from /proc/PID/fdinfo/0), or null once it is gone. */
function stdinFlags(pid: number): number | null {
  try {
    return Number.parseInt(/^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/0`, "utf8"))![1]!, 8);
  } catch {
    return null;
  }
}

/**
 * Runs `tacit run` on a script that reads small files for `seconds` seconds, each read answered
 * at once, and returns its sandbox's stdin flags sampled every 10 ms meanwhile.
 */
async function readLoopWatched(seconds: number, spin: "auto" | "always"): Promise<number[]> {
  const { dir, cleanup } = tempDir("tacit-spin-gate-");
  cleanups.push(cleanup);
  for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`);
  writeFileSync(
    path.join(dir, "script.ts"),
    `requestFileSystem(".", (fs) => { let n = 0; const until = Date.now() + ${seconds * 1000}; ` +
      `while (Date.now() < until) for (let i = 0; i < 20; i++) n += fs.access("f" + i + ".txt").read().length; println(n > 0); });`,
  );
  const env = childEnv({ TMPDIR: dir });
  if (spin === "always") env.TACIT_SPIN = "always";
  else delete env.TACIT_SPIN;
  const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "script.ts"], { cwd: dir, env });
  cleanups.push(() => child.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let done = false;
  const exit = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      done = true;
      resolve(code);
    }),
  );
  let sandbox: number | undefined;
  while (sandbox === undefined && !done) {
    sandbox = descendantsOf(child.pid!).find((pid) => commandLineOf(pid).includes("bootstrap"));
    await sleep(5);
  }
  const flags: number[] = [];
  while (!done && sandbox !== undefined) {
    const value = stdinFlags(sandbox);
    if (value !== null) flags.push(value);
    await sleep(10);
  }
  expect(await exit, stderr).toBe(0);
  expect(stdout).toBe("true\n");
  return flags;
}

describe.runIf(process.platform === "linux")("the spinning gate on a real machine", () => {
  it("counts in /proc/loadavg each process computing, and the reader", async () => {
    const hogs = await busyEveryCpu();
    // Each computes without end, so is runnable at every count; the reader is running.
    const counts = Array.from({ length: 20 }, () => runnableNow());
    expect(counts.every((count) => count !== null)).toBe(true);
    expect(Math.max(...(counts as number[]))).toBeGreaterThanOrEqual(hogs.length + 1);
  });

  it("does not let a sandbox spin through a loop of reads while others' work keeps every CPU busy", { timeout: 60_000 }, async () => {
    await busyEveryCpu();
    // Seen spinning with TACIT_SPIN=always, beside the same work: the watch sees spinning.
    const forced = await readLoopWatched(3, "always");
    expect(forced.length).toBeGreaterThan(20);
    expect(forced.some((flags) => (flags & O_NONBLOCK) !== 0), "non-blocking at some sample with TACIT_SPIN=always").toBe(
      availableParallelism() > 1,
    );
    const gated = await readLoopWatched(3, "auto");
    expect(gated.length).toBeGreaterThan(20);
    expect(gated.filter((flags) => (flags & O_NONBLOCK) !== 0).length, "samples at which the sandbox's input was non-blocking").toBe(0);
  });
});
