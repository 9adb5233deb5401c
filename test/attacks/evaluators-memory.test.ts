// tacit serve bounds the resident memory of its sessions' pure evaluators together
// (--evaluators-memory-limit-mb, EvaluatorsMemory in runner/sessions-memory.ts). A red team ran
// seven sessions under a 512 MiB sessions budget, each mapping a function that made a 208 MB
// Float64Array: the evaluators, outside every server-wide bound, held 1,221 MiB together.
// Tried here through the real MCP client against `tacit serve`: four sessions map functions
// that each grow their evaluator to some 240 MiB at once (960 MiB unbounded) under a 512 MiB
// budget, while the test reads the evaluators' resident memory from /proc. What the budget cuts
// fails out of sight: every client sees the same answers, without the secret or the budget's
// note, and later maps in every session compute their values into the secure output.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { residentKb } from "../../runner/resident-memory.js";
import { PURE_IDLE_STOP_MS } from "../../runner/classified/pure-evaluator.js";
import { connectServe, createSession, fileOnce, runCli, tempDir } from "../helpers.js";
import { commandLineOf, descendantsOf, isForkNotYetRun, isRunning, runsDeno } from "../processes.js";

/** In the classified .env only: none of it may reach the client. */
const CANARY = "Kappa-canary-5d02";
const BUDGET_MB = 512;
const SESSIONS = 4;
/**
 * How far past the budget a reading of the test may find the evaluators: each evaluator is read
 * every 50 ms as its job runs, and the functions below grow by 8 MB every 80 ms, so
 * between two readings each may grow by a chunk or two before the one that passes is stopped.
 */
const OVERSHOOT_MB = SESSIONS * 2 * 8;

let dir: string;
let cleanup: () => void;
let client: Client;
const sink = (): string => path.join(dir, "sink.txt");

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("tacit-evaluators-memory-"));
  writeFileSync(path.join(dir, ".env"), `TOKEN=${CANARY}\n`);
  const home = path.join(dir, "home");
  mkdirSync(home);
  client = await connectServe(
    ["--no-check", "--secure-output", sink(), "--evaluators-memory-limit-mb", String(BUDGET_MB), "--exec-timeout-ms", "20000"],
    dir,
    { env: { TACIT_HOME: home } },
  );
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

/** The pure evaluators of the server `on` talks to, running now. */
function pureEvaluators(on: Client = client): number[] {
  const server = (on.transport as StdioClientTransport).pid;
  if (server === null) throw new Error("the server has no pid");
  return descendantsOf(server).filter((pid) => commandLineOf(pid).includes("pure/evaluator.js") && runsDeno(pid) && isRunning(pid) && !isForkNotYetRun(pid));
}

/** Waits (bounded) until none of `pids` runs; gives those still running. */
async function untilGone(pids: number[], limitMs: number): Promise<number[]> {
  for (let waited = 0; waited < limitMs && pids.some(isRunning); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  return pids.filter(isRunning);
}

/** Runs `code` in `session`; gives its stdout, after checking that nothing of the canary, nor of the budget's note, reached the client. */
async function snippet(session: string, code: string, on: Client = client): Promise<string> {
  const response = await on.callTool({ name: "execute_in_session", arguments: { session_id: session, code } }, undefined, { timeout: 60_000 });
  const seen = JSON.stringify(response);
  expect(seen, "the client saw the classified plaintext").not.toContain("Kappa");
  expect(seen).not.toContain("canary");
  expect(seen, "the client saw what the evaluators' budget did").not.toContain("evaluators-memory-limit-mb");
  return (response.structuredContent as { stdout: string }).stdout;
}

it("the sessions' evaluators, each growing to some 240 MiB at once, stay within the budget, and every session's later maps compute", async () => {
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => createSession(client)));
  // 30 chunks of 8 MB, an 80 ms pause after each: 240 MB over some 2.4 s, within a job's 5 s.
  // The pause waits (Atomics.wait) rather than spins: the memory grows on the same schedule,
  // without four evaluators holding both cores for 2.4 s each.
  const grow = (i: number): string =>
    `const secret = requestFileSystem(".", (fs) => fs.readClassified(".env"));\n` +
    `const grown = secret.map((s) => { const pause = new Int32Array(new SharedArrayBuffer(4)); const parts = []; for (let k = 0; k < 30; k++) { const a = new Float64Array(1_000_000); a.fill(k); parts.push(a); Atomics.wait(pause, 0, 0, 80); } return "grew ${i} " + parts.length + " " + s.slice(6, 11); });\n` +
    `println(grown);`;

  // Read the evaluators' resident memory together while the maps run.
  let peakKb = 0;
  let mostProcesses = 0;
  let reading = true;
  const readings = (async () => {
    while (reading) {
      const pids = pureEvaluators();
      const totalKb = pids.reduce((sum, pid) => sum + (residentKb(pid) ?? 0), 0);
      peakKb = Math.max(peakKb, totalKb);
      mostProcesses = Math.max(mostProcesses, pids.length);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const answers = await Promise.all(sessions.map((session, i) => snippet(session, grow(i))));
  // Every session's answer is the same, whatever became of its value.
  expect(answers).toEqual(Array.from({ length: SESSIONS }, () => "Classified(***)\n"));
  // Each value lands in the secure output, computed or failed (an unavailable value's line and its note).
  const landed = (text: string): number => (text.match(/^grew \d 30 Kappa$/gm)?.length ?? 0) + (text.match(/^<classified value unavailable/gm)?.length ?? 0);
  const settled = await fileOnce(sink(), (text) => landed(text) >= SESSIONS, 60_000);
  expect(landed(settled), "not every value landed in the secure output").toBe(SESSIONS);
  // The evaluators' jobs are over once each value landed; a last look covers their ends.
  await new Promise((resolve) => setTimeout(resolve, 500));
  reading = false;
  await readings;
  console.log(`evaluators: peak ${Math.round(peakKb / 1024)} MiB together, at most ${mostProcesses} processes at once`);
  console.log(`secure output after the growing maps:\n${settled}`);

  expect(mostProcesses, "the maps did not run at the same time").toBeGreaterThanOrEqual(2);
  expect(peakKb, `the evaluators held more than the ${BUDGET_MB} MiB budget together`).toBeLessThanOrEqual((BUDGET_MB + OVERSHOOT_MB) * 1024);
  // The budget did cut (four at 240 MiB do not fit in 512 MiB), noted in the secure output only.
  expect(settled).toContain(`more than the ${BUDGET_MB} MiB they may hold together`);

  // Every session goes on: a later map computes its value from the same secret, the evaluator restarted where it was ended.
  for (const [i, session] of sessions.entries()) {
    expect(await snippet(session, `const after${i} = secret.map((s) => "after ${i} " + s.slice(6, 11));\nprintln(after${i});`)).toBe("Classified(***)\n");
  }
  const later = await fileOnce(sink(), (text) => sessions.every((_, i) => text.includes(`after ${i} Kappa\n`)), 60_000);
  for (const i of sessions.keys()) expect(later).toContain(`after ${i} Kappa\n`);
}, 180_000);

it("sessions that each ran a map keep fresh evaluators only as far as the budget has room, and their next maps compute", async () => {
  // A server of its own, with a budget of 128 MiB: room for two fresh evaluators (some 35 MiB each, 64 until read).
  const budgetMb = 128;
  const home = path.join(dir, "home-idle");
  mkdirSync(home);
  const idleSink = path.join(dir, "idle-sink.txt");
  const small = await connectServe(["--no-check", "--secure-output", idleSink, "--evaluators-memory-limit-mb", String(budgetMb)], dir, { env: { TACIT_HOME: home } });
  try {
    const count = 6;
    const sessions: string[] = [];
    for (let i = 0; i < count; i++) sessions.push(await createSession(small));
    // One map a session, one after another: each waits for its value before the next asks.
    const used = new Set<number>();
    for (const [i, session] of sessions.entries()) {
      const code = `const secret = requestFileSystem(".", (fs) => fs.readClassified(".env"));\nprintln(secret.map((s) => "first ${i} " + s.slice(6, 11)));`;
      expect(await snippet(session, code, small)).toBe("Classified(***)\n");
      const text = await fileOnce(idleSink, (t) => t.includes(`first ${i} Kappa\n`));
      expect(text).toContain(`first ${i} Kappa\n`);
      for (const pid of pureEvaluators(small)) used.add(pid);
    }
    // Every evaluator that ran a job is ended once idle (PURE_IDLE_STOP_MS), or earlier by the budget.
    expect(await untilGone([...used], PURE_IDLE_STOP_MS + 20_000), "an evaluator that ran a job was not ended").toEqual([]);
    // The fresh ones kept ready in their place fit in the budget (without it: one a session, six).
    const fresh = pureEvaluators(small);
    const freshKb = fresh.reduce((sum, pid) => sum + (residentKb(pid) ?? 0), 0);
    console.log(`idle: ${fresh.length} fresh evaluators for ${count} sessions, ${Math.round(freshKb / 1024)} MiB together`);
    expect(fresh.length, "a fresh evaluator was kept for every session").toBeLessThan(count);
    expect(freshKb, `the fresh evaluators held more than the ${budgetMb} MiB budget`).toBeLessThanOrEqual(budgetMb * 1024);
    // Every session's next map computes from the same secret (a fresh evaluator started where none was kept).
    for (const [i, session] of sessions.entries()) {
      expect(await snippet(session, `println(secret.map((s) => "next ${i} " + s.slice(6, 11)));`, small)).toBe("Classified(***)\n");
    }
    const later = await fileOnce(idleSink, (t) => sessions.every((_, i) => t.includes(`next ${i} Kappa\n`)), 60_000);
    for (const i of sessions.keys()) expect(later).toContain(`next ${i} Kappa\n`);
    expect(later).not.toContain("unavailable");
  } finally {
    await small.close();
  }
}, 180_000);

it("a budget below what a fresh evaluator holds is refused before the server starts, naming the key", async () => {
  const home = path.join(dir, "home-flag");
  mkdirSync(home);
  const result = await runCli(["serve", "--evaluators-memory-limit-mb", "10"], { cwd: dir, env: { TACIT_HOME: home } });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("evaluatorsMemoryLimitMb");
});
