// The host's spinning read of a sandbox's stdout (runner/spin-read.ts), on a real child
// process's stdout as Node's spawn makes it: what it reads comes in order with what the event
// loop reads, nothing is read from a stream it must not touch, and an ended stream still ends.
// Also the pace of the host's answers (AnswerPace), by which a sandbox spins through them or sleeps.

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { AnswerPace, readSpinning, SpinningReader } from "../../runner/spin-read.js";

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** A Node child running `source`, its stdout flowing into `received`. */
function child(source: string): { proc: ChildProcessWithoutNullStreams; received: string[] } {
  const proc = spawn(process.execPath, ["-e", source]);
  children.push(proc);
  const received: string[] = [];
  proc.stdout.on("data", (chunk: Buffer) => received.push(chunk.toString()));
  return { proc, received };
}

/** Resolves once `received` holds `text` in all. */
async function until(received: string[], text: string, proc: ChildProcessWithoutNullStreams): Promise<void> {
  while (!received.join("").includes(text)) await once(proc.stdout, "data");
}

// Writes "ready\n", then for each line on stdin writes "first-" at once and "second\n" 300 ms later.
const ANSWERS = `process.stdout.write("ready\\n");
process.stdin.on("data", () => {
  process.stdout.write("first-");
  setTimeout(() => process.stdout.write("second\\n"), 300);
});`;

describe("readSpinning", () => {
  it("reads what the child writes next, and the event loop delivers the rest after it, in order", async () => {
    const { proc, received } = child(ANSWERS);
    await until(received, "ready\n", proc);
    proc.stdin.write("go\n");
    // Up to 5 s: the child answers at once, however loaded the machine.
    const bytes = readSpinning(proc.stdout, Buffer.alloc(1024), 5_000_000);
    expect(bytes).not.toBeNull();
    received.push(Buffer.from(bytes!).toString());
    await until(received, "second\n", proc);
    expect(received.join("")).toBe("ready\nfirst-second\n");
  });

  it("gives up within its bound when nothing comes, and what comes later is still delivered", async () => {
    const { proc, received } = child(ANSWERS);
    await until(received, "ready\n", proc);
    expect(readSpinning(proc.stdout, Buffer.alloc(1024), 1000)).toBeNull();
    proc.stdin.write("go\n");
    await until(received, "second\n", proc);
    expect(received.join("")).toBe("ready\nfirst-second\n");
  });

  it("reads nothing from a paused stream: its bytes come when it resumes, in order", async () => {
    const { proc, received } = child(ANSWERS);
    await until(received, "ready\n", proc);
    proc.stdout.pause();
    proc.stdin.write("go\n");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(readSpinning(proc.stdout, Buffer.alloc(1024), 100_000)).toBeNull();
    proc.stdout.resume();
    await until(received, "second\n", proc);
    expect(received.join("")).toBe("ready\nfirst-second\n");
  });

  it("returns nothing at the end of the stream, which still ends", async () => {
    const { proc, received } = child(`process.stdout.write("last\\n");`);
    const ended = once(proc.stdout, "end");
    await until(received, "last\n", proc);
    await once(proc, "exit");
    expect(readSpinning(proc.stdout, Buffer.alloc(1024), 100_000)).toBeNull();
    await ended;
    expect(received.join("")).toBe("last\n");
  });
});

// A child that keeps its stdout full: every spinning wait on it catches something at once.
const FLOODS = `const block = Buffer.alloc(65536, 120);
const more = () => { while (process.stdout.write(block)); process.stdout.once("drain", more); };
more();`;

describe("SpinningReader", () => {
  it("gives the event loop its turn: a sandbox that always answers in time cannot keep the host reading it spinning", async () => {
    // The host answers a request and reads the next one spinning, in the same turn of its event
    // loop. A sandbox that always answered within the spin kept the host in that chain, its
    // timers (the time limit), its other sessions and its cancellations waiting: 17-19 ms at a
    // time, measured, where the event loop otherwise turned every 1-5 ms. A wait of 5 s each, so
    // that only the reader's own bound on the chain can end it here, not a slow moment of the child.
    const { proc } = child(FLOODS);
    await once(proc.stdout, "readable");
    proc.stdout.resume();
    const reader = new SpinningReader(proc.stdout, 5_000_000);
    let caught = 0;
    let gaveWay = false;
    // Bounded by an ample wall-clock time, so that a reader that never gives way fails instead of hanging the test.
    const giveUpAt = performance.now() + 3000;
    while (performance.now() < giveUpAt) {
      if (reader.next() === null) {
        gaveWay = true;
        break;
      }
      caught++;
    }
    expect(gaveWay, `read ${caught} times spinning without letting the event loop turn`).toBe(true);
    expect(caught).toBeGreaterThan(0);
    // Once the event loop has turned, it reads spinning again.
    await new Promise((resolve) => setImmediate(resolve));
    expect(reader.next()).not.toBeNull();
  });
});

describe("AnswerPace", () => {
  // Where CPUs are few, a sandbox spins only through prompt answers (sandboxSpinningPays): one
  // spinning through the host's slow, cold answers held a CPU the host and V8's compiler needed.
  it("starts slow, turns prompt after a run of quick answers, and slow again after a run of slow ones", () => {
    const pace = new AnswerPace();
    expect(pace.prompt, "before any answer: the host's request path is cold").toBe(false);
    for (let i = 0; i < 100; i++) pace.took(20);
    expect(pace.prompt).toBe(true);
    for (let i = 0; i < 100; i++) pace.took(100);
    expect(pace.prompt).toBe(false);
    for (let i = 0; i < 100; i++) pace.took(20);
    expect(pace.prompt).toBe(true);
  });

  it("soon forgets one very slow answer (a command's, a person's approval) among quick ones", () => {
    const pace = new AnswerPace();
    for (let i = 0; i < 100; i++) pace.took(20);
    pace.took(30_000_000);
    expect(pace.prompt, "one answer of 30 s counts as a slow one, no more").toBe(true);
    for (let i = 0; i < 4; i++) pace.took(30_000_000);
    expect(pace.prompt, "a run of slow answers is not forgotten").toBe(false);
    for (let i = 0; i < 5; i++) pace.took(20);
    expect(pace.prompt, "and is soon made up for").toBe(true);
  });
});
