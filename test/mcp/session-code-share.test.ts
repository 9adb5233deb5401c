// What all the sessions of one tacit serve keep of their snippets' code together is bounded:
// each session keeps at most SESSION_CODE_LIMIT_CHARS (16 MiB) of code, but a server holds up
// to maxSessions (100) sessions, so their code together was bounded only by what the client
// sent. The sessions draw on an eighth of tacit's heap limit (heap-share.ts); a snippet past
// it is refused before it is checked, saying so, and a deleted session gives its share back.

import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

// A 250 MB heap: the sessions' code together may take about 32 MB (8 Mi characters, counted
// twice for the sandbox's copy, two bytes each).
let server: SmallHeapServe;

beforeAll(async () => {
  server = await smallHeapServe("tacit-session-code-share-", ["--no-check"]);
});

afterAll(async () => {
  await server?.close();
});

/** A snippet of about 5 Mi characters (20 MiB as counted): a comment, then a binding. */
const bulky = (name: string): string => `// ${"x".repeat(5 * 1024 * 1024)}\nlet ${name} = 1;`;

it("sessions each within their own code limit cannot together keep more than the server holds; deleting one gives its share back", async () => {
  const { client } = server;
  const first = await createSession(client);
  expect(await runInSession(client, first, bulky("a"), 60_000)).toMatchObject({ exitCode: 0, error: null });
  const second = await createSession(client);
  const refused = await runInSession(client, second, bulky("b"), 60_000);
  expect(refused.exitCode).toBe(3);
  expect(refused.error).toContain("the server's sessions together already keep as much code as it holds for them");
  expect(refused.error).toContain("Delete sessions no longer needed");
  // The session goes on: small snippets still fit, the refused one's binding does not exist.
  expect(await runInSession(client, second, "let small = 2;\nsmall")).toMatchObject({ exitCode: 0, stdout: "2\n" });
  expect((await runInSession(client, second, "b")).exitCode).not.toBe(0);
  await client.callTool({ name: "delete_repl_session", arguments: { session_id: first } });
  expect(await runInSession(client, second, bulky("b"), 60_000)).toMatchObject({ exitCode: 0, error: null });
  expect(await runInSession(client, second, "b + small")).toMatchObject({ exitCode: 0, stdout: "3\n" });
}, 60_000);
