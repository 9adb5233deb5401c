// tacit killed outright (SIGKILL: no exit hook runs) in the instant it starts its type checker.
// Each process on the way to the checker asks the kernel to kill it when its parent ends, but
// only once it runs: one whose parent (tacit's thread that spawned it) died before then was never
// signalled, and a check of a script written to take minutes ran on to its end, with the time
// limit gone with tacit. Now the checker's first shell runs nothing until that thread has answered
// it on a lifeline (runner/exec/lifeline.ts, as commands do: test/exec/limits.test.ts), and
// nothing once tacit has gone (checker-lifeline.test.ts shows both without the CLI). Here tacit is
// killed at a spread of moments from the instant the chain's first process appears.
//
// Each tacit gets a temporary directory of its own (TMPDIR), where its checker's working directory
// is made: every process of the checker's chain names it in its command line, and nothing else
// does, so what survives tacit is found by it. Run under setsid: these tests kill processes.

import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, slowToCheck, tacitBin } from "../helpers.js";
import { childrenOf, commandLineOf } from "../processes.js";
import { killLive, leftAlive } from "../exec/fixtures.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync("/tmp/tacit-test-checker-killed-");
  // Reachable by the unprivileged user a root tacit runs its checker as (runner/checker-process.ts).
  chmodSync(dir, 0o755);
  writeFileSync(path.join(dir, "slow.ts"), slowToCheck(200));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// tacit run's checker: without the lifeline, runs at load 2 to 5 left a checker running after 7 and
// 11 kills in 120 (the chain as it was, and as root's is now), all at delays from 0 to 1.6 ms; with
// it, none in 240. So the spread is dense there.
const RUN_DELAYS_MS = [...Array.from({ length: 20 }, (_, tenths) => tenths / 10), 2.5, 3, 4, 6, 8, 12];
// tacit serve's checker: one started as tacit died read requests the API had already written,
// failed to answer them and ended, a check never sent; this shows that nothing of it stays.
const SERVE_DELAYS_MS = [0, 0, 0.5, 0.5, 1, 1, 2, 3, 4, 6, 8, 12];

/**
 * The pid of a child of `tacitPid` (of any of its threads: tacit serve starts its checker from a
 * thread of its own) whose command line holds `needle`, looked for without pause (the chain starts
 * in a few ms), or null once tacit has gone or `withinMs` has passed.
 */
function childNaming(tacitPid: number, needle: string, withinMs: number): number | null {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    const children = childrenOf(tacitPid);
    if (children.length === 0 && commandLineOf(tacitPid) === "") return null;
    const found = children.find((pid) => commandLineOf(pid).includes(needle));
    if (found !== undefined) return found;
  }
  return null;
}

/**
 * Starts tacit (`start`, given its own TMPDIR), SIGKILLs it `delayMs` after its checker's first
 * process appears, and returns what of the checker outlived it (killed then).
 */
async function killedWhileTheCheckerStarts(delayMs: number, kind: "tacit-check-" | "tacit-checker-", start: (env: Record<string, string>) => ChildProcess): Promise<string[]> {
  const tmp = mkdtempSync(path.join(dir, "tmp-"));
  // Reachable by the unprivileged user a root tacit runs its checker as (runner/checker-process.ts).
  chmodSync(tmp, 0o755);
  const needle = path.join(tmp, kind);
  const child = start(childEnv({ TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" }));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, how) => resolve(how)));
  try {
    await new Promise((resolve) => child.once("spawn", resolve));
    expect(childNaming(child.pid!, needle, 60_000), "the checker's first process appeared").not.toBeNull();
    for (const until = performance.now() + delayMs; performance.now() < until; );
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    return await leftAlive(needle);
  } finally {
    child.kill("SIGKILL");
    killLive(needle); // whatever this test started and left
    rmSync(tmp, { recursive: true, force: true });
  }
}

describe("tacit killed outright while its type checker starts", () => {
  it("tacit run leaves nothing of the checker running, whichever step of its start the kill falls in", async () => {
    const survived: Array<{ delayMs: number; left: string[] }> = [];
    for (const delayMs of RUN_DELAYS_MS) {
      const left = await killedWhileTheCheckerStarts(delayMs, "tacit-check-", (env) =>
        spawn(process.execPath, [tacitBin, "run", "--exec-timeout-ms", "600000", "slow.ts"], { cwd: dir, env, stdio: "ignore" }),
      );
      if (left.length > 0) survived.push({ delayMs, left });
    }
    expect(survived, "the checker outlived tacit killed this long after its first process appeared").toEqual([]);
  }, 240_000);

  it("tacit serve leaves nothing of the checker running, whichever step of its start the kill falls in", async () => {
    const survived: Array<{ delayMs: number; left: string[] }> = [];
    for (const delayMs of SERVE_DELAYS_MS) {
      const left = await killedWhileTheCheckerStarts(delayMs, "tacit-checker-", (env) => {
        const child = spawn(process.execPath, [tacitBin, "serve", "--quiet", "--exec-timeout-ms", "600000"], { cwd: dir, env, stdio: ["pipe", "ignore", "ignore"] });
        const send = (message: object): void => void child.stdin!.write(`${JSON.stringify(message)}\n`);
        child.stdin!.on("error", () => undefined);
        send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
        send({ jsonrpc: "2.0", method: "notifications/initialized" });
        send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "execute_typescript", arguments: { code: readFileSync(path.join(dir, "slow.ts"), "utf8") } } });
        return child;
      });
      if (left.length > 0) survived.push({ delayMs, left });
    }
    expect(survived, "the checker outlived tacit killed this long after its first process appeared").toEqual([]);
  }, 240_000);
});
