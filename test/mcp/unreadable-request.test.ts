// Requests the MCP SDK cannot read: `"params": null`, a member its schema does not know, a
// "jsonrpc" other than "2.0". The SDK's transport only reports such a line and reads on, so the
// client waited for an answer that never came. tacit serve now answers each with InvalidRequest
// by its id (a batch, or a request whose id is null, by the id null), saying what is wrong, and
// a line that is no JSON with a Parse error by the id null; nothing in them runs, and lines with
// no one to answer (a response, a notification) are still only reported.

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
      // The line that is no JSON: a Parse error by the id null, as JSON-RPC 2.0 says.
      const parseErrors = responses.filter((r) => r.id === null);
      expect(parseErrors).toHaveLength(1);
      expect(parseErrors[0]?.error?.code).toBe(-32700);
      expect(parseErrors[0]?.error?.message).toContain("is not JSON, and nothing in it ran: each MCP message is one JSON-RPC object on a line of its own");
      expect(existsSync(marker)).toBe(false);
      // The server reads on: a good call runs.
      send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "execute_typescript", arguments: { code: 'println("fine")' } } });
      expect(JSON.stringify((await answer(6)).result)).toContain("fine");
    } finally {
      client.close();
    }
  }, 60_000);

  it("finds nothing to answer in a notification, a response or a valid request, and answers a batch and an id that is no id by the id null", () => {
    const line = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
    expect(unreadableRequest(line({ jsonrpc: "2.0", method: "notifications/x", params: null }))).toBeNull();
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: 1, result: 5 }))).toBeNull();
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: null, error: { code: 1, message: "a response" } }))).toBeNull();
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: 1, method: "ping" }))).toBeNull();
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: 7, method: "ping", params: null }))?.id).toBe(7);
    expect(unreadableRequest(line([{ jsonrpc: "2.0", id: 1, method: "ping" }]))).toMatchObject({ id: null, problem: expect.stringContaining("batch") });
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: null, method: "ping" }))).toMatchObject({ id: null, problem: expect.stringContaining("has the id null") });
    expect(unreadableRequest(line({ jsonrpc: "2.0", id: 1.5e400, method: "ping" }))?.id).toBeNull();
    // Written out (JSON.stringify would write Infinity as null): the id is named as what it reads as, not as null.
    const huge = unreadableRequest(Buffer.from('{"jsonrpc":"2.0","id":1e400,"method":"ping"}'));
    expect(huge).toMatchObject({ id: null, problem: expect.stringContaining('request "ping" has a numeric id too large to hold (it reads as Infinity)') });
    expect(huge?.problem).not.toContain("has the id null");
  });
});

describe("a batch, and a request whose id is null", () => {
  // Neither is a request MCP reads (its requests have a string or number id; batches left it in
  // 2025-06-18), so the SDK's transport only reported the line, and the client waited for an
  // answer that never came. JSON-RPC 2.0 answers an invalid request whose id cannot be told with
  // an error whose id is null: tacit serve now does, and runs nothing of it.
  it("are each answered with InvalidRequest by the id null, saying what to send instead; nothing in them runs and the server goes on", async () => {
    const client = rawClient<Response>(["--no-check", "--allowed-roots", dir], dir, { TACIT_HOME: path.join(dir, "home") });
    const { send, answer, responses } = client;
    const marker = path.join(dir, "batch-ran.txt");
    const call = (id: unknown) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "execute_typescript", arguments: { code: `requestFileSystem(${JSON.stringify(dir)}, (fs) => fs.access("batch-ran.txt").write("ran"));` } },
    });
    try {
      await client.initialize();
      send([call(2), call(3)]);
      send([]);
      send(call(null));
      send({ ...call(4), id: true });
      send({ jsonrpc: "2.0", id: 5, method: "ping" });
      await answer(5);
      // Each is answered as its line is read, so before the ping after them, in order.
      const unanswerable = responses.filter((r) => r.id === null);
      expect(unanswerable.map((r) => r.error?.code)).toEqual([-32600, -32600, -32600, -32600]);
      const [batch, empty, nullId, trueId] = unanswerable.map((r) => r.error?.message ?? "");
      expect(batch).toContain("a JSON-RPC batch (an array of 2 messages) is not something MCP reads, and nothing in it ran");
      expect(batch).toContain("Send each request as a line of its own");
      expect(empty).toContain("an array of 0 messages");
      expect(nullId).toContain('request "tools/call" has the id null, and nothing in it ran');
      expect(nullId).toContain("Send it again with an id of its own");
      expect(trueId).toContain("has the id true");
      // Nothing answered by the ids inside the batch: none of its calls ran.
      expect(responses.some((r) => r.id === 2 || r.id === 3)).toBe(false);
      expect(existsSync(marker)).toBe(false);
      // The server reads on: a good call runs.
      send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "execute_typescript", arguments: { code: 'println("fine")' } } });
      expect(JSON.stringify((await answer(6)).result)).toContain("fine");
      expect(existsSync(marker)).toBe(false);
    } finally {
      client.close();
    }
  }, 60_000);
});

// The id that is no id was quoted as JSON.stringify wrote it: an array id nested 100,000 deep (200 KB)
// overflowed the stack while the line was answered, inside the transport's error handler, and the
// transport closed: the server stopped (exit 1), every session and call with it. An object id of
// 5 MB was quoted whole in the answer.
describe("a request whose id is an array or object", () => {
  it("is answered with InvalidRequest by the id null, naming the id's kind, however deep or long; the server goes on", async () => {
    const client = rawClient<Response>(["--no-check", "--allowed-roots", dir], dir, { TACIT_HOME: path.join(dir, "home") });
    const { send, answer, responses } = client;
    try {
      await client.initialize();
      const depth = 100_000;
      send(`{"jsonrpc":"2.0","id":${"[".repeat(depth)}${"]".repeat(depth)},"method":"ping"}\n`);
      const wide: Record<string, number> = {};
      for (let i = 0; i < 400_000; i++) wide[`k${i}`] = i;
      send({ jsonrpc: "2.0", id: wide, method: "ping" });
      send({ jsonrpc: "2.0", id: 5, method: "ping" });
      await answer(5);
      const unanswerable = responses.filter((r) => r.id === null);
      expect(unanswerable.map((r) => r.error?.code)).toEqual([-32600, -32600]);
      const [deep, long] = unanswerable.map((r) => r.error?.message ?? "");
      expect(deep).toContain('request "ping" has the id an array, and nothing in it ran');
      expect(long).toContain('request "ping" has the id an object, and nothing in it ran');
      expect((long ?? "").length).toBeLessThan(1_000);
      send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "execute_typescript", arguments: { code: 'println("fine")' } } });
      expect(JSON.stringify((await answer(6)).result)).toContain("fine");
    } finally {
      client.close();
    }
  }, 60_000);
});
