// What the tests of tacit serve's sandbox watch thread (runner/sandbox-backstop-worker.ts) run it
// with on its own: the thread as built, and Node processes for it to watch.

import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { packageRoot } from "../../runner/paths.js";

/** The watch thread as the build makes it, and the messages it has sent (its kills). */
export function backstopThread(): { worker: Worker; killed: unknown[] } {
  const worker = new Worker(path.join(packageRoot, "dist", "sandbox-backstop", "worker.cjs"));
  const killed: unknown[] = [];
  worker.on("message", (message: unknown) => killed.push(message));
  return { worker, killed };
}

/** A Node process running `code`, once it has printed its first line (so it holds what `code` makes before that). */
export async function nodeProcessReady(code: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  return child;
}
