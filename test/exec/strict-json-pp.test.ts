// --strict and json_pp (runner/exec/strict-denylist.ts), tried for real through the CLI where the host
// has it (skipped where it has not). Perl's JSON pretty-printer takes `-f eval`: its input is read as
// Perl, evaluated, and the value printed as JSON; `system("CMD"); [1]` on its input ran CMD.

import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("--strict and json_pp", () => {
  it("is refused: its -f eval runs the Perl code of its input", async (ctx) => {
    ctx.skip(findOnPath("json_pp") === null, "json_pp is not installed here");
    const { dir, cleanup } = realTempDir("tacit-strict-json-pp-");
    ctx.onTestFinished(cleanup);
    writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/.keep": "" });
    const proof = path.join(dir, "outside", "JSON_PP_RAN");
    const r = await tacit(path.join(dir, "project"), `${ATTEMPT_PRELUDE}
attempt("json_pp", () => requestExecPermission(["json_pp"], (proc) =>
  proc.exec("json_pp", ["-f", "eval", "-t", "json"], { input: ${lit(`system(${JSON.stringify(`touch ${proof}`)}); [1]`)} })));
`, ["--strict"], { HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(proof)).toBe(false);
    const { status, value } = attemptOf(attempts(r.stdout), "json_pp");
    expect(status, JSON.stringify(value)).toBe("SecurityError");
    expect(String(value)).toContain('"json_pp" is refused under --strict');
  });
});
