// tacit serve logs through MCP logging messages (notifications/message), honouring the
// level the client sets, and says what happened — never the code or what it printed.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema, type LoggingMessageNotification } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, tacitBin } from "../helpers.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-mcp-log-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function connect(): Promise<{ client: Client; messages: LoggingMessageNotification["params"][] }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [tacitBin, "serve", "--quiet"],
    cwd: dir,
    env: childEnv(),
    stderr: "ignore",
  });
  const client = new Client({ name: "tacit-test", version: "0.0.0" });
  const messages: LoggingMessageNotification["params"][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    messages.push(notification.params);
  });
  await client.connect(transport);
  return { client, messages };
}

/**
 * Resolves once `arrived` holds of the messages received, waiting for as long as the test may run
 * (`signal`). A call's debug line is sent after its answer (logAfterAnswer): a fixed 200 ms wait
 * for it failed when a loaded machine took longer, and any message it had not yet let in went
 * unchecked by the assertions about what must never be sent.
 */
async function until(arrived: () => boolean, signal: AbortSignal): Promise<void> {
  while (!arrived() && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("tacit serve: MCP logging messages", () => {
  it("declares logging; at level debug reports each call and session, without code or output", async ({ signal }) => {
    const { client, messages } = await connect();
    try {
      expect(client.getServerCapabilities()?.logging).toBeDefined();
      await client.setLoggingLevel("debug");
      await client.callTool({ name: "execute_typescript", arguments: { code: 'println("PRINTED-CANARY")' } });
      const created = await client.callTool({ name: "create_repl_session", arguments: {} });
      const session = (created.structuredContent as { session_id: string }).session_id;
      await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
      // The session's end is logged after the execute_typescript call's debug line (sent before the next call was read).
      await until(() => messages.some((m) => String(m.data) === `session ${session} ended: deleted by the client`), signal);
      const texts = messages.map((m) => `${m.level} ${String(m.data)}`);
      expect(texts).toContainEqual(expect.stringMatching(/^debug execute_typescript: ok \(exit 0\) in \d+ ms$/));
      expect(texts).toContain(`info session ${session} created (1 live)`);
      expect(texts).toContain(`info session ${session} ended: deleted by the client`);
      expect(messages.every((m) => m.logger === "tacit")).toBe(true);
      expect(texts.join("\n")).not.toContain("PRINTED-CANARY");
      expect(texts.join("\n")).not.toContain("println");
    } finally {
      await client.close();
    }
  }, 30_000);

  it("at level warning, sends nothing below it", async ({ signal }) => {
    const { client, messages } = await connect();
    try {
      await client.setLoggingLevel("warning");
      const before = messages.length;
      await client.callTool({ name: "execute_typescript", arguments: { code: 'println("x")' } });
      const created = await client.callTool({ name: "create_repl_session", arguments: {} });
      const session = (created.structuredContent as { session_id: string }).session_id;
      // A marker that comes after anything those two calls could send: at level debug again, the
      // debug line of a call unlike them (a snippet in the session), sent once it has been answered,
      // after the level was set, which the server read only after the lines it sends once a call
      // has been answered.
      await client.setLoggingLevel("debug");
      await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code: "1" } });
      const isMarker = (m: LoggingMessageNotification["params"]): boolean => String(m.data).startsWith(`execute_in_session ${session}: `);
      await until(() => messages.slice(before).some(isMarker), signal);
      const marker = messages.findIndex((m, i) => i >= before && isMarker(m));
      expect(marker, "the marker never arrived").toBeGreaterThanOrEqual(before);
      expect(messages.slice(before, marker)).toEqual([]);
    } finally {
      await client.close();
    }
  }, 30_000);
});
