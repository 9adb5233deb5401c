// --strict and ss -F (runner/exec/strict-denylist.ts, STRICT_DENIED_OPTIONS), tried for real through
// the CLI where the host has ss (skipped where it has not). iproute2's ss reads its filter from the
// file -F names and quotes the first word it cannot parse: `Error: an inet prefix is expected rather
// than "<word>"`. A file outside the allowed roots whose first line is one word (a token file, a
// `KEY=value` line, a shadow line) was printed whole to the script.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("--strict and ss -F", () => {
  it("refuses the option that reads a filter from any file and quotes it", async (ctx) => {
    ctx.skip(findOnPath("ss") === null, "ss is not installed here");
    const { dir, cleanup } = realTempDir("tacit-strict-ss-");
    ctx.onTestFinished(cleanup);
    const canary = makeCanary();
    writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/token": `API_TOKEN=${canary}\n` });
    const secret = path.join(dir, "outside", "token");
    const r = await tacit(path.join(dir, "project"), `${ATTEMPT_PRELUDE}
const ss = (args: string[]) => requestExecPermission(["ss"], (proc) => proc.exec("ss", args));
attempt("-F", () => ss(["-F", ${lit(secret)}]));
attempt("bundled", () => ss(["-tF", ${lit(secret)}]));
attempt("--filter", () => ss([${lit(`--filter=${secret}`)}]));
attempt("--fil", () => ss(["--fil", ${lit(secret)}]));
attempt("plain", () => ss(["-t", "-n"]));
`, ["--strict"], { HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    const found = attempts(r.stdout);
    for (const label of ["-F", "bundled", "--filter", "--fil"]) {
      const { status, value } = attemptOf(found, label);
      expect(status, `${label}: ${JSON.stringify(value)}`).toBe("SecurityError");
      expect(String(value)).toContain('of "ss" is refused under --strict');
    }
    // ss itself still runs under --strict.
    expect(attemptOf(found, "plain").status).toBe("ok");
  });
});
