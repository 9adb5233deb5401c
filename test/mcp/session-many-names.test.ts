// A session whose snippets bind very many names in one declaration. The checks' scope analysis
// compares each name a declaration binds with those bound there before it, on the host's main
// thread, and a session re-checks its earlier snippets with each new one: a snippet binding
// 110,000 names made every later snippet (`a5 + 1`) take 4.8 s of the main thread, every other
// call and session held up meanwhile. Such a script is now refused with `too-many-names` before
// the analysis, naming the count and what to do, and the session goes on.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, createSession, runCli, runInSession, type ToolResult } from "../helpers.js";

const names = (count: number, prefix = "a"): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

let dir: string;
let client: Client;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-many-names-"));
  client = await connectServe(["--no-check"], dir, { env: { TACIT_HOME: path.join(dir, "home") } });
});
afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("declarations binding very many names", () => {
  it("a snippet binding 40,000 names in one const is refused before the analysis; the session goes on", async () => {
    const session = await createSession(client);
    expect(await runInSession(client, session, "const kept = 41;")).toMatchObject({ exitCode: 0 });
    const refused = await runInSession(client, session, `const [${names(40_000).join(", ")}] = new Array(40_000).fill(1);\na5`);
    expect(refused.exitCode).toBe(3); // rejected before anything ran
    expect(refused.stdout).toBe("");
    expect(refused.error).toContain("[too-many-names]");
    expect(refused.error).toContain("this one binds 40,000 names");
    expect(refused.error).toContain("Keep many values in one array or object");
    // Nothing of it was kept: its names do not exist, and the session's own do.
    expect((await runInSession(client, session, "a5")).error).toContain("[unknown-global]");
    expect(await runInSession(client, session, "kept + 1")).toMatchObject({ stdout: "42\n", exitCode: 0 });
    // A declaration of a few thousand names is ordinary enough, and runs.
    expect(await runInSession(client, session, `const [${names(5_000, "b").join(", ")}] = new Array(5_000).fill(2);\nb4999 + kept`)).toMatchObject({
      stdout: "43\n",
      exitCode: 0,
    });
  }, 120_000);

  it("many declarators of one statement, many parameters and a long import are refused in a one-shot call too", async () => {
    const scripts = [
      `const ${names(20_000).map((name) => `${name} = 1`).join(", ")};\nprintln(a1);`,
      `function f(${names(20_000).join(", ")}) { return a1; }\nprintln(f());`,
      `import { ${names(20_000).map((name) => `println as ${name}`).join(", ")} } from "tacit";\na1("x");`,
    ];
    for (const code of scripts) {
      const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
      const result = response.structuredContent as unknown as ToolResult;
      expect(result.exitCode, result.error ?? "").toBe(3);
      expect(result.stdout).toBe("");
      expect(result.error).toContain("[too-many-names]");
      expect(result.error).toContain("this one binds 20,000 names");
    }
  }, 120_000);

  it("tacit run refuses such a script with exit 3 and the rule", async () => {
    const result = await runCli(["run", "--no-check", "-"], {
      input: `const [${names(40_000).join(", ")}] = new Array(40_000).fill(1);\nprintln("ran");`,
      cwd: dir,
      env: { TACIT_HOME: path.join(dir, "home") },
    });
    expect(result.code).toBe(3);
    expect(result.stdout).not.toContain("ran");
    expect(result.stderr).toContain("[too-many-names]");
  }, 60_000);
});
