// A create_repl_session call cancelled while the session is made. The SDK sends no answer to a
// cancelled call, so the client never learns the session's id; the server kept the session
// anyway, with its sandbox, in one of its maxSessions places, until it was reclaimed idle (30
// minutes): with maxSessions 1, every later create_repl_session was refused meanwhile. The
// session is now ended at once, and none is kept.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawClient } from "./raw-client.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-session-cancel-"));
  writeFileSync(path.join(dir, "config.json"), JSON.stringify({ maxSessions: 1 }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Response = { id?: unknown; result?: { content?: Array<{ text: string }>; structuredContent?: Record<string, unknown>; isError?: boolean }; error?: unknown };

describe("create_repl_session cancelled while the session is made", () => {
  it("keeps no session: the one place of maxSessions 1 is free for the next call", async () => {
    // A raw client: the call and its cancellation go in one write, so the server reads the
    // cancellation before the call's handler goes on (an SDK client sends them apart).
    const client = rawClient<Response>(["--no-check", "--config", path.join(dir, "config.json")], dir, { TACIT_HOME: path.join(dir, "home") });
    const { line, answer, responses } = client;
    const call = (id: number, name: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });
    try {
      await client.initialize();
      client.send(line(call(2, "create_repl_session")) + line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2, reason: "the user stopped it" } }));
      // A session being made counts against the limit: the next call is sent once the server has read the cancelled one.
      client.send({ jsonrpc: "2.0", id: 10, method: "ping" });
      await answer(10);
      // The next session gets the one place: none was kept for the cancelled call.
      client.send(call(3, "create_repl_session"));
      const created = await answer(3);
      expect(created.result?.isError, created.result?.content?.[0]?.text).toBeFalsy();
      const id = created.result?.structuredContent?.session_id;
      expect(typeof id).toBe("string");
      client.send(call(4, "list_sessions"));
      const listed = await answer(4);
      expect((listed.result?.structuredContent?.sessions as Array<{ session_id: string }>).map((s) => s.session_id)).toEqual([id]);
      // The cancelled call is not answered (the SDK drops the answer to a cancelled request).
      expect(responses.some((r) => r.id === 2)).toBe(false);
    } finally {
      client.close();
    }
  }, 60_000);
});
