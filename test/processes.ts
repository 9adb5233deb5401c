// What tests read about processes from /proc: whether one is still running, its children, its
// command line. Used by the tests that kill tacit and look for what it left behind. And the
// background processes tests start to change things while tacit works.

import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { residentKb } from "../runner/resident-memory.js";

/** The pids of `pid`'s children (from /proc: a process's children file lists those of each of its threads). */
export function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** The pids of `pid`'s children, their children, and so on. */
export function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
}

/** The Deno processes among `root`'s descendants that run `entry` (Deno itself: see runsDeno), running now. */
export function denoProcessesRunning(root: number, entry: string): number[] {
  return descendantsOf(root).filter((pid) => runsDeno(pid) && commandLineOf(pid).split("\0").includes(entry) && isRunning(pid));
}

/** The Deno process among `root`'s descendants that runs `entry`, once it runs (a fork of the setup shell names it too, until it execs). */
export async function denoRunning(root: number, entry: string): Promise<number> {
  for (let tries = 0; tries < 400; tries++) {
    const found = denoProcessesRunning(root, entry)[0];
    if (found !== undefined) return found;
    await sleep(50);
  }
  throw new Error(`no Deno process running ${entry} under ${root}`);
}

/**
 * Whether `pid` is a copy its parent forked that has not run a program of its own yet: it still
 * has its parent's command line. The sandbox's mount setup (runner/sandbox-mounts.ts) is a shell
 * whose command line names the sandbox's script, and it forks for each `mount`: until that fork
 * runs mount, a test that finds sandboxes or pure evaluators by their command line sees two.
 */
export function isForkNotYetRun(pid: number): boolean {
  const parent = parentOf(pid);
  const line = commandLineOf(pid);
  return parent !== null && line !== "" && line === commandLineOf(parent);
}

/**
 * Whether `pid` runs Deno itself. Where the sandbox has a PID namespace, the unshare that forks
 * Deno in it (runner/namespaced-program.ts) names Deno's script in its command line too, as the
 * setup shell does until it runs Deno in its place.
 */
export function runsDeno(pid: number): boolean {
  return commandLineOf(pid).split("\0")[0]!.endsWith("/deno");
}

/** Its parent's pid; null once it is gone. */
export function parentOf(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1]);
  } catch {
    return null;
  }
}

/**
 * The processes among `root`'s descendants that tacit spawned to run `script` (a sandbox's
 * bootstrap, the pure evaluator), running: one a sandbox, whatever it is doing (each names the
 * script, its parent does not). Where the sandbox has a PID namespace, that is the unshare that
 * forks Deno in it and lives as long as Deno (runner/namespaced-program.ts); elsewhere, Deno.
 */
export function spawnedRunning(root: number, script: string): number[] {
  return descendantsOf(root).filter((pid) => {
    const parent = parentOf(pid);
    return commandLineOf(pid).includes(script) && isRunning(pid) && parent !== null && !commandLineOf(parent).includes(script);
  });
}

/** The resident memory, in KiB, of the Deno `spawned` runs (see spawnedRunning): its child that runs Deno, or itself; null once gone. */
export function programResidentKb(spawned: number): number | null {
  const program = [spawned, ...childrenOf(spawned)].find(runsDeno);
  return program === undefined ? null : residentKb(program);
}

/** Its command line, NUL-separated; "" once it is gone. */
export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** CPU time (user and system, all threads) the process has used, in ms, from /proc (clock ticks of 10 ms); null once it is gone. */
export function cpuMsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Alive and not a zombie waiting to be reaped (a container's init may never reap it). */
export function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** The children of `pid` whose command line contains `needle`, polled for up to 10 s until there are some. */
async function childrenRunning(pid: number, needle: string): Promise<number[]> {
  for (let i = 0; i < 200; i++) {
    await sleep(50);
    const found = childrenOf(pid).filter((child) => commandLineOf(child).includes(needle));
    if (found.length > 0) return found;
  }
  return [];
}

/** Those of `pids` still running after up to 2 s of waiting for them to end. */
async function stillRunning(pids: readonly number[]): Promise<number[]> {
  for (let i = 0; i < 40 && pids.some(isRunning); i++) await sleep(50);
  return pids.filter(isRunning);
}

/**
 * SIGKILLs tacit (`child`, no exit hook runs) once its children whose command line holds
 * `needle` have run for `runMs`, and asserts that they ended with it (`what` names them in the
 * failure). Whatever happens, nothing is left running.
 */
export async function expectToDieWith(child: ChildProcess, needle: string, what: string, runMs: number): Promise<void> {
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  let found: number[] = [];
  try {
    found = await childrenRunning(child.pid!, needle);
    expect(found, `the ${what} started`).not.toEqual([]);
    await sleep(runMs);
    child.kill("SIGKILL");
    await exited;
    expect(await stillRunning(found), `${what} left running after tacit was killed`).toEqual([]);
  } finally {
    child.kill("SIGKILL");
    for (const pid of found.filter(isRunning)) process.kill(pid, "SIGKILL");
  }
}

/**
 * Starts `node -e script ...args` in the background (a process that changes a tree while a test's
 * script works in it); resolves once it has written its first output, its sign that it is at work.
 */
export function startBusyNode(script: string, args: readonly string[], what: string): Promise<ChildProcess> {
  return startBusy(process.execPath, ["-e", script, ...args], what);
}

/**
 * startBusyNode for `python3 -c script ...args`: for a change Node has no call for (renameat2's
 * RENAME_EXCHANGE, which swaps a directory and a link at once, with no moment where neither is there).
 */
export function startBusyPython(script: string, args: readonly string[], what: string): Promise<ChildProcess> {
  return startBusy("python3", ["-c", script, ...args], what);
}

function startBusy(command: string, args: readonly string[], what: string): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`${what} ended (${code}) before it began`)));
    child.stdout!.once("data", () => resolve(child));
  });
}

/** SIGKILLs `child`; resolves once it has exited (at once if it had). */
export function killAndWait(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
