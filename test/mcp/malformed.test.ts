// A stream of malformed messages to `tacit serve` — bad JSON, unknown methods, wrong types, a
// huge payload — after which the server still answers a well-formed request correctly.

import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { repoRoot, tacitBin } from "../helpers.js";

describe("tacit serve under malformed input", () => {
  it("answers correctly after garbage", async () => {
    const child = spawn(process.execPath, [tacitBin, "serve", "--quiet"], { cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
    const responses: Array<{ id?: unknown; result?: unknown; error?: { code: number } }> = [];
    let buffered = "";
    let stdoutGarbage = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        try {
          responses.push(JSON.parse(line) as never);
        } catch {
          stdoutGarbage += line;
        }
      }
    });
    const send = (message: unknown): boolean => child.stdin.write((typeof message === "string" ? message : JSON.stringify(message)) + "\n");
    send("this is not json");
    send("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\":");
    send({ jsonrpc: "2.0", id: 2, method: "no/such/method", params: {} });
    send({ jsonrpc: "2.0", id: 3, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "execute_typescript", arguments: { code: 12345 } } });
    send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "execute_typescript", arguments: { code: "x".repeat(2_000_000) } } });
    send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "execute_typescript", arguments: { code: 'println("still fine")' } } });
    const deadline = Date.now() + 30_000;
    // Calls run concurrently: the huge one (5) may answer after the small one (6).
    const answered = (id: number) => responses.some((r) => r.id === id);
    while (![4, 5, 6].every(answered) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    child.stdin.end();
    child.kill();
    expect(stdoutGarbage).toBe("");
    expect(responses.find((r) => r.id === 2)?.error?.code).toBe(-32601);
    expect(responses.find((r) => r.id === 3)?.result).toBeTruthy();
    const wrongType = responses.find((r) => r.id === 4) as { error?: { code: number; message: string } } | undefined;
    expect(wrongType?.error?.code).toBe(-32602);
    expect(wrongType?.error?.message).toContain('argument "code"');
    const huge = responses.find((r) => r.id === 5) as { result?: { isError?: boolean } } | undefined;
    expect(huge?.result?.isError).toBe(true);
    const fine = responses.find((r) => r.id === 6) as { result?: { structuredContent?: { stdout: string } } } | undefined;
    expect(fine?.result?.structuredContent?.stdout).toBe("still fine\n");
  });
});
