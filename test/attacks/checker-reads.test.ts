// What the type checker reads besides the script, its settings, interface.d.ts and its lib files.
// TypeScript looks for the package.json that holds a file (its package scope) in the file's
// directory and every one above it, and for a bare module name ("tacit") in each node_modules
// above it: above a check's own directory, in the temporary directory, which any local user can
// write in (/tmp), and scripts too where it is among their roots. A FIFO planted there held every
// check until its time limit, and every script was refused, told to simplify its types.

import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { typeCheck } from "../../runner/typecheck.js";
import { connectServe, runCli, type ToolResult } from "../helpers.js";

/** In files the checker is pointed at: what it would quote, had it read them. */
const CANARY = "canary-7f3e1a";

/** Long enough that a check hanging on a FIFO is told apart from one that took its ordinary time. */
const LIMIT_MS = 10_000;

let tmp: string;
let work: string;
beforeAll(() => {
  // A temporary directory as /tmp is: anyone may add to it.
  tmp = mkdtempSync("/tmp/tacit-planted-");
  chmodSync(tmp, 0o1777);
  mkdirSync(path.join(tmp, "node_modules", "tacit"), { recursive: true });
  mkdirSync(path.join(tmp, "node_modules", "@types", "tacit"), { recursive: true });
  const planted = ["package.json", "node_modules/tacit/package.json", "node_modules/@types/tacit/package.json", "tsconfig.json", "jsconfig.json"];
  for (const file of planted) execFileSync("mkfifo", [path.join(tmp, file)]);
  // Not "tacit-checker-…": that is the name of tacit's own checker directories, which scripts (and so
  // tacit run and check, for a script in one) are refused.
  work = mkdtempSync("/tmp/checker-reads-work-");
  // Readable by the checker whoever it runs as (nobody, when tacit is root): only its options keep it out.
  chmodSync(work, 0o755);
  writeFileSync(path.join(work, "leak.d.ts"), `declare const LEAKED: "${CANARY}";\n`);
  writeFileSync(path.join(work, "leak.ts"), `export type Leak = "${CANARY}";\nexport const leak: Leak = "${CANARY}";\n`);
  writeFileSync(path.join(work, "key.json"), JSON.stringify({ key: CANARY }));
  writeFileSync(path.join(work, "typed.ts"), 'import { println } from "tacit";\nconst n: number = "one";\nprintln(n);\n');
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" });

describe.concurrent("files planted above a check's directory", () => {
  it("are not read by tacit check's checker, which finds the type error", async () => {
    const r = await runCli(["check", "--exec-timeout-ms", String(LIMIT_MS), "typed.ts"], { cwd: work, env: env() });
    expect(r.stderr).not.toContain("check-time-limit");
    expect(r.stderr).toContain("TS2322");
    expect(r.code).toBe(3);
  }, 60_000);

  it("are not read by tacit serve's checker, which finds the type error", async () => {
    const client = await connectServe(["--quiet", "--exec-timeout-ms", String(LIMIT_MS)], work, { env: env() });
    try {
      const code = 'import { println } from "tacit";\nconst n: number = "one";\nprintln(n);\n';
      const result = (await client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 60_000 })).structuredContent as unknown as ToolResult;
      expect(result.error ?? "").not.toContain("check-time-limit");
      expect(result.error).toContain("TS2322");
      expect(result.exitCode).toBe(3);
    } finally {
      await client.close();
    }
  }, 60_000);
});

// The checker is started on a script before the validator has looked at it (tacit run's check,
// a session's snippet that imports only tacit), and its diagnostics quote the types it reads:
// only its own options (noResolve) keep it from loading the files a script names.
describe.concurrent("files a script points the checker at", () => {
  it("are not loaded, so nothing of them is quoted", async () => {
    const code = [
      `/// <reference path="${work}/leak.d.ts" />`,
      `/// <reference types="${work}/leak" />`,
      `import type { Leak } from "${work}/leak";`,
      `import key from "${work}/key.json" with { type: "json" };`,
      `declare module "${work}/leak" { const more: number; }`,
      "const a: Leak = 1;",
      `const b: typeof import("${work}/leak").leak = 2;`,
      "const c: number = LEAKED;",
      "const d: number = key.key;",
      "export { a, b, c, d };",
    ].join("\n");
    const result = await typeCheck(code, 30_000, null);
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result.diagnostics)).not.toContain(CANARY);
    // Not found, rather than found and quoted.
    expect(result.diagnostics.map((d) => d.code)).toContain("TS2307");
    expect(result.diagnostics.some((d) => d.message.startsWith("Cannot find name 'LEAKED'"))).toBe(true);
  }, 60_000);
});
