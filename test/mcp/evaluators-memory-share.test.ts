// tacit serve's budget for the resident memory of its pure evaluators
// (--evaluators-memory-limit-mb, EvaluatorsMemory in runner/sessions-memory.ts), tried through
// the real MCP client:
// - a one-shot call's evaluator (execute_typescript) is counted in it, as a session's is: it
//   was not, so one-shot maps could hold any number of evaluators at their own limit
//   (maxConcurrentEvaluations of them, 512 MiB resident each) outside the budget;
// - a session whose evaluator holds more than its fair share (the budget over the evaluators
//   running) cannot keep another session's map from computing: the one that grew used to be the
//   one stopped, so a session holding most of the budget made every other session's maps fail.
// What the budget does happens out of sight (the secure output only), in every session.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { residentKb } from "../../runner/resident-memory.js";
import { connectServe, createSession, fileOnce, tempDir } from "../helpers.js";
import { commandLineOf, descendantsOf, isForkNotYetRun, isRunning, runsDeno } from "../processes.js";

/** In the classified .env only: none of it may reach the client. */
const CANARY = "Lambda-canary-7e13";

let dir: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir, cleanup } = tempDir("tacit-evaluators-share-"));
  writeFileSync(path.join(dir, ".env"), `TOKEN=${CANARY}\n`);
});

afterAll(() => cleanup?.());

/**
 * How long a map function, and the call or snippet that asked for it, may run here: long enough
 * that no time limit ends a map before the budget does. With the 5 s default, the fair-share test's
 * hog held its memory only until its job's limit, and the other session's map had to grow before
 * then: on a loaded machine it might not, and the stop by the budget was not tried.
 */
const LONG_LIMIT_MS = 300_000;

/** A tacit serve of its own (home, config and secure output in the test's directory) with an evaluators' budget of `budgetMb`. */
async function serveWithBudget(name: string, budgetMb: number): Promise<{ client: Client; sink: string }> {
  const home = path.join(dir, `home-${name}`);
  mkdirSync(home);
  const config = path.join(home, "limits.json");
  writeFileSync(config, JSON.stringify({ pureJobTimeoutMs: LONG_LIMIT_MS }));
  const sink = path.join(dir, `sink-${name}.txt`);
  const client = await connectServe(
    ["--no-check", "--config", config, "--exec-timeout-ms", String(LONG_LIMIT_MS), "--secure-output", sink, "--evaluators-memory-limit-mb", String(budgetMb)],
    dir,
    { env: { TACIT_HOME: home } },
  );
  return { client, sink };
}

/** The pure evaluators of the server `client` talks to, running now. */
function pureEvaluators(client: Client): number[] {
  const server = (client.transport as StdioClientTransport).pid;
  if (server === null) throw new Error("the server has no pid");
  return descendantsOf(server).filter((pid) => commandLineOf(pid).includes("pure/evaluator.js") && runsDeno(pid) && isRunning(pid) && !isForkNotYetRun(pid));
}

/** Checks that nothing of the canary, nor of the budget's doing, reached the client; gives the stdout. */
function seenByClient(response: Awaited<ReturnType<Client["callTool"]>>): string {
  const seen = JSON.stringify(response);
  expect(seen, "the client saw the classified plaintext").not.toContain("Lambda");
  expect(seen).not.toContain("canary");
  expect(seen, "the client saw what the evaluators' budget did").not.toContain("evaluators-memory-limit-mb");
  expect(seen).not.toContain("fair share");
  return (response.structuredContent as { stdout: string }).stdout;
}

async function snippet(client: Client, session: string, code: string): Promise<string> {
  return seenByClient(await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code } }, undefined, { timeout: 60_000 }));
}

const READ_SECRET = `const secret = requestFileSystem(".", (fs) => fs.readClassified(".env"));\n`;

/**
 * A map function growing its evaluator by `chunks` of 8 MB (waiting `pauseMs` after each: time for
 * the budget's reading, given by Atomics.wait rather than a busy loop, which spun a core through
 * it), then answering `label` and part of the secret.
 */
function growing(label: string, chunks: number, pauseMs: number): string {
  return (
    `(s) => { const parts = []; for (let k = 0; k < ${chunks}; k++) { const a = new Float64Array(1_000_000); a.fill(k); parts.push(a); ` +
    `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${pauseMs}); } return "${label} " + parts.length + " " + s.slice(6, 12); }`
  );
}

it("a one-shot call's map is counted in the evaluators' budget: grown past it, it is stopped out of sight", async () => {
  const budgetMb = 128;
  const { client, sink } = await serveWithBudget("one-shot", budgetMb);
  try {
    let peakKb = 0;
    let reading = true;
    const readings = (async () => {
      while (reading) {
        peakKb = Math.max(peakKb, pureEvaluators(client).reduce((sum, pid) => sum + (residentKb(pid) ?? 0), 0));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    // 30 chunks of 8 MB, 60 ms of waiting after each: 240 MB over some 2 s (no time limit ends it first: LONG_LIMIT_MS).
    const code = `${READ_SECRET}println(secret.map(${growing("one-shot grew", 30, 60)}));`;
    const response = await client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 60_000 });
    expect(seenByClient(response)).toBe("Classified(***)\n");
    const landed = (text: string): boolean => /^one-shot grew 30 Lambda$/m.test(text) || /^<classified value unavailable/m.test(text);
    const text = await fileOnce(sink, landed, 60_000);
    reading = false;
    await readings;
    console.log(`one-shot evaluator: peak ${Math.round(peakKb / 1024)} MiB under a ${budgetMb} MiB budget; secure output:\n${text}`);
    expect(text, "the one-shot's evaluator grew past the budget and computed its value").not.toContain("one-shot grew 30 Lambda");
    expect(text).toContain(`more than the ${budgetMb} MiB they may hold together`);
    // Each reading (every 50 ms) may find it a chunk or two further on.
    expect(peakKb, "the one-shot's evaluator held more than the budget").toBeLessThanOrEqual((budgetMb + 2 * 8 + 16) * 1024);

    // The next call's map computes: the budget ended a process, not the server's ability to map.
    const next = await client.callTool({ name: "execute_typescript", arguments: { code: `${READ_SECRET}println(secret.map((s) => "after " + s.slice(6, 12)));` } });
    expect(seenByClient(next)).toBe("Classified(***)\n");
    expect(await fileOnce(sink, (t) => t.includes("after Lambda\n"))).toContain("after Lambda\n");
  } finally {
    await client.close();
  }
}, 120_000);

it("a session holding more than its fair share of the budget is the one stopped when another session's map grows within its own", async ({ signal }) => {
  const budgetMb = 448;
  const { client, sink } = await serveWithBudget("fair", budgetMb);
  try {
    const [hog, other] = [await createSession(client), await createSession(client)];
    // The other session's evaluator has run a map (it is warm, or kept ready after its idle stop).
    expect(await snippet(client, other, `${READ_SECRET}println(secret.map((s) => "warm " + s.slice(6, 12)));`)).toBe("Classified(***)\n");
    expect(await fileOnce(sink, (t) => t.includes("warm Lambda\n"))).toContain("warm Lambda\n");

    // The hog: 240 MB at once (some 265 MiB resident, more than its fair share of 224 MiB), then held (busy): no time
    // limit ends it here (LONG_LIMIT_MS), so it holds them until the budget ends it, however long the other takes to grow.
    const hogMap = `(s) => { const parts = []; for (let k = 0; k < 30; k++) { const a = new Float64Array(1_000_000); a.fill(k); parts.push(a); } while (parts.length > 0) {} return "hog " + s.slice(6, 12); }`;
    expect(await snippet(client, hog, `${READ_SECRET}println("hog:", secret.map(${hogMap}));`)).toBe("hog: Classified(***)\n");
    // Waits until the hog's evaluator holds its 240 MB (it grows to that at once, and holds it).
    let hogPid: number | undefined;
    while (hogPid === undefined && !signal.aborted) {
      hogPid = pureEvaluators(client).find((pid) => (residentKb(pid) ?? 0) > 240 * 1024);
      if (hogPid === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(hogPid, "the hog's evaluator never held 240 MiB").toBeDefined();

    // Within its fair share (half the budget, 224 MiB): 20 chunks of 8 MB (some 205 MiB resident), while the hog holds 265:
    // the two pass the budget once this one holds some 185 MiB, and readings every 50 ms see it.
    expect(await snippet(client, other, `println("other:", secret.map(${growing("other grew", 20, 30)}));`)).toBe("other: Classified(***)\n");
    // Whole lines: a println's text reaches the sink before the value it waits for (one order of appends per file).
    const text = await fileOnce(sink, (t) => /^other: [^\n]*\n/m.test(t) && /^hog: [^\n]*\n/m.test(t), 60_000);
    console.log(`secure output:\n${text}`);
    expect(text, "the map within its fair share failed while another session held more than its own").toContain("other: other grew 20 Lambda\n");
    // The hog's value failed, noted (out of sight) with why: stopped by the budget, naming the fair share.
    expect(text).toMatch(/^hog: <classified value unavailable[^\n]*fair share/m);
    expect(text).not.toContain("hog Lambda");

    // The hog's session goes on: its next map computes (a fresh evaluator where the budget ended its own).
    expect(await snippet(client, hog, `println(secret.map((s) => "hog after " + s.slice(6, 12)));`)).toBe("Classified(***)\n");
    expect(await fileOnce(sink, (t) => t.includes("hog after Lambda\n"), 60_000)).toContain("hog after Lambda\n");
  } finally {
    await client.close();
  }
}, 120_000);
