// Time limits hold while tacit serve's main thread is busy. They were timers on that thread alone,
// and the validator holds it: a session's snippet is validated together with every earlier one,
// on that thread, with no parse probe first for a short one, so a one-line snippet in a session
// holding 24,000 declarations (just under the syntax-tree limit) holds it about half a second, and
// such snippets sent to several sessions at once are validated one after another. Here, through
// the MCP SDK's client and a real tacit serve: a call's code holds some memory, by which its
// process is found from outside, and loops forever under a short limit (a script's, or a map
// function's in the pure evaluator); once it runs, a one-line snippet is sent to each of the large
// sessions. The process, polled from outside the server, is gone within its limit and a bound, and
// the call reports the limit as the main thread's timer does. Before the backstop thread held time
// limits too, the process ran until the validations were over: a script 3,084 and 8,187 ms after
// it was seen running, a map function 3,321 and 3,382 ms, under 500 ms limits; with it, 643-713 ms
// and 728 ms. Under the 1,000 ms limits now: 2,815 and 2,733 ms without the thread's kill, 1,225 and
// 1,210 ms with it. Then: a person who answers slowly does not have the sandbox killed, and the thread on
// its own kills by the deadline alone, and only a process still the one it was told of.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { monotonicMs } from "../../runner/monotonic.js";
import { bootstrapPath, pureEvaluatorPath } from "../../runner/paths.js";
import { type BackstopWatch, deadlineAt, newBackstopSlot, SLOT_WATCHED, startTimeOf, TIME_LIMIT_GRACE_MS } from "../../runner/sandbox-backstop-protocol.js";
import { residentKb } from "../../runner/resident-memory.js";
import { backstopThread, nodeProcessReady } from "./backstop-thread.js";
import { answerTexts, connectServeProcess, createSession, fileOnce, runInSession, tempDir, tempDirWithHome } from "../helpers.js";
import { denoProcessesRunning, isRunning, killAndWait } from "../processes.js";

/**
 * The calls' limit, and the map functions' own. At 500 ms, a machine at a load of 7.6 on 2 CPUs
 * took longer than the limit and the grace to fill the 160 MiB a call's code holds before it
 * loops, so the backstop killed it before it was ever seen holding them (a baseline run failed so).
 */
const LIMIT_MS = 1_000;
/**
 * How long after A is seen running its sandbox may still run: its limit, the backstop's grace and
 * its look, and room for a loaded machine. The validations below hold the main thread longer:
 * without the backstop, a looping script ran 3,084 and 8,187 ms after it was seen, a map function
 * 3,321 and 3,382 ms.
 */
const BOUND_MS = LIMIT_MS + 1_000;

/** What A holds (resident) before it loops: no sandbox of the server holds as much otherwise. */
const HELD_MIB = 160;
const HOLD_AND_LOOP = [
  `  const held = new Uint8Array(${HELD_MIB} * 1024 * 1024);`,
  "  for (let page = 0; page < held.length; page += 4096) held[page] = 1;",
  "  for (;;) {}",
].join("\n");
const LOOPER = HOLD_AND_LOOP + "\n";

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
/** Where the secure output goes: outside the allowed root (the temp directory). */
let sinkDir: ReturnType<typeof tempDir>;
beforeAll(() => {
  temp = tempDirWithHome("tacit-time-stall-");
  sinkDir = tempDir("tacit-time-stall-sink-");
});
afterAll(() => {
  temp?.cleanup();
  sinkDir?.cleanup();
});

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

/** The server's Deno process running `entry` that holds `held`'s memory, once it runs (its loop comes next): none of `before`, which held as much already. */
async function holderRunning(serverPid: number, entry: string, before: readonly number[]): Promise<number> {
  for (let tries = 0; tries < 6_000; tries++) {
    const found = denoProcessesRunning(serverPid, entry).find((pid) => !before.includes(pid) && holdsAsMuch(pid));
    if (found !== undefined) return found;
    await sleep(5);
  }
  throw new Error(`no process running ${entry} was seen holding the memory the call's code holds`);
}

describe("tacit serve: time limits while the main thread is busy", () => {
  let client: Client;
  let serverPid: number;
  let sink: string;
  const sessions: string[] = [];

  beforeAll(async () => {
    const config = path.join(temp.dir, "busy.json");
    // The map functions' own limit, as short as the calls': each is held off the main thread.
    writeFileSync(config, JSON.stringify({ pureJobTimeoutMs: LIMIT_MS }));
    sink = path.join(sinkDir.dir, "secure-output");
    const args = ["--no-check", "--exec-timeout-ms", String(LIMIT_MS), "--config", config, "--secure-output", sink];
    ({ client, pid: serverPid } = await connectServeProcess(args, temp.dir, { env: temp.env }));
    for (let n = 0; n < LARGE_SESSIONS; n++) {
      const session = await createSession(client);
      for (let part = 0; part < SNIPPETS_PER_SESSION; part++) {
        const built = await runInSession(client, session, snippet(part), 120_000);
        expect(built.error, `snippet ${part} ran`).toBeNull();
      }
      sessions.push(session);
    }
  }, 180_000);
  afterAll(() => client?.close());

  /**
   * Sends `code` as a call; once the process running `entry` that holds its memory is seen, holds
   * the server's main thread (a one-line snippet to each large session, written at once, so that it
   * reads them in one chunk and validates them one after another, its event loop, and the time
   * limits' timers with it, held for all of them). How long the process ran after it was seen, and the call's answer.
   */
  async function runWhileBusy(code: string, entry: string): Promise<{ ranMs: number; answer: Awaited<ReturnType<Client["callTool"]>> }> {
    const before = denoProcessesRunning(serverPid, entry).filter(holdsAsMuch);
    const call = client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 120_000 });
    const looping = await holderRunning(serverPid, entry, before);
    const seenAt = performance.now();
    const validated = inOneWrite(client, () => sessions.map((session) => runInSession(client, session, "console.log(typeof unused0);", 120_000)));
    while (isRunning(looping) && performance.now() - seenAt < 60_000) await sleep(5);
    const ranMs = performance.now() - seenAt;
    const [answer, ...snippets] = await Promise.all([call, ...validated]);
    for (const answered of snippets) expect(answered.stdout, answered.error ?? "").toBe("function\n");
    return { ranMs, answer };
  }

  it("kills a sandbox looping past its limit, near the limit, as a time-limit kill", async () => {
    const { ranMs, answer } = await runWhileBusy(LOOPER, bootstrapPath);
    const { report } = answerTexts(answer);
    console.log(`the call's sandbox ran ${Math.round(ranMs)} ms after it was seen running (limit ${LIMIT_MS} ms)`);
    expect((answer.structuredContent as { exitCode?: number } | undefined)?.exitCode, report).toBe(124);
    expect(report, JSON.stringify(answer)).toContain(`the script ran longer than ${LIMIT_MS} ms`);
    expect(ranMs, `ran ${Math.round(ranMs)} ms after it was seen running`).toBeLessThan(BOUND_MS);
  }, 180_000);

  it("kills a pure evaluator whose map function loops past its own limit, near the limit, its value unavailable for a limit's reason", async () => {
    const { ranMs, answer } = await runWhileBusy(`println(classify("x").map((s) => {\n${HOLD_AND_LOOP}\n  return s;\n}));\n`, pureEvaluatorPath);
    console.log(`the call's pure evaluator ran ${Math.round(ranMs)} ms after it was seen running (limit ${LIMIT_MS} ms)`);
    expect(answerTexts(answer).output, JSON.stringify(answer)).toContain("Classified(***)");
    // Said as one of the limits on the main thread says it: the function's own, or the call's (whose
    // timer, overdue as well once the thread is free, may come first and stop the work left).
    const written = await fileOnce(sink, (text) => text.includes("<classified value unavailable"));
    expect(written).toMatch(new RegExp(`<classified value unavailable: (the function ran longer than ${LIMIT_MS} ms|the evaluation ended before this value was computed)>`));
    expect(ranMs, `ran ${Math.round(ranMs)} ms after it was seen running`).toBeLessThan(BOUND_MS);
  }, 180_000);
});

describe("tacit serve: a sandbox's time limit while a person is asked", () => {
  it("does not kill a sandbox whose person answers after its limit and the grace have passed: the paused clock moves the deadline", async () => {
    const work = path.join(temp.dir, "asked");
    mkdirSync(work);
    writeFileSync(path.join(work, "a.txt"), "delete me\n");
    const config = path.join(temp.dir, "asked.json");
    writeFileSync(config, JSON.stringify({ policy: { rules: [{ action: "fs.delete", tier: "always-ask" }] } }));
    // A limit well above the script's own time (its waits, and its sandbox's start on a loaded
    // machine: at a load of 12 on 2 CPUs, 1,000 ms ran out before the second wait was over).
    const limitMs = 2_500;
    // Longer than the limit and the grace together: a deadline not paused while asked passes meanwhile.
    const thinkMs = 2 * (limitMs + TIME_LIMIT_GRACE_MS);
    const { client } = await connectServeProcess(["--no-check", "--exec-timeout-ms", String(limitMs), "--config", config], work, {
      env: temp.env,
      onElicit: async () => {
        await sleep(thinkMs);
        return { action: "accept", content: { approve: true } };
      },
    });
    try {
      // Some of the script's own time before the question and after it: the limit counts both, not the person's.
      const wait = "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);";
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
  const sleeper = () => nodeProcessReady("console.log('started'); setInterval(() => {}, 1000);");

  it("kills a process a grace past its deadline, recording the kill first; never one with no deadline (paused), one not due, or one whose pid is another's", async () => {
    const { worker, killed } = backstopThread();
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
