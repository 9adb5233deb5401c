// A session's sandbox waits, blocked on stdin, between snippets: the host stops timing it and
// watching its memory closely then. A snippet that leaves a thread running behind it (a
// node:worker_threads Worker, unref'd so that the snippet still ends) must not get that time
// for free: with the validator bypassed (agent code that defeats the static checks, as the
// design assumes), such a worker ran on after its snippet, out of reach of the time limit, and
// grew the sandbox past its memory limit without end (806 MiB within 3 s under a 128 MiB limit,
// and on until the session was deleted). The host ends such a sandbox, and the session says why.

import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { setTimeout as sleep } from "node:timers/promises";
import { defaultConfig } from "../../runner/config.js";
import { ReplSession } from "../../runner/session.js";
import { tempDir } from "../helpers.js";
import { childrenOf, commandLineOf, isRunning } from "../processes.js";
import { lingeringWorker, ownSandboxes } from "./fixtures.js";

const SPIN = "while (true) {}";
// Off the V8 heap, 32 MiB every 50 ms up to 640 MiB, then it holds them.
const GROW = "const keep = []; const t = setInterval(() => { keep.push(new Uint8Array(32 << 20).fill(1)); if (keep.length >= 20) clearInterval(t); }, 50); setInterval(() => {}, 1000);";
// Part of a frame on the protocol channel, 300 ms after the snippet ended (the worker's global has a Deno of its own, without permissions).
const WRITE = 'setTimeout(() => Deno.stdout.writeSync(new TextEncoder().encode(\'{"type":"post","action":\')), 300);';

let session: ReplSession | null = null;
afterEach(async () => {
  await session?.close();
  session = null;
});

/**
 * Whether `pid` ends before the test is given up (`testEnds`: the test context's signal, aborted
 * when the test times out). The host promises no time for this: a process idle between snippets
 * (or jobs) is looked at every 250 ms and ended once it has used 500 ms of CPU since, or grown
 * past its memory limit (SandboxProcess.watchIdle). On a loaded machine a spinning thread gets a
 * small share of a core and takes that much longer to use 500 ms: a fixed 8 s wait failed at a
 * load average of 15-20 on 2 cores. So this waits for what the host does, as long as the test may run.
 */
async function endedBeforeTestEnds(pid: number, testEnds: AbortSignal): Promise<boolean> {
  while (isRunning(pid) && !testEnds.aborted) await sleep(100);
  return !isRunning(pid);
}

describe("a thread a session snippet leaves running", () => {
  for (const [name, body, why] of [
    ["spinning (CPU between snippets)", SPIN, /used \d+ ms of CPU time while it waited for the next snippet/],
    ["growing (memory past the limit between snippets)", GROW, /of memory \(resident\) while it waited for the next snippet/],
    ["writing (to the protocol channel between snippets)", WRITE, /wrote to the protocol channel while it waited for the next snippet/],
  ] as const) {
    it(`${name}: its sandbox is ended, and the session says why`, async ({ signal }) => {
      const before = new Set(ownSandboxes());
      session = new ReplSession({ ...defaultConfig, typeCheck: false, memoryLimitMb: 128, executionTimeoutMs: 10_000 });
      const first = await session.execute(lingeringWorker(body), { unsafeSkipValidation: true });
      expect(first.outcome, first.error ?? "").toBe("ok");
      expect(first.stdout).toBe("worker started\n");
      const sandboxes = ownSandboxes().filter((pid) => !before.has(pid));
      expect(sandboxes.length, "no session sandbox was seen").toBe(1);

      expect(await endedBeforeTestEnds(sandboxes[0]!, signal), "the sandbox ran on between snippets").toBe(true);

      const next = await session.execute("1 + 1");
      expect(next.outcome).toBe("protocol-error");
      expect(next.error).toMatch(/went on running after its snippet had ended/);
      expect(next.error).toMatch(why);
      expect(next.error).toMatch(/create a new session/i);
    });
  }

  it("a forged end (a worker writes the done frame while the snippet runs on): not taken for the end, the snippet is timed and ended", async ({ signal }) => {
    const before = new Set(ownSandboxes());
    // The main thread runs on until the limit ends it: 3 s is ample for the worker's forged frame,
    // written 300 ms after its start, to come first. It blocks rather than spins (a spin burned a
    // core for the whole 3 s, the most CPU of this file): to the host, a main thread asleep
    // elsewhere than in its read of the next snippet is as far from done as a sandbox one, and
    // a forged end taken for the end would leave it there, with no CPU for the idle watch to see.
    session = new ReplSession({ ...defaultConfig, typeCheck: false, memoryLimitMb: 128, executionTimeoutMs: 3_000 });
    // The worker's global has a Deno of its own (no permissions), and its stdout is the protocol channel.
    const forge = 'setTimeout(() => Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify({ type: "done" }) + "\\n")), 300);';
    const code = lingeringWorker(forge).replace('println("worker started");', "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);");
    const running = session.execute(code, { unsafeSkipValidation: true });
    let sandbox: number | undefined;
    while (sandbox === undefined && !signal.aborted) {
      sandbox = ownSandboxes().find((pid) => !before.has(pid));
      if (sandbox === undefined) await sleep(50);
    }
    const first = await running;
    // The host once took the forged frame for the snippet's end, and stopped the clock while the
    // snippet ran on. Now a success is over only once the main thread waits for the next snippet
    // (runner/sandbox.ts reportWritten), which this one never does: the clock runs on to its limit.
    expect(first.outcome, first.error ?? "").toBe("protocol-error");
    expect(first.error).toMatch(/reported its result but had not finished writing by the end of the time limit/);
    expect(sandbox, "no session sandbox was seen").toBeDefined();
    expect(await endedBeforeTestEnds(sandbox!, signal), "the snippet ran on after its forged end").toBe(true);

    // The session goes on without the failed snippet.
    const next = await session.execute("1 + 1");
    expect(next.outcome, next.error ?? "").toBe("ok");
    expect(next.stdout).toBe("2\n");
  });

  it("nothing left running: a session that worked hard and then waited goes on", async () => {
    session = new ReplSession({ ...defaultConfig, typeCheck: false, memoryLimitMb: 128 });
    const first = await session.execute("let kept: object[] = [];\nfor (let i = 0; i < 300_000; i++) kept.push({ i, s: `item ${i}` });\nkept = kept.slice(-10);\nkept.length");
    expect(first.outcome, first.error ?? "").toBe("ok");
    await sleep(1_500);
    const next = await session.execute("kept.length + 1");
    expect(next.outcome, next.error ?? "").toBe("ok");
    expect(next.stdout).toBe("11\n");
  });

});

/** The pure evaluators (map/flatMap) running as children of this process. */
function pureEvaluators(): number[] {
  return childrenOf(process.pid).filter((pid) => commandLineOf(pid).includes("evaluator.js") && isRunning(pid));
}

// The pure evaluator lives as long as its session, and runs one map function at a time under a
// time limit per job; between jobs nothing is timed. With the validator bypassed, a map
// function reached node:worker_threads synchronously (process.getBuiltinModule, with a
// stand-in for the deleted Deno global) and left a worker spinning in the session's evaluator
// after the job had answered: a core burned for as long as the session lived. Map functions now
// run in a realm of their own, frozen, with the language's built-ins alone: the stand-in cannot
// be set, and no Worker is there. The host still ends an evaluator that runs on between jobs.
describe("a thread a map function leaves running in the pure evaluator", () => {
  let dir: string;
  let cleanup: () => void;
  beforeAll(() => ({ dir, cleanup } = tempDir("tacit-lingering-")));
  afterAll(() => cleanup());

  it("is ended once the evaluator waits for its next job; later maps still work", async ({ signal }) => {
    const before = new Set(pureEvaluators());
    const sink = path.join(dir, "secure-output.txt");
    session = new ReplSession({ ...defaultConfig, typeCheck: false, memoryLimitMb: 128, library: { ...defaultConfig.library, secureOutput: sink } });
    const spin = `
const spun = classify("x").map((value) => {
  const stub = (): unknown => new Proxy(function () { return ""; }, { get: (_t, key) => (typeof key === "symbol" || key === "then" ? undefined : stub()) });
  (globalThis as any).Deno = stub();
  (globalThis as any).console = { log() {}, info() {}, warn() {}, error() {}, debug() {} };
  const threads = (globalThis as any).process.getBuiltinModule("node:worker_threads");
  new threads.Worker(new URL("data:text/javascript," + encodeURIComponent(${JSON.stringify(SPIN)}))).unref();
  return value + "!";
});
println(spun);`;
    // The map starts the evaluator, and the snippet ends a few ms later without waiting for its
    // value: a watch only while the snippet ran sampled inside that window by chance (traced: the
    // evaluator appeared at 110 ms, the snippet ended at 116 ms), and the suite's CI runs failed
    // when it missed. So the watch goes on after the snippet until the evaluator is seen; it
    // lives at least until it has started and answered its job.
    const evaluators: number[] = [];
    const look = (): void => {
      for (const pid of pureEvaluators()) if (!before.has(pid) && !evaluators.includes(pid)) evaluators.push(pid);
    };
    const watch = setInterval(look, 10);
    let first: Awaited<ReturnType<ReplSession["execute"]>>;
    try {
      first = await session.execute(spin, { unsafeSkipValidation: true });
      look();
      for (const until = Date.now() + 10_000; evaluators.length === 0 && Date.now() < until; ) await sleep(10);
    } finally {
      clearInterval(watch);
    }
    expect(first.outcome, first.error ?? "").toBe("ok");
    // The first one seen ran the map (one ended for idling is replaced by a fresh one, which runs nothing).
    expect(evaluators.length, "no pure evaluator was seen").toBeGreaterThanOrEqual(1);

    expect(await endedBeforeTestEnds(evaluators[0]!, signal), "the pure evaluator ran a thread on between jobs").toBe(true);

    const next = await session.execute('const doubled = classify(21).map((n) => n * 2);\nprintln(doubled);\n"next"', { unsafeSkipValidation: true });
    expect(next.outcome, next.error ?? "").toBe("ok");
    expect(next.stdout).toBe('Classified(***)\n"next"\n');
    await session.close();
    session = null;
    // The thread was never started: the map failed, out of sight. The later value was computed.
    expect(readFileSync(sink, "utf8")).toContain("<classified value unavailable: TypeError: Cannot add property Deno, object is not extensible>");
    expect(readFileSync(sink, "utf8")).toContain("42");
  });
});
