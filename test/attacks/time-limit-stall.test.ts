// A sandbox's time limit holds while tacit serve's main thread is busy. The limit was a timer on
// that thread alone, and the validator holds it: a session's snippet is validated together with
// every earlier one, on that thread, with no parse probe first for a short one, so a one-line
// snippet in a session holding 24,000 declarations (just under the syntax-tree limit) holds it
// about half a second, and such snippets sent to several sessions at once are validated one after
// another. Here, through the MCP SDK's client and a real tacit serve: call A holds some memory, by
// which it is found from outside, and loops forever under a short limit; once it runs, a one-line
// snippet is sent to each of the large sessions. A's sandbox, polled from outside the server, is
// gone within its limit and a bound, and A reports the time limit as the main thread's timer does.
// Before the backstop thread held time limits too, A's sandbox ran until the validations were over:
// 3,084 and 8,187 ms after it was seen running, under a 500 ms limit; with it, 643 and 691 ms.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { monotonicMs } from "../../runner/monotonic.js";
import { bootstrapPath, packageRoot } from "../../runner/paths.js";
import { type BackstopWatch, deadlineAt, newBackstopSlot, SLOT_WATCHED, startTimeOf, TIME_LIMIT_GRACE_MS } from "../../runner/sandbox-backstop-protocol.js";
import { residentKb } from "../../runner/resident-memory.js";
import { answerTexts, connectServeProcess, createSession, runInSession, tempDirWithHome } from "../helpers.js";
import { denoProcessesRunning, isRunning, killAndWait } from "../processes.js";

const LIMIT_MS = 500;
/**
 * How long after A is seen running its sandbox may still run: its limit, the backstop's grace and
 * its look, and room for a loaded machine. The validations below hold the main thread longer.
 */
const BOUND_MS = LIMIT_MS + 1_000;

/** What A holds (resident) before it loops: no sandbox of the server holds as much otherwise. */
const HELD_MIB = 160;
const LOOPER = [
  `const held = new Uint8Array(${HELD_MIB} * 1024 * 1024);`,
  "for (let page = 0; page < held.length; page += 4096) held[page] = 1;",
  "for (;;) {}",
].join("\n");

/**
 * A session's snippets, together just under the syntax-tree limit: each snippet after them is
 * validated with them all. Each in a function never called, and short, so that it runs well within
 * the limit (24,000 bindings in one snippet took its sandbox seconds to run).
 */
const SNIPPETS_PER_SESSION = 12;
const DECLARATIONS_PER_SNIPPET = 2_000;
const snippet = (n: number): string =>
  `function unused${n}(): number {\n` +
  Array.from({ length: DECLARATIONS_PER_SNIPPET }, (_, d) => `  const v${d} = ${d} + 1;`).join("\n") +
  `\n  return v${DECLARATIONS_PER_SNIPPET - 1};\n}\n`;
const LARGE_SESSIONS = 4;

let temp: ReturnType<typeof tempDirWithHome>;
beforeAll(() => {
  temp = tempDirWithHome("tacit-time-stall-");
});
afterAll(() => temp?.cleanup());

/** What `send` has the SDK's client send, written to the server's stdin in one write (corked until the next tick). */
function inOneWrite<T>(client: Client, send: () => T): T {
  // The stdio transport keeps its child process to itself: reached here as the test's own business.
  const stdin = (client.transport as unknown as { _process?: { stdin?: Writable } } | undefined)?._process?.stdin;
  if (stdin === undefined) throw new Error("the SDK's stdio transport has no child process to write to");
  stdin.cork();
  try {
    return send();
  } finally {
    process.nextTick(() => stdin.uncork());
  }
}

const holdsAsMuch = (pid: number): boolean => (residentKb(pid) ?? 0) > (HELD_MIB - 8) * 1024;

/** The server's agent sandbox that holds A's memory, once it runs (its loop comes next): none of `before`, which held as much already. */
async function looperRunning(serverPid: number, before: readonly number[]): Promise<number> {
  for (let tries = 0; tries < 6_000; tries++) {
    const found = denoProcessesRunning(serverPid, bootstrapPath).find((pid) => !before.includes(pid) && holdsAsMuch(pid));
    if (found !== undefined) return found;
    await sleep(5);
  }
  throw new Error("call A's sandbox was never seen holding its memory");
}

describe("tacit serve: a sandbox's time limit while the main thread is busy", () => {
  it("kills a sandbox looping past its limit while large sessions' snippets are validated, near the limit, as a time-limit kill", async () => {
    const { client, pid } = await connectServeProcess(["--no-check", "--exec-timeout-ms", String(LIMIT_MS)], temp.dir, { env: temp.env });
    try {
      const sessions: string[] = [];
      for (let n = 0; n < LARGE_SESSIONS; n++) {
        const session = await createSession(client);
        for (let part = 0; part < SNIPPETS_PER_SESSION; part++) {
          const built = await runInSession(client, session, snippet(part), 120_000);
          expect(built.error, `snippet ${part} ran`).toBeNull();
        }
        sessions.push(session);
      }
      const before = denoProcessesRunning(pid, bootstrapPath).filter(holdsAsMuch);
      const looper = client.callTool({ name: "execute_typescript", arguments: { code: LOOPER } }, undefined, { timeout: 120_000 });
      const sandbox = await looperRunning(pid, before);
      const seenAt = performance.now();
      // Written to the server in one write, so that it reads them in one chunk and validates them
      // one after another, its event loop (the time limit's timer with it) held for all of them.
      const validated = inOneWrite(client, () => sessions.map((session) => runInSession(client, session, "console.log(typeof unused0);", 120_000)));
      while (isRunning(sandbox) && performance.now() - seenAt < 60_000) await sleep(5);
      const ranMs = performance.now() - seenAt;
      const [looped, ...snippets] = await Promise.all([looper, ...validated]);
      for (const answered of snippets) expect(answered.stdout, answered.error ?? "").toBe("function\n");
      const { report } = answerTexts(looped);
      console.log(`call A's sandbox ran ${Math.round(ranMs)} ms after it was seen running (limit ${LIMIT_MS} ms)`);
      expect((looped.structuredContent as { exitCode?: number } | undefined)?.exitCode, report).toBe(124);
      expect(report, JSON.stringify(looped)).toContain(`the script ran longer than ${LIMIT_MS} ms`);
      expect(ranMs, `ran ${Math.round(ranMs)} ms after it was seen running`).toBeLessThan(BOUND_MS);
    } finally {
      await client.close();
    }
  }, 180_000);
});

describe("tacit serve: a sandbox's time limit while a person is asked", () => {
  it("does not kill a sandbox whose person answers after its limit and the grace have passed: the paused clock moves the deadline", async () => {
    const work = path.join(temp.dir, "asked");
    mkdirSync(work);
    writeFileSync(path.join(work, "a.txt"), "delete me\n");
    const config = path.join(temp.dir, "asked.json");
    writeFileSync(config, JSON.stringify({ policy: { rules: [{ action: "fs.delete", tier: "always-ask" }] } }));
    // Longer than the limit and the grace together: a deadline not paused while asked passes meanwhile.
    const thinkMs = 2 * (1_000 + TIME_LIMIT_GRACE_MS);
    const { client } = await connectServeProcess(["--no-check", "--exec-timeout-ms", "1000", "--config", config], work, {
      env: temp.env,
      onElicit: async () => {
        await sleep(thinkMs);
        return { action: "accept", content: { approve: true } };
      },
    });
    try {
      // Some of the script's own time before the question and after it: the limit counts both, not the person's.
      const wait = "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);";
      const code = `${wait}\nrequestFileSystem(".", (fs) => fs.access("a.txt").delete());\n${wait}\nprintln("deleted");\n`;
      const response = await client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 120_000 });
      const result = response.structuredContent as { stdout: string; error: string | null };
      expect(result.error, JSON.stringify(response)).toBeNull();
      expect(result.stdout).toBe("deleted\n");
      expect(existsSync(path.join(work, "a.txt"))).toBe(false);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("the sandbox watch thread on its own, for time", () => {
  /** A process that sleeps, once it has started. */
  async function sleeper(): Promise<ReturnType<typeof spawn>> {
    const child = spawn(process.execPath, ["-e", "console.log('started'); setInterval(() => {}, 1000);"], { stdio: ["ignore", "pipe", "ignore"] });
    await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
    return child;
  }

  it("kills a process a grace past its deadline, recording the kill first; never one with no deadline (paused), one not due, or one whose pid is another's", async () => {
    const worker = new Worker(path.join(packageRoot, "dist", "sandbox-backstop", "worker.cjs"));
    const killed: unknown[] = [];
    worker.on("message", (message: unknown) => killed.push(message));
    const children = await Promise.all([sleeper(), sleeper(), sleeper(), sleeper()]);
    try {
      const [paused, notDue, reused, due] = children.map((child) => child.pid!) as [number, number, number, number];
      const watch = (id: number, pid: number, startTime: number, deadlineMs: number | null): Int32Array => {
        const slot = newBackstopSlot();
        Atomics.store(slot.deadline, 0, deadlineAt(deadlineMs));
        // A memory limit no sleeper reaches: only the deadline can have it killed.
        worker.postMessage({ kind: "watch", id, spawned: pid, startTime, forksInit: false, limitKb: 4 * 1024 * 1024, intervalMs: 50, code: 7, timeCode: 8, slot: slot.buffer } satisfies BackstopWatch);
        return slot.state;
      };
      const past = monotonicMs() - 1_000;
      const pausedSlot = watch(1, paused, startTimeOf(paused)!, null);
      const notDueSlot = watch(2, notDue, startTimeOf(notDue)!, monotonicMs() + 600_000);
      // Another process that took the pid: its start time is not the one recorded.
      const reusedSlot = watch(3, reused, startTimeOf(reused)! - 1, past);
      const dueSlot = watch(4, due, startTimeOf(due)!, past);
      for (let tries = 0; tries < 100 && isRunning(due); tries++) await sleep(50);
      await sleep(300);
      expect(isRunning(due)).toBe(false);
      expect(Atomics.load(dueSlot, 0)).toBe(8);
      expect(killed).toEqual([{ kind: "killed", id: 4 }]);
      expect([paused, notDue, reused].map(isRunning)).toEqual([true, true, true]);
      expect([pausedSlot, notDueSlot, reusedSlot].map((slot) => Atomics.load(slot, 0))).toEqual([SLOT_WATCHED, SLOT_WATCHED, SLOT_WATCHED]);
    } finally {
      await Promise.all(children.map((child) => killAndWait(child)));
      await worker.terminate();
    }
  }, 30_000);
});
