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

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe("tacit serve: MCP logging messages", () => {
  it("declares logging; at level debug reports each call and session, without code or output", async () => {
    const { client, messages } = await connect();
    try {
      expect(client.getServerCapabilities()?.logging).toBeDefined();
      await client.setLoggingLevel("debug");
      await client.callTool({ name: "execute_typescript", arguments: { code: 'println("PRINTED-CANARY")' } });
      const created = await client.callTool({ name: "create_repl_session", arguments: {} });
      const session = (created.structuredContent as { session_id: string }).session_id;
      await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
      await settle();
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

  it("at level warning, sends nothing below it", async () => {
    const { client, messages } = await connect();
    try {
      await client.setLoggingLevel("warning");
      const before = messages.length;
      await client.callTool({ name: "execute_typescript", arguments: { code: 'println("x")' } });
      await client.callTool({ name: "create_repl_session", arguments: {} });
      await settle();
      expect(messages.slice(before)).toEqual([]);
    } finally {
      await client.close();
    }
  }, 30_000);
});
