// An audit log that fails while tacit serve runs (another process wrote to it): the script that
// was running is ended, and every later call is refused, fail closed. What the agent was told of it
// was the host's own: "protocol violation: the host failed to answer a request: AuditLogError: the
// audit log /home/…/audit.jsonl grew by …" (tacit run), or the log's message alone as the SDK's
// error text, the script's output lost (tacit serve), with a class name of the host and a path
// outside the script's scope, while the operator was told nothing. Now the agent is told what
// happened and to tell the operator, in the tool result (exit 2), and the operator gets the log's
// message, with its path and what to do, on tacit serve's stderr.

import { appendFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { answerTexts, connectServe, createSession, tempDirWithHome, type ToolResult } from "../helpers.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Writes started.txt (the log holds its lines by then), waits for go, then tries a write, catching what it is told. */
const SCRIPT = `
println("before");
requestFileSystem(".", (fs) => {
  fs.access("started.txt").write("1");
  while (!fs.access("go").exists) {}
  try { fs.access("out.txt").write("x"); } catch (e) { println("caught " + (e as Error).name + ": " + (e as Error).message); }
});
println("after");
`;

/** What no answer to the agent may hold: the host's class names, its log's path or directory, the protocol-violation framing. */
function expectNoHostInternals(text: string, log: string): void {
  expect(text).not.toContain("AuditLogError");
  expect(text).not.toContain("AuditLogFailedAfterRun");
  expect(text).not.toContain(log);
  expect(text).not.toContain(path.dirname(log));
  expect(text).not.toContain("protocol violation");
  expect(text).not.toContain("the host failed");
}

describe("tacit serve: an audit log that fails while a script runs", () => {
  it("the script is ended and later calls refused, each told what happened and to tell the operator; the operator gets the log's message", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-audit-fails-serve-");
    cleanups.push(cleanup);
    const work = path.join(dir, "work");
    mkdirSync(work);
    const log = path.join(dir, "logs", "audit.jsonl");
    let stderr = "";
    const client = await connectServe(["--no-check", "--audit-log", log], work, { env, onStderr: (text) => (stderr += text) });
    try {
      const earlier = await createSession(client);
      const running = client.callTool({ name: "execute_typescript", arguments: { code: SCRIPT } });
      while (!existsSync(path.join(work, "started.txt"))) await new Promise((resolve) => setTimeout(resolve, 20));
      appendFileSync(log, '{"written by":"another process"}\n');
      writeFileSync(path.join(work, "go"), "");
      const response = await running;
      const result = response.structuredContent as unknown as ToolResult;
      const text = (response.content as Array<{ text: string }>).map((item) => item.text).join("\n");
      expect(result.exitCode).toBe(2);
      expect(result.stdout).toBe("before\n");
      expect(result.error).toMatch(/^tacit could not write its audit log \(every action is logged before it is carried out\), so it ended the script: /);
      expect(result.error).toContain("tell the operator");
      expect(answerTexts(response).report).toMatch(/^\[tacit: exit 2, \d+ ms\]\n/);
      expectNoHostInternals(text, log);
      expectNoHostInternals(JSON.stringify(result), log);
      expect(existsSync(path.join(work, "out.txt"))).toBe(false);

      // Later calls: refused before anything runs, the same way.
      const next = await client.callTool({ name: "execute_typescript", arguments: { code: 'requestFileSystem(".", (fs) => fs.access("next.txt").write("x"));' } });
      const nextResult = next.structuredContent as unknown as ToolResult;
      expect(nextResult).toMatchObject({ exitCode: 2, stdout: "" });
      expect(nextResult.error).toContain("so it runs no script: nothing of this one ran");
      expectNoHostInternals(JSON.stringify(next), log);
      const snippet = await client.callTool({ name: "execute_in_session", arguments: { session_id: earlier, code: 'requestFileSystem(".", (fs) => fs.access("snippet.txt").write("x"));' } });
      expect((snippet.structuredContent as unknown as ToolResult).exitCode).toBe(2);
      expectNoHostInternals(JSON.stringify(snippet), log);
      const created = await client.callTool({ name: "create_repl_session", arguments: {} });
      expect(created.isError).toBe(true);
      expect(JSON.stringify(created.content)).toContain("so it starts no session: none was kept");
      expectNoHostInternals(JSON.stringify(created), log);
      // A session deleted after the failure is deleted (it held a sandbox); its end, which the log cannot take, is the operator's to hear of.
      const deleted = await client.callTool({ name: "delete_repl_session", arguments: { session_id: earlier } });
      expect(deleted.content).toEqual([{ type: "text", text: `deleted ${earlier}` }]);
      expect(JSON.parse(JSON.stringify((await client.callTool({ name: "list_sessions", arguments: {} })).structuredContent))).toEqual({ sessions: [] });
      expect(existsSync(path.join(work, "next.txt"))).toBe(false);
      expect(existsSync(path.join(work, "snippet.txt"))).toBe(false);
    } finally {
      await client.close();
    }
    // The operator was told as it happened, once (not at each call refused), with the log's path and what to do;
    // and again as tacit serve exits 2 for it, as before.
    const said = stderr.split("\n").filter((line) => line.includes("grew by"));
    expect(said, stderr).toHaveLength(2);
    expect(said[0]).toContain(`tacit: the audit log ${log} grew by`);
    expect(said[0]).toContain("tacit audit verify");
    expect(said[0]).toMatch(/Every call that runs code is refused until tacit serve is restarted with an audit log it can write$/);
    expect(said[1]).toMatch(/tacit exits 2: it could not write its audit log$/);
  }, 60_000);
});
