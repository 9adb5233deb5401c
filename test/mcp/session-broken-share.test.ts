// A session that cannot go on (its rebuild after a failed snippet replayed differently, or could
// not be made) answers every later snippet with why, and tells the agent to create a new
// session. It went on holding what it had kept to replay its snippets, their code among it,
// until it was deleted or reclaimed idle (30 minutes): the new session the message asked for
// then had its snippets refused for code the broken session no longer had any use for.

import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

// A 250 MB heap: the sessions' code together may take about 32 MB (8 Mi characters, counted
// twice for the sandbox's copy, two bytes each); one bulky snippet takes 20 MiB of it.
let server: SmallHeapServe;

beforeAll(async () => {
  server = await smallHeapServe("tacit-session-broken-share-", ["--no-check"]);
});

afterAll(async () => {
  await server?.close();
});

/** About 5 Mi characters, then `tail`. */
const bulky = (tail: string): string => `// ${"x".repeat(5 * 1024 * 1024)}\n${tail}`;

it("a session broken by a rebuild that replayed differently gives back the code it kept: a new session's bulky snippet is taken", async () => {
  const { client } = server;
  const broken = await createSession(client);
  // An effect that names the clock: its replay asks for another file, and the rebuild cannot go on.
  const clocked = bulky('let a = 1;\nrequestFileSystem(".", (fs) => fs.access(`t${Date.now()}`).exists);');
  expect(await runInSession(client, broken, clocked, 60_000)).toMatchObject({ exitCode: 0, error: null });
  expect((await runInSession(client, broken, 'throw new Error("rebuild now")', 60_000)).exitCode).toBe(1);
  const after = await runInSession(client, broken, "a", 60_000);
  expect(after.exitCode).not.toBe(0);
  expect(after.error, server.stderr()).toContain("replaying the session's earlier snippets asked for something else than they did the first time");
  // What the message asks for: a new session, whose bulky snippet the broken one's code no longer crowds out.
  const fresh = await createSession(client);
  expect(await runInSession(client, fresh, bulky("let b = 2;"), 60_000)).toMatchObject({ exitCode: 0, error: null });
  // The broken session still says why it cannot go on.
  expect((await runInSession(client, broken, "a")).error).toContain("create a new session");
}, 90_000);
