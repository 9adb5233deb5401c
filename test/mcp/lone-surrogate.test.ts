// Code with a lone UTF-16 surrogate. A JSON string can carry one ("\ud800"), and JavaScript
// allows it in a string literal, but tacit passes code on as UTF-8: the type checker panicked
// on it (the call answered with a Go stack trace), and without the check the sandbox ran the
// literal as U+FFFD, the script's data changed without a word. Such code is now refused before
// anything, with the line and column and how to write it instead; sessions go on.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, createSession, runInSession, type ToolResult } from "../helpers.js";

let dir: string;
let checked: Client;
let unchecked: Client;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-lone-surrogate-"));
  const env = { TACIT_HOME: path.join(dir, "home") };
  [checked, unchecked] = await Promise.all([connectServe([], dir, { env }), connectServe(["--no-check"], dir, { env })]);
});
afterAll(async () => {
  await Promise.all([checked.close(), unchecked.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const LONE = "\ud800";

async function execute(client: Client, code: string): Promise<ToolResult> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  return response.structuredContent as unknown as ToolResult;
}

function expectRefused(result: ToolResult, where: string): void {
  expect(result.exitCode).toBe(3);
  expect(result.stdout).toBe("");
  expect(result.error).toContain(`${where} error [lone-surrogate]`);
  expect(result.error).toContain('Write it as an escape in a string literal ("\\ud800")');
  expect(result.error).not.toContain("goroutine");
  expect(result.error).not.toContain("panic");
}

describe("code holding a lone surrogate", () => {
  it("is refused before the checks and the sandbox, type check on or off, never run altered", async () => {
    const code = `println("first");\nconst s = "${LONE}x";\nprintln(s.length, s.charCodeAt(0));`;
    for (const client of [checked, unchecked]) {
      const result = await execute(client, code);
      expectRefused(result, "script.ts:2:12");
      // Not run with the surrogate turned into U+FFFD (65533), nor at all.
      expect(result.stdout).not.toContain("65533");
      expect(result.stdout).not.toContain("first");
    }
    // Written as an escape, or as a whole pair, it runs as written.
    expect(await execute(checked, 'const s = "\\ud800x";\nprintln(s.length, s.charCodeAt(0));')).toMatchObject({ stdout: "2 55296\n", exitCode: 0 });
    expect(await execute(checked, 'println("\u{1F600}".length);')).toMatchObject({ stdout: "2\n", exitCode: 0 });
  }, 60_000);

  it("in a session snippet is refused, and the session goes on as it was", async () => {
    const session = await createSession(checked);
    expect(await runInSession(checked, session, "const kept = 41;")).toMatchObject({ exitCode: 0 });
    expectRefused(await runInSession(checked, session, `const q = "${LONE}";\nq.length`), "script.ts:1:12");
    expect((await runInSession(checked, session, "q")).error).toContain("[unknown-global]");
    expect(await runInSession(checked, session, "kept + 1")).toMatchObject({ stdout: "42\n", exitCode: 0 });
  }, 60_000);
});
