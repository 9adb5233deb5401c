// Requests the MCP SDK cannot read: `"params": null`, a member its schema does not know, a
// "jsonrpc" other than "2.0". The SDK's transport only reports such a line and reads on, so the
// client waited for an answer that never came. tacit serve now answers each with InvalidRequest
// by its id, saying what is wrong; nothing in it runs, and lines with no one to answer (a
// response, a notification, no JSON) are still only reported.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unreadableRequest } from "../../runner/mcp-stdin.js";
import { rawClient } from "./raw-client.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-unreadable-request-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Response = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

describe("requests the SDK cannot read", () => {
  it("are answered with InvalidRequest by their id, and none of them runs; the server goes on", async () => {
    const client = rawClient<Response>(["--no-check", "--allowed-roots", dir], dir, { TACIT_HOME: path.join(dir, "home") });
    const { send, answer, responses } = client;
    // Each would write this file if it ran.
    const marker = path.join(dir, "ran.txt");
    const code = `requestFileSystem(${JSON.stringify(dir)}, (fs) => fs.access("ran.txt").write("ran"));`;
    try {
      await client.initialize();
      send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: null });
      send({ jsonrpc: "2.0", id: "extra", method: "tools/call", params: { name: "execute_typescript", arguments: { code } }, trace: true });
      send({ jsonrpc: "1.0", id: 3, method: "tools/call", params: { name: "execute_typescript", arguments: { code } } });
      // A response with no request behind it, and a line that is no JSON: nothing to answer.
      send({ jsonrpc: "2.0", id: 4, error: "not a response" });
      send("{ not json\n");
      send({ jsonrpc: "2.0", id: 5, method: "ping" });
      await answer(5);
      // Each is answered as its line is read, so before the ping after them.
      const answered = (id: unknown): Response | undefined => responses.find((r) => r.id === id);
      const nullParams = answered(2);
      expect(nullParams, "no answer to the request with params null").toBeDefined();
      expect(nullParams?.error?.code).toBe(-32600);
      expect(nullParams?.error?.message).toContain('request "tools/call" is not a JSON-RPC request MCP reads, and nothing in it ran');
      expect(nullParams?.error?.message).toContain("at params");
      const extra = answered("extra");
      expect(extra?.error?.code).toBe(-32600);
      expect(extra?.error?.message).toContain('"trace"');
      const version = answered(3);
      expect(version?.error?.code).toBe(-32600);
      expect(version?.error?.message).toContain("at jsonrpc");
      expect(responses.some((r) => r.id === 4)).toBe(false);
      expect(existsSync(marker)).toBe(false);
      // The server reads on: a good call runs.
      send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "execute_typescript", arguments: { code: 'println("fine")' } } });
      expect(JSON.stringify((await answer(6)).result)).toContain("fine");
    } finally {
      client.close();
    }
  }, 60_000);

  it("finds nothing to answer in a notification, a response, an array or a valid request", () => {
    const line = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
    expect(unreadableRequest(line({ jsonrpc: "2.0", method: "notifications/x", params: null }))).toBeNull();
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: 1, result: 5 }))).toBeNull();
    expect(unreadableRequest(line([{ jsonrpc: "2.0", id: 1, method: "ping" }]))).toBeNull();
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: 1, method: "ping" }))).toBeNull();
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: null, method: "ping", params: null }))).toBeNull();
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: 7, method: "ping", params: null }))?.id).toBe(7);
  });
});
