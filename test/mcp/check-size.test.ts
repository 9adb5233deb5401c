// The checks build a script's syntax tree on the host's main thread, about 290 bytes of heap for
// each character of dense code. Unbounded, one 1 MiB snippet of "0;\n" repeated killed a tacit
// serve with a 250 MB heap (out of memory in JSON.parse), every session with it; at the default
// heap a 4 MiB script peaked the host at 1.18 GB. A tree larger than the host can afford to check
// is refused before the host builds it (measured in the parse probe's own process). And the probe,
// which parses a long script in a child process for about a second a MiB, leaves the server free
// meanwhile: run with spawnSync, it held every other session's calls for all of it (4.1 s for a
// 4 MiB script). A session's snippets are checked together, so their trees are bounded together:
// 11 snippets of 90 KB, each within the limit alone, killed the same 250 MB server.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, runInSession, runScript, type SmallHeapServe, smallHeapServe, type ToolResult } from "../helpers.js";

/** About 1 MiB of statements: a tree of some 71 M characters (the host's check limit is a few M at 250 MB). */
const DENSE = "0;\n".repeat(Math.floor((1024 * 1024) / 3));

let server: SmallHeapServe;
beforeAll(async () => {
  server = await smallHeapServe("tacit-check-size-", ["--no-check"]);
});
afterAll(async () => {
  await server.close();
});

describe("a script whose syntax tree is larger than the host can check", () => {
  it("is refused with too-large, and the server and its session go on", async () => {
    const session = await createSession(server.client);
    expect(await runInSession(server.client, session, "let kept = 41;")).toMatchObject({ exitCode: 0, error: null });

    const refused = await runInSession(server.client, session, DENSE);
    expect(refused.exitCode, server.stderr()).toBe(3);
    expect(refused.error).toContain("[too-large]");
    expect(refused.error).toMatch(/syntax tree is [\d.]+ M characters/);
    expect(refused.error).toMatch(/Split the script into smaller runs/);
    expect(refused.error).toMatch(/--max-old-space-size/);

    expect(await runInSession(server.client, session, "println(kept + 1);")).toMatchObject({ exitCode: 0, stdout: "42\n" });
  });

  it("tacit run refuses it too, before anything runs", async () => {
    const r = await runScript(`println("ran-canary");\n${DENSE.slice(0, 400 * 1024)}`, ["--no-check"], { env: { NODE_OPTIONS: "--max-old-space-size=250" } });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).not.toContain("ran-canary");
    expect(r.stderr).toContain("[too-large]");
  });
});

describe("a script with many problems", () => {
  it("gets the first 100 listed and a count of the rest, not a message some 60 times the size of its code", async () => {
    // 2,000 lines of 5 characters, one problem each (about 340 characters with its hint): 680 KB of error unlisted.
    const many = "Deno;\n".repeat(2000);
    const result = (await server.client.callTool({ name: "execute_typescript", arguments: { code: many } })).structuredContent as unknown as ToolResult;
    expect(result.exitCode, server.stderr()).toBe(3);
    const listed = result.error?.match(/^script\.ts:\d+:\d+ error \[ambient-authority\]/gm) ?? [];
    expect(listed).toHaveLength(100);
    expect(result.error).toContain("script.ts:100:1 error [ambient-authority]");
    expect(result.error).not.toContain("script.ts:101:1");
    expect(result.error).toMatch(/… and 1900 more problems, not listed \(only the first 100 are\): fix these and check again$/);
    expect(result.error!.length).toBeLessThan(50_000);
  });
});

describe("the parse probe of a long script", () => {
  it("leaves the server free: a session's snippet sent after it is answered before it", async () => {
    const session = await createSession(server.client);
    expect(await runInSession(server.client, session, "let x = 1;")).toMatchObject({ exitCode: 0 });

    const answered: string[] = [];
    // Its probe parses for about a second; the snippet takes some tens of milliseconds.
    const long = server.client
      .callTool({ name: "execute_typescript", arguments: { code: DENSE } })
      .then((response) => (answered.push("long"), response.structuredContent as unknown as ToolResult));
    const snippet = runInSession(server.client, session, "println(x + 1);").then((result) => (answered.push("snippet"), result));
    const [longResult, snippetResult] = await Promise.all([long, snippet]);

    expect(snippetResult).toMatchObject({ exitCode: 0, stdout: "2\n" });
    expect(longResult.exitCode, server.stderr()).toBe(3);
    expect(longResult.error).toContain("[too-large]");
    expect(answered).toEqual(["snippet", "long"]);
  });
});

describe("a session's snippets together", () => {
  it("are bounded as one tree: a snippet that would take it past the limit is refused, and the session goes on", async () => {
    const session = await createSession(server.client);
    // About 4 M characters of tree each: one fits under the 250 MB server's limit (about 6.5 M), two do not.
    const part = (name: string): string => `let ${name} = 1;\n${"0;\n".repeat(20_000)}`;
    expect(await runInSession(server.client, session, part("first"))).toMatchObject({ exitCode: 0, error: null });

    const second = await runInSession(server.client, session, part("second"));
    expect(second.exitCode, server.stderr()).toBe(3);
    expect(second.error).toMatch(/session's snippets together would make a syntax tree of [\d.]+ M characters/);
    expect(second.error).toMatch(/Create a new session/);

    // Refused before it ran: its binding does not exist, the earlier one does.
    expect(await runInSession(server.client, session, "println(first + 1);")).toMatchObject({ exitCode: 0, stdout: "2\n" });
    expect((await runInSession(server.client, session, "second")).exitCode).not.toBe(0);
  });
});
