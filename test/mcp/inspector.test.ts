// The third-party MCP Inspector CLI lists tacit's tools and runs execute_typescript against
// `tacit serve` (scripts/inspector-check.mjs, also `npm run inspector`).

import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers.js";

describe("the MCP Inspector CLI against tacit serve", () => {
  it("lists the tools and runs execute_typescript", () => {
    const run = spawnSync(process.execPath, [path.join(repoRoot, "scripts", "inspector-check.mjs")], { encoding: "utf8", timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain("tools/list: create_repl_session, delete_repl_session, execute_in_session, execute_typescript, list_sessions, show_interface");
    expect(run.stdout).toContain('tools/call execute_typescript: stdout "42\\n", exit 0');
  }, 120_000);
});
