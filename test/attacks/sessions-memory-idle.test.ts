// The sessions of a tacit serve share one budget of resident memory (sessionsMemoryLimitMb,
// runner/sessions-memory.ts), judged as a sandbox grows. A sandbox waits, blocked, between
// snippets, but a worker thread a snippet leaves behind (agent code that defeats the validator,
// as the design assumes) may still run there, within the CPU time tacit allows an idle sandbox
// (500 ms: enough to fill hundreds of MiB) and under the sandbox's own memory limit. Judged only
// while snippets ran, such a session grew past the budget between snippets and kept it. Here it
// is stopped for it, and the session that holds what it held goes on.

import { afterEach, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { defaultConfig } from "../../runner/config.js";
import { ReplSession } from "../../runner/session.js";
import { SessionsMemory } from "../../runner/sessions-memory.js";
import { isRunning } from "../processes.js";
import { lingeringWorker, ownSandboxes } from "./fixtures.js";

// 8 MiB every 50 ms, off the V8 heap, up to 200 MiB (some 50 ms of CPU), then it holds them.
const GROW = "const keep = []; const t = setInterval(() => { keep.push(new Uint8Array(8 << 20).fill(1)); if (keep.length >= 25) clearInterval(t); }, 50); setInterval(() => {}, 1000);";

const sessions: ReplSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.close()));
});

async function endedWithin(pid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(100)) if (!isRunning(pid)) return true;
  return !isRunning(pid);
}

it("a session whose left-behind worker grows its sandbox between snippets past the sessions' budget is stopped; the other goes on", async () => {
  // 128 MiB of heap: 384 MiB resident a sandbox, far above what the worker holds; 300 MiB for both sessions.
  const config = { ...defaultConfig, typeCheck: false, memoryLimitMb: 128, executionTimeoutMs: 10_000 };
  const memory = new SessionsMemory(300 * 1024);
  const open = () => {
    const account = memory.open();
    if ("refused" in account) throw new Error(account.refused);
    const session = new ReplSession(config, undefined, undefined, undefined, undefined, undefined, account);
    sessions.push(session);
    return session;
  };
  const holder = open();
  const held = await holder.execute("const held = new Float64Array(15_000_000);\nheld.fill(1);\nheld.length");
  expect(held.outcome, held.error ?? "").toBe("ok");

  const before = new Set(ownSandboxes());
  const grower = open();
  const started = await grower.execute(lingeringWorker(GROW), { unsafeSkipValidation: true });
  expect(started.outcome, started.error ?? "").toBe("ok");
  const sandboxes = ownSandboxes().filter((pid) => !before.has(pid));
  expect(sandboxes.length, "no session sandbox was seen").toBe(1);

  // The bad thing: the worker's 200 MiB kept beside the holder's 150, past the 300 the sessions may hold.
  expect(await endedWithin(sandboxes[0]!, 8_000), "the sandbox grew past the sessions' budget between snippets and was kept").toBe(true);
  expect(memory.totalKb).toBeLessThanOrEqual(memory.limitKb);
  expect(await holder.execute("held.length + 1")).toMatchObject({ outcome: "ok", stdout: "15000001\n" });
}, 60_000);
