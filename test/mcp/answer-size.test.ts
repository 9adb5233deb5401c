// Answers that an MCP client can read. The SDK's stdio client reads at most 10 MiB of a message
// and closes the connection past it, so one large answer cost the client the server and every
// session in it: an answer holds a script's output twice (the text and structuredContent), so
// 10 MiB printed made 20 MiB, and a control character escapes to six bytes in JSON. Output and
// errors are now cut to fit, with a marker and `truncated`, and the connection stays.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerTexts, connectServe, createSession, runInSession, type ToolResult } from "../helpers.js";

let dir: string;
let client: Client;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-answer-size-"));
  client = await connectServe(["--no-check"], dir, { env: { TACIT_HOME: path.join(dir, "home") } });
});
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

const TEN_MIB = 10 * 1024 * 1024;
const answerBytes = (response: unknown): number => Buffer.byteLength(JSON.stringify(response));

async function execute(code: string): Promise<{ response: Awaited<ReturnType<Client["callTool"]>>; result: ToolResult }> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 120_000 });
  return { response, result: response.structuredContent as unknown as ToolResult };
}

describe("answers within what an MCP client reads", () => {
  it("cuts 30 MiB of output to fit, says so, and the connection and sessions stay", async () => {
    const session = await createSession(client);
    expect(await runInSession(client, session, "const kept = 41;")).toMatchObject({ exitCode: 0 });
    const { response, result } = await execute('const chunk = "y".repeat(1024 * 1024);\nfor (let i = 0; i < 30; i++) print(chunk);\nprintln("end");');
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.stdout.startsWith("y".repeat(1000))).toBe(true);
    expect(result.stdout).toContain("[tacit: output cut here: the rest (");
    expect(result.stdout).toContain("print less, or write large results to a file with requestFileSystem");
    expect(answerBytes(response)).toBeLessThan(TEN_MIB);
    // What the model reads: the marker is tacit's, in tacit's item; the output item holds the script's output alone.
    const { output, report } = answerTexts(response);
    expect(report).toMatch(/^\[tacit: exit 0, \d+ ms, output truncated\]\n\[tacit: output cut here: the rest \(/);
    expect(output.startsWith("y".repeat(1000)) && !output.includes("[tacit:")).toBe(true);
    // The same connection goes on, and so does the session.
    expect(await runInSession(client, session, "kept + 1")).toMatchObject({ stdout: "42\n", exitCode: 0 });
  }, 120_000);

  it("counts output as JSON escapes it: 3 MiB of control characters in a snippet", async () => {
    const session = await createSession(client);
    const result = await runInSession(client, session, 'print("\\u0001".repeat(3 * 1024 * 1024));\nconst after = 1;', 120_000);
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.stdout.startsWith("\u0001".repeat(1000))).toBe(true);
    expect(result.stdout).toContain("[tacit: output cut here");
    // The snippet succeeded, and its binding is kept.
    expect(await runInSession(client, session, "after + 1")).toMatchObject({ stdout: "2\n", exitCode: 0 });
  }, 120_000);

  it("answers an error of 30 MB within it too, keeping its start", async () => {
    const { response, result } = await execute('throw new Error("e".repeat(30_000_000));');
    expect(result.exitCode).toBe(1);
    expect(result.error?.startsWith(`Error: ${"e".repeat(1000)}`)).toBe(true);
    expect(answerBytes(response)).toBeLessThan(TEN_MIB);
    expect((await execute('println("fine")')).result).toMatchObject({ stdout: "fine\n", exitCode: 0, truncated: false });
  }, 120_000);
});
