// A session's pure evaluator computes a snippet's maps only within the snippet's time limit.
// map() returns at once and its function is computed in the background, in an evaluator that
// outlives the snippet; a snippet that queued maps and ended left them running, each up to its
// 5 s, timed by no snippet's limit: 20 maps that loop forever, queued by a snippet limited to
// 2 s, were computed after it had ended, 5 s each (100 s of a core; a session may queue 100,000,
// and tacit serve holds 100 sessions).

import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, fileOnce, runInSession, tempDir } from "../helpers.js";
import { commandLineOf, descendantsOf, isForkNotYetRun, isRunning } from "../processes.js";

let dir: string;
let cleanup: () => void;
let client: Client;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("tacit-pure-between-"));
  client = await connectServe(["--no-check", "--exec-timeout-ms", "2000", "--secure-output", path.join(dir, "sink.txt")], dir);
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

/** This test's pure evaluators still running (children of the server it started). */
function pureEvaluators(): number[] {
  return descendantsOf(process.pid).filter((pid) => commandLineOf(pid).includes("pure/evaluator.js") && isRunning(pid) && !isForkNotYetRun(pid));
}

it("the maps a snippet queued and did not wait for are stopped at its time limit; the session goes on", async () => {
  const session = await createSession(client);
  // Three maps of 5 s each (their own limit), then one that would take none.
  const queued = await runInSession(
    client,
    session,
    `const v = classify("x");\nconst spins = [1, 2, 3].map(() => v.map((s) => { for (;;) {} }));\nconst later = v.map((s) => s + "!");\nprintln("queued");`,
    60_000,
  );
  expect(queued).toMatchObject({ exitCode: 0, stdout: "queued\n" });
  expect(pureEvaluators().length, "no pure evaluator was seen").toBeGreaterThan(0);
  // Past the snippet's 2 s the spinning map is stopped and the rest are never started: no evaluator is left.
  for (let tries = 0; tries < 80 && pureEvaluators().length > 0; tries++) await sleep(100);
  expect(pureEvaluators(), "the snippet's maps ran on after its time limit").toEqual([]);
  // The value queued behind them was not computed; the session and its values go on.
  const next = await runInSession(client, session, `println("later", later, "again", v.map((s) => s + "?"));`, 60_000);
  expect(next).toMatchObject({ exitCode: 0, stdout: "later Classified(***) again Classified(***)\n" });
  // What a snippet prints to the secure output lands after its answer (the next snippet does not
  // wait for it, nor does deleting the session): read once it has landed.
  await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
  const line = "later <classified value unavailable: the evaluation ended before this value was computed> again x?\n";
  const sink = await fileOnce(path.join(dir, "sink.txt"), (text) => text.includes(line));
  expect(sink).toContain(line);
}, 120_000);
