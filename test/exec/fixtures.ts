// Shared pieces of the commands suite: the real CLI run in a temp working directory (the
// default allowed root) with extra environment, and a look at the host's process table from
// outside (never taking the script's word for it). Attempt reporting is the files suite's.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, chownSync, closeSync, constants, existsSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { expect, type TestContext } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { attemptOf, attempts, realTempDir } from "../files/fixtures.js";
import { type CliResult, collectedRun, runCli, tacitBin, unchecked } from "../helpers.js";

export { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeCanary, realTempDir, writeTree } from "../files/fixtures.js";
export type { CliResult };

/** Skips the test where this host gives commands no mount namespace: --confine-commands refuses every command there. */
export function skipWithoutMountNamespace(ctx: TestContext): void {
  const reasons: string[] = [];
  const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], (r) => reasons.push(r), (r) => reasons.push(r));
  ctx.skip(wrapper?.ownProc !== true, `this host cannot give commands a mount namespace (${reasons.join("; ") || "no reason given"}); confinement refuses every command there`);
}

/**
 * A fresh directory under /var/tmp (confined commands get a private /tmp), named `prefix…` and removed
 * with the test; the test is skipped where commands get no mount namespace (skipWithoutMountNamespace).
 */
export function confinementDir(ctx: TestContext, prefix: string): string {
  skipWithoutMountNamespace(ctx);
  const { dir, cleanup } = realTempDir(prefix, "/var/tmp");
  ctx.onTestFinished(cleanup);
  return dir;
}

/** What `proc.exec` gave the script, as an attempt reports it. */
export type ExecResult = { exitCode: number; stdout: string; stderr: string };

/** The exec results a script reported as attempts (ATTEMPT_PRELUDE), by label; each must have succeeded. */
export function execResults(stdout: string): (label: string) => ExecResult {
  const found = attempts(stdout);
  return (label) => {
    const attempt = attemptOf(found, label);
    expect(attempt.status, `${label}: ${JSON.stringify(attempt.value)}`).toBe("ok");
    return attempt.value as ExecResult;
  };
}

/** `tacit run --no-check -` (see unchecked) with the script on stdin, working directory `cwd`, extra environment `env`. */
export function tacit(cwd: string, script: string, args: string[] = [], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(unchecked(["run", ...args, "-"]), { cwd, env, input: script });
}

/**
 * A command's lifeline (runner/exec/lifeline.ts) as tacit answers it, for a first shell a test
 * starts with spawnSync, which cannot answer: a pipe (a FIFO in `dir`, open for reading and
 * writing) that already holds the answer. The shell's question is left in it after. Close it when done.
 */
export function answeredLifeline(dir: string): number {
  const fd = withFifo(dir, (fifo) => openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
  writeSync(fd, "\n");
  return fd;
}

/** A descriptor like tacit's lifeline once tacit has gone: the write end of a pipe (a FIFO in `dir`) nobody can read any more. Close it when done. */
export function deadLifeline(dir: string): number {
  return withFifo(dir, (fifo) => {
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    closeSync(reader);
    return writer;
  });
}

/** What `open` makes of a new FIFO in `dir`, which is removed once opened. */
function withFifo(dir: string, open: (fifo: string) => number): number {
  const fifo = path.join(dir, `lifeline-${randomUUID()}`);
  execFileSync("mkfifo", [fifo]);
  try {
    return open(fifo);
  } finally {
    rmSync(fifo);
  }
}

/** Writes an executable shell script (run through an allowed `bash`, or found on no PATH). */
export function makeExecutable(file: string): void {
  chmodSync(file, 0o755);
}

/** Full command lines of live processes whose command line contains `needle` (pgrep -f). */
export function livePrograms(needle: string): string[] {
  try {
    const out = execFileSync("pgrep", ["-a", "-f", needle], { encoding: "utf8" });
    // pgrep never lists itself; drop the shells that vitest or we might have spawned to look.
    return out.split("\n").filter((line) => line.trim() !== "" && !line.includes("pgrep"));
  } catch {
    return []; // exit status 1: nothing matched
  }
}

/** Polls until no live process matches `needle`, or `withinMs` passes; returns what is left. */
export async function leftAlive(needle: string, withinMs = 2_000): Promise<string[]> {
  const until = Date.now() + withinMs;
  for (;;) {
    const alive = livePrograms(needle);
    if (alive.length === 0 || Date.now() >= until) return alive;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Kills, by pid, whatever live process matches `needle` (a test's leftovers). */
export function killLive(needle: string): void {
  for (const line of livePrograms(needle)) {
    try {
      process.kill(Number(line.split(" ")[0]), "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

/** A fractional sleep duration no other test or process uses, so pgrep finds only ours. */
export function uniqueSleep(): string {
  return `31.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

export const at = (root: string, p: string): string => path.join(root, p);

/** The user a test starts tacit as to see what a user who is not root gets (see nobodyCanRunTacit). */
export const NOBODY = 65534;
const SETPRIV = "/usr/bin/setpriv";
const AS_NOBODY = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"];

/** Whether tacit can be started as nobody here, with a user namespace of its own; if not, why. Only root can. */
export function nobodyCanRunTacit(): { ok: boolean; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: "the suite does not run as root, which alone can start tacit as another user" };
  if (!existsSync(SETPRIV)) return { ok: false, reason: `${SETPRIV} is not installed` };
  const readable = `require("fs").accessSync(${JSON.stringify(tacitBin)}, require("fs").constants.R_OK)`;
  const probe = spawnSync(SETPRIV, [...AS_NOBODY, "/usr/bin/unshare", "--map-root-user", "--mount", "--", process.execPath, "-e", readable], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (probe.status !== 0) return { ok: false, reason: `nobody cannot run node and read tacit, in a user namespace of its own: ${(probe.stderr || String(probe.error)).trim()}` };
  return { ok: true, reason: "" };
}

/** A project, a home and a tacit home under `dir`, owned by nobody. */
export function nobodysProject(dir: string): { project: string; home: string; tacitHome: string } {
  const made = { project: path.join(dir, "project"), home: path.join(dir, "home"), tacitHome: path.join(dir, "tacit-home") };
  for (const place of [made.project, made.home, made.tacitHome]) mkdirSync(place);
  for (const place of [dir, made.project, made.home, made.tacitHome]) chownSync(place, NOBODY, NOBODY);
  return made;
}

/** `tacit run --no-check …args -` as nobody in `where.project`, the script on stdin, `env` added to its environment. */
export function tacitAsNobody(where: { project: string; home: string; tacitHome: string }, script: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(SETPRIV, [...AS_NOBODY, process.execPath, tacitBin, "run", "--no-check", ...args, "-"], {
    cwd: where.project,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: where.home, TACIT_HOME: where.tacitHome, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  return collectedRun(child, script);
}
