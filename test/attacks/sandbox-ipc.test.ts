// The sandbox and the pure evaluator have an IPC namespace of their own (runner/sandbox-mounts.ts:
// the mount namespace's setup makes it). System V shared memory, semaphores and message queues
// belong to an IPC namespace, not to a file: the mount namespace that hides the host's files does
// not hide them, and in the host's, native code in Deno (which no permission binds) could read and
// write the segments of every program of the user's (a canary in one was read), and leave segments
// that outlive the sandbox, holding memory no watchdog counts. Tested with Deno's FFI (native code)
// in a program started the way a sandbox is, and through `tacit run`'s own sandbox and evaluator.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bootstrapPath, denoExecutable, pureEvaluatorPath } from "../../runner/paths.js";
import { sandboxEnv, sandboxLaunch } from "../../runner/sandbox-process.js";
import { childEnv, tacitBin, tempDir } from "../helpers.js";
import { commandLineOf, denoRunning } from "../processes.js";

/** Whether this host lets the test make the namespaces tacit makes (else the sandbox has none, and tacit warns). */
const hostMakesMounts =
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", "/usr/bin/mount -t tmpfs x /mnt"], { stdio: "ignore" }).status === 0;

/** Deno code that reaches System V shared memory through libc, as native code in Deno would. */
const LIBC = `const libc = Deno.dlopen("libc.so.6", {
  shmget: { parameters: ["i32", "usize", "i32"], result: "i32" },
  shmat: { parameters: ["i32", "pointer", "i32"], result: "pointer" },
  shmdt: { parameters: ["pointer"], result: "i32" },
}).symbols;
const IPC_CREAT = 0o1000;`;

/** Makes a segment with `key` holding `text` (NUL-ended), and leaves it. */
function makeSegment(key: number, text: string): string {
  return `${LIBC}
const id = libc.shmget(${key}, 4096, IPC_CREAT | 0o600);
if (id < 0) throw new Error("shmget failed");
const at = libc.shmat(id, null, 0);
new Uint8Array(Deno.UnsafePointerView.getArrayBuffer(at, 4096)).set(new TextEncoder().encode(${JSON.stringify(text)} + "\\0"));
libc.shmdt(at);
console.log("made");`;
}

/** Reads the segment with `key`, if there is one in view: prints what it holds, or "no segment". */
function readSegment(key: number): string {
  return `${LIBC}
const id = libc.shmget(${key}, 0, 0);
if (id < 0) { console.log("no segment"); } else {
  const at = libc.shmat(id, null, 0);
  console.log("read: " + new Deno.UnsafePointerView(at).getCString());
  libc.shmdt(at);
}`;
}

function denoEval(code: string, confined: boolean): { status: number | null; stdout: string; stderr: string } {
  const { file, args } = confined ? sandboxLaunch(denoExecutable(), ["eval", code]) : { file: denoExecutable(), args: ["eval", code] };
  const run = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8", timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Whether the host's IPC namespace (this process's) has a segment with `key` (/proc/sysvipc/shm writes keys in decimal). */
function hostHasSegment(key: number): boolean {
  return readFileSync("/proc/sysvipc/shm", "utf8")
    .split("\n")
    .slice(1)
    .some((line) => Number(line.trim().split(/\s+/)[0]) === key);
}

function removeSegment(key: number): void {
  spawnSync("ipcrm", ["-M", String(key)], { stdio: "ignore" });
}

/** A key for this run's segments (random: runs of the suite side by side do not meet). */
const key = 0x7ac10000 + Math.floor(Math.random() * 0xffff);
const CANARY = `shm-canary-${key}`;

describe.skipIf(!hostMakesMounts)("System V IPC from the sandbox", () => {
  it("native code in a program started the way a sandbox is reads no segment of the host's, and leaves none there", () => {
    removeSegment(key);
    try {
      // The control: the host's segment, made and read back by the same code outside.
      expect(denoEval(makeSegment(key, CANARY), false).stdout).toBe("made\n");
      expect(denoEval(readSegment(key), false).stdout).toBe(`read: ${CANARY}\n`);

      const read = denoEval(readSegment(key), true);
      expect(read.status, read.stderr).toBe(0);
      expect(read.stdout).toBe("no segment\n");
      expect(read.stdout + read.stderr).not.toContain(CANARY);

      removeSegment(key);
      const made = denoEval(makeSegment(key, "left by the sandbox"), true);
      expect(made.status, made.stderr).toBe(0);
      expect(made.stdout).toBe("made\n");
      expect(hostHasSegment(key)).toBe(false);
    } finally {
      removeSegment(key);
    }
  });

  it("tacit run's sandbox and pure evaluator are each in an IPC namespace other than the host's", async () => {
    const { dir, cleanup } = tempDir("tacit-ipc-");
    let tacit: ChildProcess | undefined;
    try {
      writeFileSync(path.join(dir, "waits.ts"), 'const doubled = classify("plain").map((value) => value + value);\nprintln(readInput().length);\n');
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "waits.ts"], { cwd: dir, env: childEnv(), stdio: ["pipe", "ignore", "ignore"] });
      const host = readlinkSync("/proc/self/ns/ipc");
      for (const pid of [await denoRunning(tacit.pid!, bootstrapPath), await denoRunning(tacit.pid!, pureEvaluatorPath)]) {
        expect(readlinkSync(`/proc/${pid}/ns/ipc`), commandLineOf(pid)).not.toBe(host);
      }
    } finally {
      tacit?.kill("SIGKILL");
      cleanup();
    }
  });
});
