// Sessions and tool calls at their edges, through the MCP SDK client: a snippet queued behind
// another when its session is deleted says what happened to it.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, createSession, runInSession } from "../helpers.js";

let dir: string;
let client: Client;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-session-edges-"));
  client = await connectServe(["--no-check"], dir, { env: { TACIT_HOME: path.join(dir, "home") } });
});
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

const text = (response: Awaited<ReturnType<Client["callTool"]>>): string => (response.content as Array<{ text: string }>)[0]?.text ?? "";

describe("a session deleted while snippets wait", () => {
  it("tells the snippet queued behind a running one that the session ended and it never ran", async () => {
    const session = await createSession(client);
    expect(await runInSession(client, session, "let runs = 0;")).toMatchObject({ exitCode: 0 });
    const running = runInSession(client, session, "runs++;\nconst end = Date.now() + 2000;\nwhile (Date.now() < end) {}\nruns");
    const queued = runInSession(client, session, "runs++;\nruns");
    await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
    const [first, second] = await Promise.all([running, queued]);
    expect(first.exitCode).not.toBe(0);
    expect(second.stdout).toBe("");
    expect(second.error).toContain("the session ended (deleted by the client, reclaimed after being idle, or the server stopping)");
    expect(second.error).toContain("it never ran. Create a new session with create_repl_session");
    const after = await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code: "runs" } });
    expect(text(after)).toContain(`no session "${session}"`);
  }, 60_000);
});
