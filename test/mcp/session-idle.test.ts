// An idle session is reclaimed (sessionIdleMs); a busy one is not. The reclaim looked only at
// when a session's last snippet started or ended, so an eleventh security review's snippet
// that ran longer than sessionIdleMs (a long computation, or a command, within the time limit)
// had its session reclaimed under it: the snippet was ended as cancelled and the session's
// bindings were gone, though it had never been idle.
//
// Nothing here is timed. The snippet runs until the test releases it (a file it polls for), and
// the test releases it only once a reclaim check has been seen to run while it was under way,
// late enough to reclaim it had it been idle: a witness session, created after the snippet
// started (so used no earlier than it), has been reclaimed. With a snippet of a fixed 3.5 s and
// an idle time of 1 s, a gap of over a second between two calls on a loaded machine reclaimed
// the session before the snippet began, and the checks' timer, delayed, might not have run
// during the snippet at all.

import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { connectServe, createSession, runInSession, type ToolResult } from "../helpers.js";

let dir: string;
let client: Client;
let cleanup: () => void;

beforeAll(async () => {
  const temp = realTempDir("tacit-session-idle-");
  ({ dir, cleanup } = temp);
  const config = path.join(dir, "tacit.json");
  writeFileSync(config, JSON.stringify({ sessionIdleMs: 1000 }));
  // The snippet's time limit only bounds a test that went wrong: the snippet waits for the test.
  // Unchecked: what is tested is the reclaim, not the type check, which cost each call its CPU.
  client = await connectServe(["--no-check", "--config", config, "--exec-timeout-ms", "100000"], dir);
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

const live = async (): Promise<string[]> => {
  const listed = await client.callTool({ name: "list_sessions", arguments: {} });
  return (listed.structuredContent as { sessions: Array<{ session_id: string }> }).sessions.map((s) => s.session_id);
};

/** Defines n, says (a file) that it is under way, and waits, polling, until the test writes "release". */
const BUSY = `let n = 1;
requestFileSystem(".", (fs) => fs.access("started").write("started"));
while (!requestFileSystem(".", (fs) => fs.access("release").exists)) await new Promise((resolve) => setTimeout(resolve, 50));
n + 1
`;

it("a session whose snippet runs longer than sessionIdleMs is not reclaimed under it; once idle, it is", async ({ signal }) => {
  const started = path.join(dir, "started");
  // A session with BUSY under way. Between its creation and the snippet's start it is idle (a
  // round trip): should that take longer than sessionIdleMs, it is gone before the snippet
  // reaches it (answered "no session"), and another is made.
  let session: string | null = null;
  let busy: Promise<ToolResult> | null = null;
  while (busy === null && !signal.aborted) {
    const candidate = await createSession(client);
    let answered = false;
    const call = client.callTool({ name: "execute_in_session", arguments: { session_id: candidate, code: BUSY } }, undefined, { timeout: 200_000 });
    void call.finally(() => (answered = true)).catch(() => undefined);
    while (!existsSync(started) && !answered && !signal.aborted) await sleep(50);
    if (existsSync(started)) {
      session = candidate;
      busy = call.then((response) => response.structuredContent as unknown as ToolResult);
    } else {
      const early = await call;
      expect(JSON.stringify(early.content), "the snippet was answered before it began, and not for a session reclaimed first").toContain("no session");
    }
  }
  if (session === null || busy === null) throw new Error("no session ran the snippet before the test was given up");

  // The premise: a reclaim check runs while the snippet is under way, late enough to reclaim the
  // session had it been idle. The witness was last used after the snippet started; once it is
  // reclaimed, a check found it idle for longer than sessionIdleMs, and the busy session with it.
  const witness = await createSession(client);
  let listed = await live();
  while (listed.includes(witness) && !signal.aborted) {
    await sleep(100);
    listed = await live();
  }
  expect(listed, "no reclaim check was seen to run while the snippet was under way").not.toContain(witness);
  // The bad thing: the session was reclaimed while its snippet ran, and the snippet cancelled.
  expect(listed, "the session was reclaimed while its snippet ran").toContain(session);
  // list_sessions says so: busy, and not idle (its idle time counted on from the snippet's start).
  const listing = await client.callTool({ name: "list_sessions", arguments: {} });
  const entry = (listing.structuredContent as { sessions: Array<{ session_id: string; busy: boolean; idleMs: number }> }).sessions.find((s) => s.session_id === session);
  expect(entry).toMatchObject({ busy: true, idleMs: 0 });
  // Sent before the release, so that it waits behind the snippet: the session is not idle between the two.
  const after = runInSession(client, session, "n\n", 200_000);
  writeFileSync(path.join(dir, "release"), "");
  const result = await busy;
  expect(result.error).toBeNull();
  expect(result.stdout).toBe("2\n");
  expect((await after).stdout).toBe("1\n");

  // Idle, it is reclaimed as before (once a check finds it so: waited for as long as the test may run).
  while ((await live()).includes(session) && !signal.aborted) await sleep(250);
  expect(await live()).not.toContain(session);
  // A call to it says why it may be gone, in the idle time set (said "0 idle minutes" for a second).
  const gone = await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code: "n\n" } });
  expect(gone.isError).toBe(true);
  expect(JSON.stringify(gone.content)).toContain("reclaimed after 1 second idle");
}, 300_000);

it("create_repl_session's description tells the model after how long a session is reclaimed, and how many may live", async () => {
  const { tools } = await client.listTools();
  const create = tools.find((tool) => tool.name === "create_repl_session");
  expect(create?.description).toContain("A session with no call for 1 second is reclaimed, its bindings lost; at most 100 live at once");
});
