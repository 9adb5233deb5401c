// A command sees only its own processes: where the host lets tacit give the PID namespace its
// own /proc, a secret in tacit's own environment is not visible to an allowed command through
// `ps eww` or /proc/*/environ (a security review read a planted one that way). Where the host
// cannot, the test says so and skips: the warning on stderr is then what tells the operator.

import { describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit } from "./fixtures.js";

type ExecResult = { exitCode: number; stdout: string; stderr: string };

/** Whether this host gives commands a PID namespace with its own /proc, and if not, why. */
function ownProcSupport(): { ok: boolean; reason: string } {
  const reasons: string[] = [];
  const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], (r) => reasons.push(r), (r) => reasons.push(r));
  return { ok: wrapper?.ownProc === true, reason: reasons.join("; ") || "no reason given" };
}

describe("other processes' environment", () => {
  it("is not visible to an allowed command (ps eww, cat /proc/*/environ) when the namespace has its own /proc", async (ctx) => {
    const support = ownProcSupport();
    ctx.skip(!support.ok, `this host cannot give commands their own /proc (${support.reason}); nothing to check here`);
    const { dir, cleanup } = realTempDir("tacit-exec-proc-");
    try {
      const canary = makeCanary();
      const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["ps", "sh"], (proc) => {
  attempt("ps", () => proc.exec("ps", ["eww", "-eo", "pid,args"]));
  attempt("environ", () => proc.exec("sh", ["-c", "for f in /proc/[0-9]*/environ; do tr '\\\\0' '\\\\n' < \\"$f\\"; done"]));
  attempt("pids", () => proc.exec("sh", ["-c", "ls /proc | grep -c '^[0-9]'"]));
});
`;
      const r = await tacit(dir, script, ["--command-permissions", "ps,sh"], { TACIT_TEST_HOST_SECRET: canary });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain(canary);
      const found = attempts(r.stdout);
      const ps = attemptOf(found, "ps");
      expect(ps.status, JSON.stringify(ps.value)).toBe("ok");
      // ps ran and listed processes with their environments: its own line is there, tacit's is not.
      expect((ps.value as ExecResult).stdout).toContain("ps eww -eo pid,args");
      expect((ps.value as ExecResult).stdout).not.toContain("TACIT_TEST_HOST_SECRET");
      const environ = attemptOf(found, "environ");
      expect(environ.status, JSON.stringify(environ.value)).toBe("ok");
      // The environments it could read are its own namespace's: the minimal one tacit gives commands.
      expect((environ.value as ExecResult).stdout).toContain("PATH=");
      expect((environ.value as ExecResult).stdout).not.toContain("TACIT_TEST_HOST_SECRET");
      // Only the namespace's few processes: the wrapper shell, sh, ls, grep.
      const pids = attemptOf(found, "pids");
      expect(pids.status, JSON.stringify(pids.value)).toBe("ok");
      expect(Number((pids.value as ExecResult).stdout.trim())).toBeLessThan(10);
    } finally {
      cleanup();
    }
  });
});
