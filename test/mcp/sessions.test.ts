// REPL sessions through the real MCP SDK client: bindings across snippets, failures that
// leave the session as it was, effects performed once, limits and deletion.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers.js";

let dir: string;
let client: Client;

async function connect(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(repoRoot, "bin", "tacit.js"), "serve", ...args],
    cwd: dir,
    stderr: "ignore",
  });
  const connected = new Client({ name: "tacit-test", version: "0.0.0" });
  await connected.connect(transport);
  return connected;
}

interface Result {
  stdout: string;
  error: string | null;
  exitCode: number;
}

async function create(on: Client = client): Promise<string> {
  const response = await on.callTool({ name: "create_repl_session", arguments: {} });
  return (response.structuredContent as { session_id: string }).session_id;
}

async function run(session: string, code: string): Promise<Result> {
  const response = await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code } });
  return response.structuredContent as unknown as Result;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-sessions-"));
  writeFileSync(path.join(dir, "config.json"), JSON.stringify({ maxSessions: 3 }));
  client = await connect(["--exec-timeout-ms", "3000", "--config", "config.json"]);
});

afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("REPL sessions", () => {
  it("keep bindings across snippets and echo a final expression", async () => {
    const s = await create();
    expect(await run(s, "const x = 42")).toMatchObject({ stdout: "", exitCode: 0 });
    expect(await run(s, "x * 2")).toMatchObject({ stdout: "84\n", exitCode: 0 });
    expect(await run(s, "let n = 1;\nfunction get(): number { return n; }")).toMatchObject({ exitCode: 0 });
    expect(await run(s, "n = 5")).toMatchObject({ exitCode: 0 });
    expect(await run(s, "get()")).toMatchObject({ stdout: "5\n", exitCode: 0 });
    expect(await run(s, 'class Greeter { hi() { return "hi"; } }\nnew Greeter().hi()')).toMatchObject({ stdout: '"hi"\n' });
    // Output of earlier snippets is not shown again.
    expect(await run(s, 'println("printed once")')).toMatchObject({ stdout: "printed once\n" });
    expect(await run(s, "x")).toMatchObject({ stdout: "42\n" });
  });

  it("Math.random draws the same numbers when earlier snippets are replayed: a value shown is the value kept", async () => {
    const s = await create();
    const first = await run(s, "const r = Math.random();\nprintln(r)");
    expect(first.exitCode).toBe(0);
    const shown = Number(first.stdout.trim());
    expect(shown).toBeGreaterThanOrEqual(0);
    expect(shown).toBeLessThan(1);
    expect(await run(s, "r")).toMatchObject({ stdout: `${first.stdout.trim()}\n`, exitCode: 0 });
    // Later draws continue the sequence rather than repeat it.
    const next = await run(s, "Math.random() === r");
    expect(next).toMatchObject({ stdout: "false\n", exitCode: 0 });
    // Another session draws other numbers.
    const other = await create();
    expect((await run(other, "Math.random()")).stdout).not.toBe(first.stdout);
    for (const id of [s, other]) await client.callTool({ name: "delete_repl_session", arguments: { session_id: id } });
  });

  it("a snippet whose replay would come out differently (the clock) fails with a message that says why", async () => {
    const s = await create();
    expect((await run(s, "const t = Date.now();\nprintln(t)")).exitCode).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const replayed = await run(s, "t");
    expect(replayed.exitCode).not.toBe(0);
    expect(replayed.error).toContain("depends on something that changes between runs");
    expect(replayed.error).toContain("create a new session");
    await client.callTool({ name: "delete_repl_session", arguments: { session_id: s } });
  });

  it("a failing, ill-typed or timed-out snippet leaves the earlier bindings intact", async () => {
    const s = await create();
    await run(s, "const kept = 7");
    const thrown = await run(s, 'const lost = 1;\nthrow new Error("boom")');
    expect(thrown.exitCode).toBe(1);
    expect(thrown.error).toContain("script.ts:2:7");
    const typed = await run(s, 'const bad: number = "s";');
    expect(typed.exitCode).toBe(3);
    expect(typed.error).toContain("script.ts:1:7 error TS2322");
    expect((await run(s, "while (true) {}")).exitCode).toBe(124);
    expect(await run(s, "kept")).toMatchObject({ stdout: "7\n", exitCode: 0 });
    expect((await run(s, "lost")).exitCode).not.toBe(0);
  });

  it("performs each effect once: replayed snippets are answered from their recording", async () => {
    const s = await create();
    await run(s, 'requestFileSystem(".", (fs) => fs.access("count.txt").append("x"));');
    await run(s, "const y = 1");
    await run(s, "y + 1");
    expect(readFileSync(path.join(dir, "count.txt"), "utf8")).toBe("x");
  });

  it("lists, deletes, refuses past the limit, and explains an unknown id", async () => {
    const listed = await client.callTool({ name: "list_sessions", arguments: {} });
    const before = (listed.structuredContent as { sessions: Array<{ session_id: string }> }).sessions;
    expect(before.length).toBe(3);
    const refused = await client.callTool({ name: "create_repl_session", arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.content as Array<{ text: string }>)[0]!.text).toContain("too many live sessions (3)");
    const victim = before[0]!.session_id;
    const deleted = await client.callTool({ name: "delete_repl_session", arguments: { session_id: victim } });
    expect(deleted.isError).toBeFalsy();
    const gone = await client.callTool({ name: "execute_in_session", arguments: { session_id: victim, code: "1" } });
    expect(gone.isError).toBe(true);
    expect((gone.content as Array<{ text: string }>)[0]!.text).toContain("create_repl_session");
    expect(typeof (await create())).toBe("string");
  });

  it("--no-session hides the session tools", async () => {
    const plain = await connect(["--no-session"]);
    const { tools } = await plain.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["execute_typescript", "show_interface"]);
    await plain.close();
  });
});
