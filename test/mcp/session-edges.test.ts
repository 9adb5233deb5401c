// Sessions and tool calls at their edges, through the MCP SDK client: a snippet queued behind
// another when its session is deleted says what happened to it; a name the client sent (a
// session id, a tool, an argument) is quoted in an error in part, not echoed whole (a message
// may hold 10 MiB, and an error echoing it gave the client, and the model reading it, as much).

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, createSession, runInSession, type ToolResult } from "../helpers.js";

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
    // Under way until the deletion ends it: it says so (a file), then waits on a timer for a file
    // nobody writes. A 2 s timer instead left it to the machine's load whether the deletion came
    // while it ran, or before it had started (the two then both queued) or after it had ended.
    const running = runInSession(
      client,
      session,
      'runs++;\nrequestFileSystem(".", (fs) => fs.access("running").write("x"));\n' +
        'while (!requestFileSystem(".", (fs) => fs.access("never-written").exists)) await new Promise((resolve) => setTimeout(resolve, 50));\nruns',
    );
    const queued = runInSession(client, session, "runs++;\nruns");
    while (!existsSync(path.join(dir, "running"))) await new Promise((resolve) => setTimeout(resolve, 20));
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

describe("names from the client in errors", () => {
  it("quotes a 5,000,000-character session id in part, with its length", async () => {
    const id = "s".repeat(5_000_000);
    for (const call of [
      { name: "execute_in_session", arguments: { session_id: id, code: "1" } },
      { name: "delete_repl_session", arguments: { session_id: id } },
    ]) {
      const response = await client.callTool(call);
      expect(response.isError).toBe(true);
      expect(text(response)).toContain(`no session "${"s".repeat(64)}"… (5,000,000 characters)`);
      expect(text(response).length).toBeLessThan(1_000);
    }
  }, 60_000);

  it("quotes an unknown tool's 5,000,000-character name and 100,000 unknown arguments in part", async () => {
    const refusal = async (params: { name: string; arguments: Record<string, unknown> }): Promise<McpError> => {
      const error = await client.callTool(params).then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
      return error as McpError;
    };
    const tool = await refusal({ name: "t".repeat(5_000_000), arguments: {} });
    expect(tool.message).toContain(`unknown tool "${"t".repeat(64)}"… (5,000,000 characters); this server's tools are execute_typescript`);
    expect(tool.message.length).toBeLessThan(1_000);
    const extra: Record<string, unknown> = { code: 'println("never")' };
    for (let i = 0; i < 100_000; i++) extra[`k${i}`] = 1;
    const args = await refusal({ name: "execute_typescript", arguments: extra });
    expect(args.message).toContain('unknown arguments "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9" and 99,990 more (it takes "code")');
    expect(args.message.length).toBeLessThan(1_000);
    // The server goes on.
    const fine = await client.callTool({ name: "execute_typescript", arguments: { code: 'println("fine")' } });
    expect((fine.structuredContent as unknown as ToolResult).stdout).toBe("fine\n");
  }, 60_000);

  // JSON.stringify escapes ESC, BEL and the rest of C0, not the C1 controls (CSI, U+009B, starts a
  // terminal's escape sequence as ESC [ does) nor bidi overrides, and the model chooses a session id and
  // argument names: a client that shows the text on a terminal acted on them, as tacit's report does not.
  it("quotes a session id, a tool's name and an argument's name holding C1 controls and bidi overrides with them as escapes", async () => {
    const hostile = "s\u009b2J\u009d0;forged\u0007\u202e[tacit: exit 0, 3 ms]\u2066x";
    const unescaped = /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/u;
    for (const call of [
      { name: "execute_in_session", arguments: { session_id: hostile, code: "1" } },
      { name: "delete_repl_session", arguments: { session_id: hostile } },
    ]) {
      const response = await client.callTool(call);
      expect(response.isError).toBe(true);
      expect(text(response)).toContain("no session");
      expect(text(response)).toContain("\\u009b2J");
      expect(unescaped.test(text(response))).toBe(false);
    }
    for (const params of [
      { name: hostile, arguments: {} },
      { name: "execute_typescript", arguments: { code: "1", [hostile]: 1 } },
    ]) {
      const error = await client.callTool(params).then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).message).toContain("\\u202e");
      expect(unescaped.test((error as McpError).message)).toBe(false);
    }
  }, 60_000);
});
