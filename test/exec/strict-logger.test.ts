// --strict and util-linux logger (runner/exec/strict-denylist.ts), tried for real through the CLI where
// the host has it (skipped where it has not). `logger -f FILE` logs each line of any file, and with
// -s prints each on stderr too: `--socket-errors=off -s -f FILE` printed a file outside the allowed
// roots to the script, where no syslog listens; and -n HOST -P PORT (UDP or --tcp) sends them to any
// host, past --network-permissions.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("--strict and logger", () => {
  it("is refused: it prints any file it is given, and sends it to any host", async (ctx) => {
    ctx.skip(findOnPath("logger") === null, "logger is not installed here");
    const { dir, cleanup } = realTempDir("tacit-strict-logger-");
    ctx.onTestFinished(cleanup);
    const canary = makeCanary();
    writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/secret.txt": `SECRET=${canary}\n` });
    const secret = path.join(dir, "outside", "secret.txt");
    const r = await tacit(path.join(dir, "project"), `${ATTEMPT_PRELUDE}
attempt("logger", () => requestExecPermission(["logger"], (proc) => proc.exec("logger", ["--socket-errors=off", "-s", "-f", ${lit(secret)}])));
attempt("sent", () => requestExecPermission(["logger"], (proc) => proc.exec("logger", ["-n", "127.0.0.1", "-P", "9", "-s", "-f", ${lit(secret)}])));
`, ["--strict"], { HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    for (const label of ["logger", "sent"]) {
      const { status, value } = attemptOf(attempts(r.stdout), label);
      expect(status, `${label}: ${JSON.stringify(value)}`).toBe("SecurityError");
      expect(String(value)).toContain('"logger" is refused under --strict');
    }
  });
});
