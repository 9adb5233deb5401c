// --strict and gpgrt-config (runner/exec/strict-denylist.ts), tried for real through the CLI where
// the host has it (skipped where it has not). libgpg-error's pkg-config stand-in reads the variable
// its --variable option names with `eval echo \$VAR_<name>`: a name of `x;CMD` ran CMD in a shell
// (${IFS} for its spaces, the word being split), with a .pc file of the script's in the roots.

import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("--strict and gpgrt-config", () => {
  it("is refused: it gives the variable name it is asked for to a shell's eval", async (ctx) => {
    ctx.skip(findOnPath("gpgrt-config") === null, "gpgrt-config is not installed here");
    const { dir, cleanup } = realTempDir("tacit-strict-gpgrt-");
    ctx.onTestFinished(cleanup);
    writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/.keep": "" });
    const project = path.join(dir, "project");
    const proof = path.join(dir, "outside", "GPGRT_CONFIG_RAN");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => (fs.access("pkgconfig").mkdir(), fs.access("pkgconfig/x.pc").write("prefix=/usr\\n\\nName: x\\nDescription: x\\nVersion: 1\\n")));
attempt("gpgrt-config", () => requestExecPermission(["gpgrt-config"], (proc) =>
  proc.exec("gpgrt-config", [${lit(`--libdir=${project}`)}, ${lit(`--variable=x;touch\${IFS}${proof}`)}, "x"])));
`, ["--strict"], { HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(proof)).toBe(false);
    const { status, value } = attemptOf(attempts(r.stdout), "gpgrt-config");
    expect(status, JSON.stringify(value)).toBe("SecurityError");
    expect(String(value)).toContain('"gpgrt-config" is refused under --strict');
  });
});
