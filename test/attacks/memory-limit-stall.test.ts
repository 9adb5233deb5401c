// A sandbox's resident-memory limit holds while tacit serve's main thread is busy. The watchdog
// that reads the sandbox's memory every 50 ms ran on that thread alone, and validating a large
// script (some 24,000 declarations, just under the syntax-tree limit) holds it 1.3-3 s: a
// reviewer's sandbox, limited to 384 MiB resident (128 MiB of heap and the allowance), grew to
// 1,226-1,410 MiB while a second call's script was validated (396-481 MiB without it). Here,
// through the MCP SDK's client and a real tacit serve: call A waits a moment, then fills 64 MiB
// arrays as fast as it can; call B, sent right after it, is the large script. A's resident
// memory, polled from outside the server, stays near its limit, and A reports the memory kill
// as a kill by the main thread's watchdog does.

import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BackstopWatch, newBackstopSlot, SLOT_ENDED, startTimeOf } from "../../runner/sandbox-backstop-protocol.js";
import { bootstrapPath } from "../../runner/paths.js";
import { residentKb } from "../../runner/resident-memory.js";
import { backstopThread, nodeProcessReady } from "./backstop-thread.js";
import { answerTexts, connectServeProcess, tempDirWithHome } from "../helpers.js";
import { commandLineOf, descendantsOf, isRunning, killAndWait, runsDeno } from "../processes.js";

const LIMIT_MIB = 128 + 256;
/** Above the limit, room for a late tick of the off-thread watch and for the last array touched; far below the 1.2 GiB seen without it. */
const BOUND_MIB = LIMIT_MIB + 300;

/** Waits (so that B's validation has begun), then fills 64 MiB arrays, a page at a time, to 2 GiB. */
const FILLER = [
  "const pause = new Int32Array(new SharedArrayBuffer(4));",
  "Atomics.wait(pause, 0, 0, 150);",
  "const kept: Uint8Array[] = [];",
  "for (let i = 0; i < 32; i++) {",
  "  const block = new Uint8Array(64 * 1024 * 1024);",
  "  for (let page = 0; page < block.length; page += 4096) block[page] = 1;",
  "  kept.push(block);",
  "}",
  "console.log(kept.length);",
].join("\n");

/** Valid, and slow to validate: the host's main thread is busy with it for a second or more. */
const LARGE = Array.from({ length: 24_000 }, (_, n) => `const v${n} = ${n} + 1;`).join("\n") + "\nconsole.log(v23999);\n";

let temp: ReturnType<typeof tempDirWithHome>;
beforeAll(() => {
  temp = tempDirWithHome("tacit-memory-stall-");
});
afterAll(() => temp?.cleanup());

/** The largest resident memory, in MiB, any of the server's agent sandboxes held at a look, polled every 5 ms until `stop` is called. */
function pollPeak(serverPid: number): { stop: () => number } {
  let peakKb = 0;
  const timer = setInterval(() => {
    for (const pid of descendantsOf(serverPid)) {
      if (!runsDeno(pid) || !commandLineOf(pid).includes(bootstrapPath)) continue;
      peakKb = Math.max(peakKb, residentKb(pid) ?? 0);
    }
  }, 5);
  return {
    stop: () => {
      clearInterval(timer);
      return peakKb / 1024;
    },
  };
}

describe("tacit serve: a sandbox's memory limit while the main thread is busy", () => {
  it("kills a sandbox that grows past its limit while another call's large script is validated, near the limit, as a memory kill", async () => {
    const { client, pid } = await connectServeProcess(["--no-check", "--memory-limit-mb", "128"], temp.dir, { env: temp.env });
    try {
      const peak = pollPeak(pid);
      const filler = client.callTool({ name: "execute_typescript", arguments: { code: FILLER } }, undefined, { timeout: 120_000 });
      const large = client.callTool({ name: "execute_typescript", arguments: { code: LARGE } }, undefined, { timeout: 120_000 });
      const [filled, validated] = await Promise.all([filler, large]);
      const peakMib = peak.stop();
      const { report } = answerTexts(filled);
      expect((filled.structuredContent as { exitCode?: number } | undefined)?.exitCode, report).toBe(125);
      expect(report, JSON.stringify(filled)).toContain(`the script used more than ${LIMIT_MIB} MiB of memory (resident)`);
      expect(answerTexts(validated).output, JSON.stringify(validated)).toContain("24000");
      expect(peakMib, `peak ${Math.round(peakMib)} MiB`).toBeLessThan(BOUND_MIB);
      console.log(`filler's peak resident memory: ${Math.round(peakMib)} MiB`);
    } finally {
      await client.close();
    }
  }, 180_000);
});

describe("the sandbox watch thread on its own, for memory", () => {
  /** A process that holds some 200 MiB resident, once it says so. */
  const bigProcess = () => nodeProcessReady("globalThis.kept = Buffer.alloc(200 * 1024 * 1024, 1); console.log('held'); setInterval(() => {}, 1000);");

  it("kills only a process that is still the one it was told of (its start time), past the limit, recording the kill first; never one whose end was seen", async () => {
    const { worker, killed } = backstopThread();
    const children = await Promise.all([bigProcess(), bigProcess(), bigProcess()]);
    try {
      const [reused, ended, watched] = children.map((child) => child.pid!) as [number, number, number];
      const watch = (id: number, pid: number, startTime: number): Int32Array => {
        const slot = newBackstopSlot();
        worker.postMessage({ kind: "watch", id, spawned: pid, startTime, forksInit: false, limitKb: 100 * 1024, intervalMs: 50, code: 7, timeCode: 8, slot: slot.buffer } satisfies BackstopWatch);
        return slot.state;
      };
      // Another process that took the pid: its start time is not the one recorded.
      const reusedSlot = watch(1, reused, startTimeOf(reused)! - 1);
      const endedSlot = watch(2, ended, startTimeOf(ended)!);
      Atomics.store(endedSlot, 0, SLOT_ENDED);
      const watchedSlot = watch(3, watched, startTimeOf(watched)!);
      for (let tries = 0; tries < 100 && isRunning(watched); tries++) await sleep(50);
      await sleep(300);
      expect(isRunning(watched)).toBe(false);
      expect(Atomics.load(watchedSlot, 0)).toBe(7);
      expect(killed).toEqual([{ kind: "killed", id: 3 }]);
      expect(isRunning(reused) && isRunning(ended)).toBe(true);
      expect([Atomics.load(reusedSlot, 0), Atomics.load(endedSlot, 0)]).toEqual([0, SLOT_ENDED]);
    } finally {
      await Promise.all(children.map((child) => killAndWait(child)));
      await worker.terminate();
    }
  }, 30_000);
});
