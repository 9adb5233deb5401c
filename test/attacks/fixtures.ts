// The world an attack script tries to reach, set up fresh for each test, and the checks that
// prove it was not reached. Every "bad thing" is observed from the outside, never taken from
// the script's own word:
//
//   - a canary file (random content) in a temp dir: the content must appear nowhere;
//   - a loopback TCP listener that counts connections: it must see none;
//   - a marker file that only a spawned process (or a write) would create: it must not exist;
//   - the same canary in the host's environment and in a victim process's environment: it
//     must appear nowhere; the victim must still be alive (no signals got through).
//
// Scripts name the canary's *location* (a path, a variable name, a pid), never its value, so
// the value can only reach the output if the boundary let the script read it.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { expect } from "vitest";
import type { EvaluationResult } from "../../runner/evaluate.js";
import { type CliResult, repoRoot, tacitBin, tempDir } from "../helpers.js";

export const ENV_CANARY_NAME = "TACIT_ENV_CANARY";

export interface AttackContext {
  dir: string;
  /** Random; written to the canary files and put in the host's and the victim's environment. */
  canary: string;
  /** A text file holding the canary, and modules exporting it (JS, JSON). */
  canaryTxt: string;
  canaryJs: string;
  canaryJson: string;
  /** A file that only a spawned process would create. */
  marker: string;
  /** An absolute path to `touch` (the sandbox has no PATH, so a bare name never resolves). */
  touch: string;
  /** A file that only a direct write would create. */
  written: string;
  /** The loopback listener's port. */
  port: number;
  /** A process holding the canary in its environment; a target for signals and /proc reads. */
  victimPid: number;
  /** The process that runs the evaluation (the vitest worker, or the CLI's parent). */
  hostPid: number;
}

export interface AttackWorld {
  ctx: AttackContext;
  /** Connections the loopback listener has accepted so far (after a short settle). */
  connections(): Promise<number>;
  victimAlive(): boolean;
  cleanup(): Promise<void>;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function createWorld(): Promise<AttackWorld> {
  const { dir, cleanup: removeDir } = tempDir("tacit-attack-");
  const canary = `canary-${crypto.randomUUID()}`;
  const canaryTxt = path.join(dir, "canary.txt");
  const canaryJs = path.join(dir, "canary.js");
  const canaryJson = path.join(dir, "canary.json");
  writeFileSync(canaryTxt, canary + "\n");
  writeFileSync(canaryJs, `export default ${JSON.stringify(canary)};\n`);
  writeFileSync(canaryJson, JSON.stringify({ canary }));

  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;

  const victim: ChildProcess = spawn("sleep", ["300"], {
    env: { ...process.env, [ENV_CANARY_NAME]: canary },
    stdio: "ignore",
  });
  let victimExited = false;
  victim.on("exit", () => {
    victimExited = true;
  });

  // The host's own environment holds the canary while the test runs; evaluations (and CLI
  // children, which inherit it) must not pass it on. So do registry settings that would send
  // an npm:/jsr: fetch to the listener if they ever reached Deno.
  const savedEnv = saveEnv([ENV_CANARY_NAME, "NPM_CONFIG_REGISTRY", "JSR_URL", "DENO_AUTH_TOKENS"]);
  process.env[ENV_CANARY_NAME] = canary;
  process.env.NPM_CONFIG_REGISTRY = `http://127.0.0.1:${port}/`;
  process.env.JSR_URL = `http://127.0.0.1:${port}/`;

  return {
    ctx: {
      dir,
      canary,
      canaryTxt,
      canaryJs,
      canaryJson,
      marker: path.join(dir, "spawned-marker"),
      touch: ["/usr/bin/touch", "/bin/touch"].find((p) => existsSync(p)) ?? "/usr/bin/touch",
      written: path.join(dir, "written.txt"),
      port,
      victimPid: victim.pid!,
      hostPid: process.pid,
    },
    async connections() {
      await delay(30);
      return connections;
    },
    victimAlive() {
      if (victimExited) return false;
      try {
        process.kill(victim.pid!, 0);
        return true;
      } catch {
        return false;
      }
    },
    async cleanup() {
      savedEnv.restore();
      victim.kill("SIGKILL");
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      removeDir();
    },
  };
}

function saveEnv(names: string[]): { restore(): void } {
  const saved = new Map(names.map((name) => [name, process.env[name]]));
  return {
    restore() {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    },
  };
}

/** Everything an attack could have achieved, checked from the outside. */
export async function expectWorldUntouched(world: AttackWorld, seen: { stdout: string; stderr: string }): Promise<void> {
  const { ctx } = world;
  expect(seen.stdout, "canary leaked to stdout").not.toContain(ctx.canary);
  expect(seen.stderr, "canary leaked to the error/stderr").not.toContain(ctx.canary);
  expect(await world.connections(), "the loopback listener was reached").toBe(0);
  expect(existsSync(ctx.marker), "a process was spawned (marker file exists)").toBe(false);
  expect(existsSync(ctx.written), "a file was written").toBe(false);
  expect(world.victimAlive(), "the victim process was signalled").toBe(true);
  expect(readFileSync(ctx.canaryTxt, "utf8"), "the canary file was changed").toBe(ctx.canary + "\n");
  expect(readdirSync(ctx.dir).sort(), "the temp dir was changed").toEqual(["canary.js", "canary.json", "canary.txt"]);
}

export function seenOf(result: EvaluationResult): { stdout: string; stderr: string } {
  return { stdout: result.stdout, stderr: result.error ?? "" };
}

/** A JS string literal for embedding a value in script text. */
export const lit = (value: string | number): string => JSON.stringify(value);

/**
 * Runs one attempt inside a script: prints a marker that proves the script got this far,
 * then the attempt's result or the error's name. The bad thing is judged from the outside.
 */
export function attempt(body: string): string {
  return `println("reached");
try {
${body}
  println("not refused");
} catch (e) {
  println("refused:", String(e?.name), String(e?.message).split("\\n")[0]);
}
`;
}

/**
 * `node:` built-ins under Deno decorate the global console on first load; the sandbox's console
 * is frozen, so they fail before any permission check. An attacker would swap the console for
 * a plain object first (it is configurable), so the attack scripts do too: the permission
 * checks, not a load failure, must stop them.
 */
export const NODE_PRELUDE = "globalThis.console = { log() {}, info() {}, warn() {}, error() {}, debug() {} };\n";

// --- The real CLI, with its sandbox children tracked ------------------------------------

export interface TrackedCliResult extends CliResult {
  /** Every Deno sandbox seen as a child of the CLI while it ran. */
  sandboxPids: number[];
}

function childPidsOf(parent: number): number[] {
  try {
    const text = readFileSync(`/proc/${parent}/task/${parent}/children`, "utf8").trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

function isSandbox(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("bootstrap.js");
  } catch {
    return false;
  }
}

/** Alive and not a zombie. */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/**
 * A session snippet (run with the validator bypassed) that leaves a worker thread running `body`
 * after it ends. The worker needs node:process, which reads the (deleted) Deno global: a stand-in
 * answers every question it asks. The snippet ends at once; the worker is unref'd so it does not
 * hold the snippet open.
 */
export function lingeringWorker(body: string): string {
  return `
const stub = (): unknown => new Proxy(function () { return ""; }, { get: (_t, key) => (typeof key === "symbol" || key === "then" ? undefined : stub()) });
(globalThis as any).Deno = stub();
(globalThis as any).console = { log() {}, info() {}, warn() {}, error() {}, debug() {} };
const threads = await import("node:worker_threads");
const worker = new threads.Worker(new URL("data:text/javascript," + encodeURIComponent(${JSON.stringify(body)})));
worker.unref();
println("worker started");`;
}

/** Deno sandboxes currently running as children of this process (the in-process runner's). */
export function ownSandboxes(): number[] {
  return childPidsOf(process.pid).filter((pid) => isSandbox(pid) && processRunning(pid));
}

/** `node bin/tacit.js run … -` with the script on stdin; tracks sandboxes. */
export function runCliTracked(code: string, args: string[]): Promise<TrackedCliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tacitBin, "run", ...args, "-"], {
      cwd: repoRoot,
      env: process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const sandboxPids = new Set<number>();
    const poll = setInterval(() => {
      for (const pid of childPidsOf(child.pid!)) if (isSandbox(pid)) sandboxPids.add(pid);
    }, 20);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    child.on("error", (error) => {
      clearInterval(poll);
      reject(error);
    });
    child.on("close", (code) => {
      clearInterval(poll);
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        sandboxPids: [...sandboxPids],
      });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(code);
  });
}
