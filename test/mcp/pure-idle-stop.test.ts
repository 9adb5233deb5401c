// A session's pure evaluator is replaced by a fresh one once it has had no job for
// PURE_IDLE_STOP_MS. It outlived the snippets that used it, holding whatever its last map
// function grew to: three idle sessions, each having run one map that made a 160 MB array, held
// about 183 MiB each in their evaluators, and 100 sessions could hold some 50 GB, outside the
// server-wide sessions budget (which does not count evaluators: what they hold depends on the
// secret). Tried through the real MCP client against `tacit serve`, with the processes read
// from /proc; the classified value's text must reach the secure output only.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PURE_IDLE_STOP_MS } from "../../runner/classified/pure-evaluator.js";
import { connectServe, createSession, fileOnce, tempDir } from "../helpers.js";
import { isRunning, programResidentKb, spawnedRunning } from "../processes.js";

/** In the classified .env only: none of it may reach the client. */
const CANARY = "Kappa-canary-77e1";

/**
 * The idle stop of the first test's server (config pureIdleStopMs): half the default
 * (PURE_IDLE_STOP_MS), the same code ends the process whatever the time. Its margins are the
 * race between the last job's end and the test's look at the evaluators (a fresh one is replaced
 * again only after a job of its own), so this one is left as long as it was.
 */
const IDLE_STOP_MS = PURE_IDLE_STOP_MS / 2;
/**
 * The second test's (a server of its own): its three jobs each wait past the idle stop, so the
 * shorter it is, the shorter they are; at IDLE_STOP_MS, they took 7.5 s of the file's time.
 */
const QUEUED_IDLE_STOP_MS = PURE_IDLE_STOP_MS / 6;

let dir: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir, cleanup } = tempDir("tacit-pure-idle-"));
  writeFileSync(path.join(dir, ".env"), `TOKEN=${CANARY}\n`);
});

afterAll(async () => {
  for (const server of servers.splice(0)) await server.client.close();
  cleanup?.();
});

interface Server {
  client: Client;
  /** This server's pure evaluators still running (its descendants that run the evaluator). */
  pureEvaluators: () => number[];
  /** Where its classified values' text goes. */
  sink: string;
}
const servers: Server[] = [];

/**
 * A tacit serve of the test's own, in the shared dir (with its classified .env), under
 * pureIdleStopMs `idleStopMs`: the two tests run side by side (each mostly waits), and each counts
 * only its own server's evaluators.
 */
async function server(name: string, idleStopMs: number): Promise<Server> {
  const home = path.join(dir, `home-${name}`);
  mkdirSync(home);
  writeFileSync(path.join(home, "config.json"), JSON.stringify({ pureIdleStopMs: idleStopMs }));
  const sink = path.join(dir, `sink-${name}.txt`);
  const client = await connectServe(["--no-check", "--config", path.join(home, "config.json"), "--secure-output", sink], dir, {
    env: { TACIT_HOME: home },
  });
  const pid = (client.transport as StdioClientTransport).pid!;
  const started: Server = { client, sink, pureEvaluators: () => spawnedRunning(pid, "pure/evaluator.js") };
  servers.push(started);
  return started;
}

/** Runs `code` in `session`; gives its stdout, after checking that nothing of the canary is anywhere in what the client got. */
async function snippet(client: Client, session: string, code: string): Promise<string> {
  const response = await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code } }, undefined, { timeout: 60_000 });
  const seen = JSON.stringify(response);
  expect(seen, "the client saw the classified plaintext").not.toContain("Kappa");
  expect(seen).not.toContain("canary");
  return (response.structuredContent as { stdout: string }).stdout;
}

/** Waits (bounded) until none of `pids` runs; gives those still running. */
async function untilGone(pids: number[], limitMs: number): Promise<number[]> {
  for (let waited = 0; waited < limitMs && pids.some(isRunning); waited += 100) await sleep(100);
  return pids.filter(isRunning);
}

describe.concurrent("a session's pure evaluator and its idle stop", () => {
  it("an idle session's evaluator, grown by a map to 160 MB, is replaced by a fresh one, which the next map uses for the right value", async () => {
    const { client, pureEvaluators, sink } = await server("grown", IDLE_STOP_MS);
    const session = await createSession(client);
    const grow =
      `const secret = requestFileSystem(".", (fs) => fs.readClassified(".env"));\n` +
      `const grown = secret.map((s) => { const a = new Array(20_000_000).fill(s.length); return "grew " + a.length + " " + s.slice(6, 11); });\n` +
      `println(grown);`;
    // Each evaluator seen, with the most it was seen to hold, from before the map is asked for: read
    // once after the value had landed, the grown evaluator could already have been ended by the idle
    // stop (1.5 s after its job) on a loaded machine, and one look after the call, replaced by then.
    const peakKb = new Map<number, number>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const pid of pureEvaluators()) peakKb.set(pid, Math.max(peakKb.get(pid) ?? 0, programResidentKb(pid) ?? 0));
        await sleep(20);
      }
    })();
    try {
      expect(await snippet(client, session, grow)).toBe("Classified(***)\n");
      await fileOnce(sink, (text) => text.includes("grew 20000000 Kappa\n"));
    } finally {
      watching = false;
      await watcher;
    }
    // The session had no evaluator before: the first seen is the one its map grew.
    const first = [...peakKb.keys()].slice(0, 1);
    expect(first, "no pure evaluator was seen after the map").toHaveLength(1);
    const grownKb = peakKb.get(first[0]!)!;
    expect(grownKb, "the map did not grow its evaluator").toBeGreaterThan(150 * 1024);

    // Nothing asked of it: it is ended, and a fresh one, holding only what a start holds, takes its place.
    expect(await untilGone(first, IDLE_STOP_MS + 20_000), "the idle evaluator was not ended").toEqual([]);
    const fresh = pureEvaluators();
    expect(fresh, "the ended evaluator was not replaced").toHaveLength(1);
    expect(programResidentKb(fresh[0]!) ?? 0, "the fresh evaluator holds what the old one grew to").toBeLessThan(grownKb / 2);

    // The session and its values go on: the next map starts a fresh evaluator and computes from the same secret.
    expect(await snippet(client, session, `const again = secret.map((s) => "again " + s.slice(6, 11));\nprintln(again);`)).toBe(
      "Classified(***)\n",
    );
    const second = pureEvaluators();
    expect(second, "the next map did not use the fresh evaluator").toEqual(fresh);
    await fileOnce(sink, (text) => text.includes("again Kappa\n"));
    // Deleting the session ends its evaluator, fresh or not: none is left to the next test.
    await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
    expect(await untilGone(pureEvaluators(), 20_000)).toEqual([]);
  }, 120_000);

  it("a job that runs longer than the idle stop is not cut by it, nor are jobs queued behind it", async () => {
    const { client, pureEvaluators, sink: sinkFile } = await server("queued", QUEUED_IDLE_STOP_MS);
    const session = await createSession(client);
    // Each function runs past the idle time (within its own 5 s limit), waiting (Atomics.wait)
    // rather than spinning: a job under way all the same, without a core. The three are queued back to back.
    const slowMs = QUEUED_IDLE_STOP_MS + 1_000;
    const code =
      `const secret = requestFileSystem(".", (fs) => fs.readClassified(".env"));\n` +
      `const slow = [1, 2, 3].map((i) => secret.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${slowMs}); return "slow " + i + " " + s.slice(6, 11); }));\n` +
      `for (const v of slow) println(v);`;
    expect(await snippet(client, session, code)).toBe("Classified(***)\n".repeat(3));
    const running = pureEvaluators();
    expect(running).toHaveLength(1);
    const sink = await fileOnce(sinkFile, (text) => text.includes("slow 3 Kappa\n"), 60_000);
    // All three computed: none was ended under its job, nor while others were queued behind it.
    expect(sink).toContain("slow 1 Kappa\nslow 2 Kappa\nslow 3 Kappa\n");
    expect(sink).not.toContain("unavailable");
    expect(await untilGone(running, QUEUED_IDLE_STOP_MS + 20_000)).toEqual([]);
  }, 120_000);
});
