// `tacit serve` keeps going when one client message or one session asks too much of the host:
// a JSON-RPC message longer than the stdio limit is skipped and answered with an error (the
// SDK's transport used to close on it, and the server stopped without a word); a session
// filling its classified store is refused, while the server and other sessions go on; a
// snippet killed while classified work was queued frees the session's evaluator at once.

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, connectServe, createSession, runInSession, tacitBin, type ToolResult } from "../helpers.js";
import { MAX_MESSAGE_BYTES, MessageLines, type OversizedMessage, requestIdOf } from "../../runner/mcp-stdin.js";

const OVERSIZED_CODE = "//" + "x".repeat(20 * 1024 * 1024);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-serve-limits-"));
  // A small store, so that filling it takes a moment; the default is 256 MiB.
  writeFileSync(path.join(dir, "config.json"), JSON.stringify({ classifiedStoreLimitBytes: 16 * 1024 * 1024 }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A raw `tacit serve`: lines in, parsed lines out. */
function rawServer(): { child: ChildProcessWithoutNullStreams; responses: Array<Record<string, unknown>>; stderr: () => string; send: (line: string) => void } {
  const child = spawn(process.execPath, [tacitBin, "serve", "--no-check"], { cwd: dir, stdio: ["pipe", "pipe", "pipe"] });
  const responses: Array<Record<string, unknown>> = [];
  let buffered = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
      responses.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
      buffered = buffered.slice(newline + 1);
    }
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.on("error", () => undefined);
  return { child, responses, stderr: () => stderr, send: (line) => void child.stdin.write(line + "\n") };
}

async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("MessageLines and requestIdOf", () => {
  it("pass lines that fit whole, however they are chunked, and report the rest with their ids", () => {
    const lines: string[] = [];
    const oversized: OversizedMessage[] = [];
    const splitter = new MessageLines(64, (line) => lines.push(line.toString()), (message) => oversized.push(message));
    const long = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "m", params: { p: "z".repeat(200) } });
    const text = `{"a":1}\n${long}\n{"b":2}\n\n`;
    for (let i = 0; i < text.length; i += 5) splitter.push(Buffer.from(text.slice(i, i + 5)));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', ""]);
    expect(oversized).toEqual([{ bytes: long.length, id: 7 }]);
  });

  it("read a long line's id from its last bytes however it is chunked: a byte at a time, or in pieces longer than the ends kept", () => {
    const long = JSON.stringify({ jsonrpc: "2.0", method: "m", params: { p: "q".repeat(20_000) }, id: "last-id" });
    for (const size of [1, 7, 4095, 4097, 9000]) {
      const oversized: OversizedMessage[] = [];
      const lines: string[] = [];
      const splitter = new MessageLines(100, (line) => lines.push(line.toString()), (message) => oversized.push(message));
      const text = `${long}\n{"after":1}\n`;
      for (let i = 0; i < text.length; i += size) splitter.push(Buffer.from(text.slice(i, i + size)));
      expect(oversized, `pieces of ${size}`).toEqual([{ bytes: long.length, id: "last-id" }]);
      expect(lines, `pieces of ${size}`).toEqual(['{"after":1}']);
    }
  });

  it("find an id only where it is a top-level member", () => {
    expect(requestIdOf('{"jsonrpc":"2.0","id":"abc","method":"x","params":{"p":"', "")).toBe("abc");
    expect(requestIdOf('{"params":{"id":5,"q":[1,{"id":6}]},"id":8,"method":', "")).toBe(8);
    expect(requestIdOf("", 'zz"},"jsonrpc":"2.0","id":42}')).toBe(42);
    expect(requestIdOf("", 'zz \\"},"jsonrpc":"2.0","id":"a\\"b"}')).toBe('a"b');
    // Nested, or inside a string: not the message's id.
    expect(requestIdOf('{"params":{"id":5,"code":"', "")).toBeNull();
    expect(requestIdOf("", '"params":{"id":5}}')).toBeNull();
    expect(requestIdOf("", '"code":"x \\"id\\":5}"}')).toBeNull();
    expect(requestIdOf('{"jsonrpc":"2.0","method":"notifications/x","params":{"', '"}}')).toBeNull();
  });
});

// The suites below run side by side (describe.concurrent), each test's server its own but for
// the classified store suite's, whose tests run one after another (it.sequential) on theirs: the
// byte-at-a-time test (about 6 s, its writer's and tacit's system calls), the oversized
// messages' three servers, and the store suite's snippets, which mostly wait for their time limits.
describe.concurrent("tacit serve and oversized messages", () => {
  it("skips a 20 MB line, answers it with an error by its id (first or last), and answers the next call", async () => {
    const server = rawServer();
    try {
      server.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } }));
      server.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      const call = (code: string) => ({ name: "execute_typescript", arguments: { code } });
      // Most clients write the id first; the MCP SDK writes it last.
      server.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call(OVERSIZED_CODE) }));
      server.send(JSON.stringify({ method: "tools/call", params: call(OVERSIZED_CODE), jsonrpc: "2.0", id: "last" }));
      // A notification has no id to answer: it is only logged.
      server.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { blob: OVERSIZED_CODE } }));
      server.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: call('println("still answering")') }));
      // Bounded by the test's own time (it runs beside the file's other servers), or the server's end.
      await until(() => server.responses.some((r) => r.id === 3) || server.child.exitCode !== null, 55_000);

      expect(server.child.exitCode).toBeNull();
      const errorOf = (id: unknown) => (server.responses.find((r) => r.id === id) as { error?: { code: number; message: string } } | undefined)?.error;
      for (const id of [2, "last"]) {
        expect(errorOf(id)?.code).toBe(ErrorCode.InvalidRequest);
        expect(errorOf(id)?.message).toContain("is longer than the 10 MiB tacit serve reads; it was skipped, nothing in it ran");
      }
      const fine = server.responses.find((r) => r.id === 3) as { result?: { structuredContent?: ToolResult } } | undefined;
      expect(fine?.result?.structuredContent).toMatchObject({ stdout: "still answering\n", exitCode: 0 });
      expect(server.stderr()).toContain("(request 2 is answered with an error)");
      expect(server.stderr()).toContain('(request "last" is answered with an error)');
      expect(server.stderr()).toContain("no request id could be read from it, so it is not answered");
      // Logged to the client too.
      const logged = server.responses.filter((r) => r.method === "notifications/message").map((r) => JSON.stringify(r.params));
      expect(logged.some((text) => text.includes("it was skipped, nothing in it ran"))).toBe(true);
    } finally {
      server.child.stdin.end();
      server.child.kill();
    }
  }, 60_000);

  it("through the real SDK client: the oversized call fails with InvalidRequest, the next one is answered", async () => {
    const client = await connectServe(["--quiet", "--no-check"], dir);
    try {
      const oversized = client.callTool({ name: "execute_typescript", arguments: { code: OVERSIZED_CODE } });
      await expect(oversized).rejects.toBeInstanceOf(McpError);
      await expect(oversized).rejects.toMatchObject({ code: ErrorCode.InvalidRequest });
      const response = await client.callTool({ name: "execute_typescript", arguments: { code: 'println("after")' } });
      expect(response.structuredContent).toMatchObject({ stdout: "after\n", exitCode: 0 });
    } finally {
      await client.close();
    }
  }, 60_000);

  it("still takes a message just under the limit", async () => {
    const client = await connectServe(["--quiet", "--no-check"], dir);
    try {
      const code = 'println("big comment");\n//' + "y".repeat(MAX_MESSAGE_BYTES - 1024 * 1024);
      const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
      expect(response.structuredContent).toMatchObject({ stdout: "big comment\n", exitCode: 0 });
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe.concurrent("tacit serve and a message its client writes a byte at a time", () => {
  it("keeps the line in the memory its bytes take, not an object a byte: answered under a 16 MiB heap", async () => {
    // 1 MB of a ping's params, one write(2) per byte, from a process whose stdout is tacit's
    // stdin. Kept chunk by chunk, the line took the host past its heap (8 MB took it to a 405 MB
    // peak unlimited): tacit reads what the pipe holds, a few bytes a read while it keeps up, and
    // each chunk kept costs an object of its own. How many chunks there are depends on how busy
    // the machine is: at 4 MB under 64 MiB (this test before), MessageLines keeping a list of its
    // chunks again got 269,908 of them, 60 MB of heap, and answered once of two tries (the test
    // passed without the fix) at a load average of 20 on 2 cores. At 2 MB under 20 MiB, it ran out
    // of heap each of 5 times tried (2 MB under 16 MiB: 4 of 4), while the line kept whole was answered under 16 MiB
    // each of 6 times, and under 14 MiB (under 12 MiB it was not: tacit's own room). Half the bytes,
    // half the write(2)s (most of this file's time), for a test that fails without the fix. Halved
    // again, 1 MB under 16 MiB: with MessageLines keeping its chunks, it ran out of heap each of 5
    // times tried (load average 6-7 on 2 cores), 3 to 5 s into a line that takes 7 to 10 s whole;
    // the byte test took 15 s of CPU at 2 MB, 9 s at 1 MB.
    const writer = path.join(dir, "byte-writer.cjs");
    writeFileSync(
      writer,
      `const fs = require("fs");
fs.writeSync(1, '{"jsonrpc":"2.0","id":"byte-ping","method":"ping","params":{"x":"');
const x = Buffer.from("x");
for (let i = 0; i < ${1_000_000}; i++) fs.writeSync(1, x);
fs.writeSync(1, '"}}\\n');
`,
    );
    const source = spawn(process.execPath, [writer], { stdio: ["ignore", "pipe", "inherit"] });
    const child = spawn(process.execPath, [tacitBin, "serve"], { cwd: dir, stdio: [source.stdout, "pipe", "pipe"], env: childEnv({ NODE_OPTIONS: "--max-old-space-size=16" }) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // The writer ends after its line, which closes tacit's stdin: the server answers and ends.
    const code = await new Promise<number | null>((resolve) => child.on("close", (exitCode) => resolve(exitCode)));
    expect(stderr).not.toMatch(/heap out of memory/i);
    expect(code, stderr).toBe(0);
    const answers = stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(answers).toContainEqual({ jsonrpc: "2.0", id: "byte-ping", result: {} });
  }, 180_000);
});

describe.concurrent("tacit serve and a session that fills its classified store", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connectServe(["--quiet", "--no-check", "--config", "config.json", "--exec-timeout-ms", "3000", "--network-permissions", "127.0.0.1:9"], dir);
  });
  afterAll(async () => {
    await client.close();
  });

  const create = () => createSession(client);
  const run = (session: string, code: string) => runInSession(client, session, code, 120_000);

  it.sequential("is refused, visibly, while the server and other sessions go on", async () => {
    const greedy = await create();
    const other = await create();
    const filled = await run(greedy, 'const big = "x".repeat(1024 * 1024);\nlet n = 0;\nfor (;;) { classify(big + n); n++; }');
    expect(filled.exitCode).toBe(1);
    expect(filled.error).toContain("classify(): refused a value of about 2.0 MiB");
    expect(filled.error).toContain("of the 16.0 MiB the host keeps for classified values");
    // The store is per session: the other one has all of its own.
    expect(await run(other, 'const mine = classify("y".repeat(1024 * 1024));\nString(mine)')).toMatchObject({ stdout: '"Classified(***)"\n', exitCode: 0 });
    expect(await run(greedy, "1 + 1")).toMatchObject({ stdout: "2\n", exitCode: 0 });
    const oneShot = await client.callTool({ name: "execute_typescript", arguments: { code: 'println("one-shot")' } });
    expect(oneShot.structuredContent).toMatchObject({ stdout: "one-shot\n", exitCode: 0 });
    await expect(client.ping()).resolves.toBeDefined();
  }, 120_000);

  it.sequential("a script nested thousands deep is refused; the server and the session stay", async () => {
    // A security review crashed the server (SIGSEGV in the native parser) with 20 KB of brackets.
    const session = await create();
    expect(await run(session, "const kept = 41;")).toMatchObject({ exitCode: 0 });
    const deep = `const x = ${"(".repeat(10_000)}1${")".repeat(10_000)};`;
    const chain = `const y = 1${"+1".repeat(3_000)};`;
    for (const code of [deep, chain]) {
      const refused = await run(session, code);
      expect(refused.exitCode).toBe(3); // rejected before running
      expect(refused.error).toContain("[too-deep]");
      const oneShot = await client.callTool({ name: "execute_typescript", arguments: { code } });
      expect((oneShot.structuredContent as unknown as ToolResult).error).toContain("[too-deep]");
    }
    expect(await run(session, "kept + 1")).toMatchObject({ stdout: "42\n", exitCode: 0 });
  }, 120_000);

  it.sequential("a snippet killed while its classified work was queued frees the session's evaluator at once", async () => {
    const session = await create();
    // About 144 s of jobs, and a request that waits for their value. No clock in the test: an
    // answer that waited for the queued jobs could not come within the test's 120 s (its
    // timeout fails it), and the snippet's own 3 s limit is what ended it (124). Each map waits
    // (Atomics.wait) rather than spins: a job under way all the same, without a core.
    const slow =
      'let value = classify("x");\n' +
      "for (let i = 0; i < 30; i++) value = value.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4800); return s; });\n" +
      'requestNetwork(["127.0.0.1:9"], (net) => net.httpPostClassified("http://127.0.0.1:9/", value));';
    const killed = await run(session, slow);
    expect(killed.exitCode).toBe(124);
    expect(killed.error).toMatch(/ran longer than 3000 ms/);
    // The next snippet's map runs now, not behind the killed one's: its request gets as far as
    // the (closed) port. Behind them, it would wait past its own 3 s limit and end with 124.
    const after = await run(session, 'const quick = classify("quick").map((s) => s + "!");\nrequestNetwork(["127.0.0.1:9"], (net) => net.httpPostClassified("http://127.0.0.1:9/", quick));');
    expect(after.exitCode, after.error ?? "").toBe(1);
    expect(after.error).toContain("http://127.0.0.1:9");
  }, 120_000);
});
