// Requests the MCP SDK cannot read: `"params": null`, a member its schema does not know, a
// "jsonrpc" other than "2.0". The SDK's transport only reports such a line and reads on, so the
// client waited for an answer that never came. tacit serve now answers each with InvalidRequest
// by its id, saying what is wrong; nothing in it runs, and lines with no one to answer (a
// response, a notification, no JSON) are still only reported.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unreadableRequest } from "../../runner/mcp-stdin.js";
import { childEnv, tacitBin } from "../helpers.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-unreadable-request-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Response = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

describe("requests the SDK cannot read", () => {
  it("are answered with InvalidRequest by their id, and none of them runs; the server goes on", async () => {
    const child = spawn(process.execPath, [tacitBin, "serve", "--no-check", "--allowed-roots", dir], {
      cwd: dir,
      env: childEnv({ TACIT_HOME: path.join(dir, "home") }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const responses: Response[] = [];
    let buffered = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
        responses.push(JSON.parse(buffered.slice(0, newline)) as Response);
        buffered = buffered.slice(newline + 1);
      }
    });
    const send = (message: unknown): void => void child.stdin.write(JSON.stringify(message) + "\n");
    const answer = async (id: unknown): Promise<Response> => {
      while (!responses.some((r) => r.id === id) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
      const found = responses.find((r) => r.id === id);
      if (!found) throw new Error(`tacit serve ended before answering ${String(id)}`);
      return found;
    };
    // Each would write this file if it ran.
    const marker = path.join(dir, "ran.txt");
    const code = `requestFileSystem(${JSON.stringify(dir)}, (fs) => fs.access("ran.txt").write("ran"));`;
    try {
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
      await answer(1);
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: null });
      send({ jsonrpc: "2.0", id: "extra", method: "tools/call", params: { name: "execute_typescript", arguments: { code } }, trace: true });
      send({ jsonrpc: "1.0", id: 3, method: "tools/call", params: { name: "execute_typescript", arguments: { code } } });
      // A response with no request behind it, and a line that is no JSON: nothing to answer.
      send({ jsonrpc: "2.0", id: 4, error: "not a response" });
      child.stdin.write("{ not json\n");
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
      child.stdin.end();
      child.kill();
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
