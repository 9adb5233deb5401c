// An idle session is reclaimed (sessionIdleMs); a busy one is not. The reclaim looked only at
// when a session's last snippet started or ended, so an eleventh security review's snippet
// that ran longer than sessionIdleMs (a long computation, or a command, within the time limit)
// had its session reclaimed under it: the snippet was ended as cancelled and the session's
// bindings were gone, though it had never been idle.

import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { connectServe, createSession, runInSession } from "../helpers.js";

let client: Client;
let cleanup: () => void;

beforeAll(async () => {
  const temp = realTempDir("tacit-session-idle-");
  cleanup = temp.cleanup;
  const config = path.join(temp.dir, "tacit.json");
  writeFileSync(config, JSON.stringify({ sessionIdleMs: 1000 }));
  client = await connectServe(["--config", config, "--exec-timeout-ms", "20000"], temp.dir);
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

const live = async (): Promise<string[]> => {
  const listed = await client.callTool({ name: "list_sessions", arguments: {} });
  return (listed.structuredContent as { sessions: Array<{ session_id: string }> }).sessions.map((s) => s.session_id);
};

it("a session whose snippet runs longer than sessionIdleMs is not reclaimed under it; once idle, it is", async () => {
  const session = await createSession(client);
  expect((await runInSession(client, session, "let n = 1;\n")).exitCode).toBe(0);
  // Under way for 3.5 s, waiting on a timer (a busy loop spun a core for it; the session is as busy either way).
  const busy = await runInSession(client, session, "await new Promise((resolve) => setTimeout(resolve, 3500));\nn + 1\n");
  // The bad thing: the session was reclaimed while its snippet ran, and the snippet cancelled.
  expect(busy.error).toBeNull();
  expect(busy.stdout).toBe("2\n");
  expect(await live()).toContain(session);
  expect((await runInSession(client, session, "n\n")).stdout).toBe("1\n");
  // Idle, it is reclaimed as before.
  const until = Date.now() + 10_000;
  while ((await live()).includes(session) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 250));
  expect(await live()).not.toContain(session);
});
