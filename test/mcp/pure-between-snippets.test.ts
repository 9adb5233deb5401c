// A session's pure evaluator computes a snippet's maps only within the snippet's time limit.
// map() returns at once and its function is computed in the background, in an evaluator that
// outlives the snippet; a snippet that queued maps and ended left them running, each up to its
// 5 s, timed by no snippet's limit: 20 maps that loop forever, queued by a snippet limited to
// 2 s, were computed after it had ended, 5 s each (100 s of a core; a session may queue 100,000,
// and tacit serve holds 100 sessions).

import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, fileOnce, runInSession, tempDir } from "../helpers.js";
import { commandLineOf, descendantsOf, isForkNotYetRun, isRunning, runsDeno } from "../processes.js";

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

/** The pure evaluators (the Deno processes) of the server this test started, running now. */
function pureEvaluators(): number[] {
  const server = (client.transport as StdioClientTransport).pid;
  if (server === null) throw new Error("the server has no pid");
  return descendantsOf(server).filter((pid) => commandLineOf(pid).includes("pure/evaluator.js") && runsDeno(pid) && isRunning(pid) && !isForkNotYetRun(pid));
}

it("the maps a snippet queued and did not wait for are stopped at its time limit; the session goes on", async ({ signal }) => {
  const session = await createSession(client);
  // Every evaluator process seen from before the snippet is sent: the premise (its maps were
  // computed) is then seen whenever they ran, instead of by one look after the call, which a
  // call slower than the 2 s limit (a loaded machine) made after they had been stopped.
  const seen = new Set<number>();
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      for (const pid of pureEvaluators()) seen.add(pid);
      await sleep(20);
    }
  })();
  try {
    // Three maps of 5 s each (their own limit), then one that would take none. Each never ends
    // by waiting (Atomics.wait, for ever) rather than spinning: to the host a job that never
    // returns all the same, until its process is ended, without a core spun meanwhile.
    const queued = await runInSession(
      client,
      session,
      `const v = classify("x");\nconst spins = [1, 2, 3].map(() => v.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return s; }));\nconst later = v.map((s) => s + "!");\nprintln("queued");`,
      60_000,
    );
    expect(queued).toMatchObject({ exitCode: 0, stdout: "queued\n" });
    // Past the snippet's 2 s the spinning map is stopped and the rest are never started: no evaluator is left.
    // Waited for as long as the test may run (its end depends on the server's timers, which a loaded
    // machine delays); had the maps run on, each would have had a fresh evaluator after the one
    // before it was ended at its own 5 s: a second one seen ends the wait at once.
    while ((seen.size === 0 || pureEvaluators().length > 0) && seen.size < 2 && !signal.aborted) await sleep(50);
  } finally {
    watching = false;
    await watcher;
  }
  expect(seen.size, "no pure evaluator was seen: the snippet's maps were not computed, and their stop was not tried").toBeGreaterThan(0);
  expect(seen.size, "the snippet's maps ran on after its time limit, in fresh evaluators").toBe(1);
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
