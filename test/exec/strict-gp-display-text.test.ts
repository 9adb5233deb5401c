// --strict and gprofng's gp-display-text (runner/exec/strict-denylist.ts), tried for real through the
// CLI where the host has it (skipped where it has not). Its -script FILE reads commands from any file
// and quotes the first word of each line it does not know (`Error: Invalid command: <word>`), with
// no experiment to read: every line of a private key (one base64 word each) was printed to the script.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("--strict and gp-display-text", () => {
  it("is refused: it prints the first word of each line of any file", async (ctx) => {
    ctx.skip(findOnPath("gp-display-text") === null, "gp-display-text is not installed here");
    const { dir, cleanup } = realTempDir("tacit-strict-gp-display-");
    ctx.onTestFinished(cleanup);
    const canary = makeCanary();
    writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/key": `-----BEGIN KEY-----\n${canary}\n-----END KEY-----\n` });
    const secret = path.join(dir, "outside", "key");
    const r = await tacit(path.join(dir, "project"), `${ATTEMPT_PRELUDE}
attempt("gp-display-text", () => requestExecPermission(["gp-display-text"], (proc) => proc.exec("gp-display-text", ["-script", ${lit(secret)}, "x"], { timeoutMs: 10000 })));
`, ["--strict"], { HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    const { status, value } = attemptOf(attempts(r.stdout), "gp-display-text");
    expect(status, JSON.stringify(value)).toBe("SecurityError");
    expect(String(value)).toContain('"gp-display-text" is refused under --strict');
  });
});
