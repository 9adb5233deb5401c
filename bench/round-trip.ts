// The protocol's floor on this machine: a bare round trip between a Node process and a Deno
// process (a line out, the same line back), with nothing checked, read or parsed, over a pipe
// Deno sleeps on and over the input tacit gives its sandboxes, on which it spins.
// Every request from the sandbox costs at least this much, however little the host does; a
// machine whose wakeups are slow (a virtual machine's) shows it here first.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { denoExecutable, packageRoot } from "../runner/paths.js";
import { runChecked } from "./helpers.js";

// Deno, no permissions: echoes stdin to stdout with blocking reads, as the sandbox's stub waits.
const ECHO = `const buffer = new Uint8Array(65536);
for (;;) {
  const n = Deno.stdin.readSync(buffer);
  if (n === null) break;
  for (let written = 0; written < n; ) written += Deno.stdout.writeSync(buffer.subarray(written, n));
}
`;

// Node: sends a line of about a small read's reply, waits for it to come back, COUNT times. With
// "spinning" and "both-spinning", the echo's stdin is tacit's own sandbox input
// (runner/sandbox-input.ts), left non-blocking as while the host answers requests at once;
// otherwise a plain pipe it sleeps on. With "both-spinning", Node too waits for the echo spinning,
// as tacit's host does (runner/spin-read.ts SpinningReader), before it leaves the wait to its event loop.
const DRIVER = `const { spawn } = require("node:child_process");
const [deno, echo, count, mode, inputModule, spinModule] = process.argv.slice(2);
Promise.all([import(inputModule), import(spinModule)]).then(([{ PipeInput, sandboxInput }, { answerTook, SpinningReader }]) => {
  const input = mode === "sleeping" ? new PipeInput() : sandboxInput();
  const child = spawn(deno, ["run", "--no-config", echo], { stdio: [input.stdio, "pipe", "inherit"] });
  input.attach(child, (detail) => { console.error(detail); process.exit(1); });
  input.spin(true);
  const message = JSON.stringify({ id: 1, ok: true, value: "x".repeat(100) }) + "\\n";
  let left = Number(count), pending = 0, started = 0n;
  const received = (chunk) => {
    const arrived = process.hrtime.bigint();
    pending += chunk.length;
    if (pending < message.length) return;
    pending = 0;
    if (started === 0n) started = process.hrtime.bigint(); // the first exchange includes Deno's start
    else if (--left === 0) {
      console.log(Number(process.hrtime.bigint() - started) / Number(count) / 1000);
      input.close();
      child.kill();
      return;
    }
    // As tacit's host does: counts how promptly it answered (the sandbox spins only through prompt
    // answers where CPUs are few: spin-read.ts sandboxSpinningPays), replies, and after each reply
    // lets the sandbox spin where it pays, and the host too.
    answerTook(Number(process.hrtime.bigint() - arrived) / 1000);
    input.write(message, () => undefined);
    if (mode !== "sleeping") input.spin(true);
    if (mode !== "both-spinning" || !input.spinning) return;
    const next = reader.next();
    if (next !== null) received(next);
  };
  const reader = new SpinningReader(child.stdout);
  child.stdout.on("data", received);
  input.write(message, () => undefined);
});
`;

export type RoundTripMode = "sleeping" | "spinning" | "both-spinning";

/** Microseconds per round trip, the median of `runs` runs of `count` round trips each. */
export function pipeRoundTripMicros(dir: string, count: number, runs: number, mode: RoundTripMode = "sleeping"): number {
  const echo = path.join(dir, "echo.ts");
  const driver = path.join(dir, "round-trip.cjs");
  writeFileSync(echo, ECHO);
  writeFileSync(driver, DRIVER);
  const inputModule = pathToFileURL(path.join(packageRoot, "dist", "runner", "sandbox-input.js")).href;
  const spinModule = pathToFileURL(path.join(packageRoot, "dist", "runner", "spin-read.js")).href;
  const args = [driver, denoExecutable(), echo, String(count), mode, inputModule, spinModule];
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(Number(runChecked(process.execPath, args, dir).trim()));
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}
