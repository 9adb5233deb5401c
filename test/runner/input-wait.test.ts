// What the host reads of a process's main thread to know that a sandbox has finished writing its
// report (runner/input-wait.ts), read of real processes: one blocked reading its stdin, one
// blocked writing to a full pipe, one computing, and one that has ended since its file was opened.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, expect, it } from "vitest";
import { type InputWait, MainThreadLook } from "../../runner/input-wait.js";

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

function start(file: string, args: string[]): ChildProcess {
  const child = spawn(file, args, { stdio: ["pipe", "pipe", "ignore"] });
  started.push(child);
  return child;
}

/** What `look` says once it says `expected`, or what it said last after a few seconds of looks (a process still starting). */
async function lookedUntil(look: MainThreadLook, expected: InputWait): Promise<InputWait> {
  let seen = look.inputWait();
  for (let tries = 0; tries < 200 && seen !== expected; tries++) {
    await sleep(25);
    seen = look.inputWait();
  }
  return seen;
}

it("a process blocked reading its stdin reads as waiting for input, and once it has ended, as unknown, not as another process", async () => {
  const cat = start("cat", []);
  const look = new MainThreadLook(() => cat.pid ?? null);
  expect(await lookedUntil(look, "reading-input")).toBe("reading-input");
  cat.kill("SIGKILL");
  await once(cat, "exit");
  expect(look.inputWait()).toBe("unknown");
  look.close();
});

it("a process blocked writing to a full pipe sleeps elsewhere: it has not finished writing", async () => {
  // Its stdout is never read: `yes` fills the pipe and blocks in write(1).
  const yes = start("yes", []);
  yes.stdout!.pause();
  const look = new MainThreadLook(() => yes.pid ?? null);
  expect(await lookedUntil(look, "sleeping-elsewhere")).toBe("sleeping-elsewhere");
  look.close();
});

it("a process computing reads as running", async () => {
  const busy = start(process.execPath, ["-e", "for (;;) {}"]);
  const look = new MainThreadLook(() => busy.pid ?? null);
  expect(await lookedUntil(look, "running")).toBe("running");
  look.close();
});
