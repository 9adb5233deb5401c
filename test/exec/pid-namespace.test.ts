// The probe for a PID namespace to run commands in (runner/exec/pid-namespace.ts): where
// `unshare` works it gives the wrapper, whose shell passes the command's argv and exit status
// through unchanged; where it is missing, no wrapper and the reason; where the host allows, the
// namespace has its own /proc. The containment itself is tested through the CLI in
// limits.test.ts and proc-isolation.test.ts.

import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { closeSync } from "node:fs";
import os from "node:os";
import { describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { answeredLifeline } from "./fixtures.js";

/** Runs the wrapper's shell as the executor does: it waits for tacit's answer on its lifeline, fd 3 (see lifeline.test.ts). */
function runAnswered(program: string, args: string[]): SpawnSyncReturns<string> {
  const lifeline = answeredLifeline(os.tmpdir());
  try {
    return spawnSync(program, args, { encoding: "utf8", stdio: ["pipe", "pipe", "pipe", lifeline] });
  } finally {
    closeSync(lifeline);
  }
}

describe("the PID namespace probe", () => {
  it("says why there is none when unshare is missing", () => {
    const reasons: string[] = [];
    expect(probeNamespaceWrapper(["/nonexistent/unshare"], (reason) => reasons.push(reason))).toBeNull();
    expect(reasons).toEqual(["util-linux `unshare` (or /bin/sh) is not installed"]);
  });

  it("gives a wrapper that passes argv verbatim and the exit status through, where the host allows one", () => {
    const reasons: string[] = [];
    const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], (reason) => reasons.push(reason));
    // This machine allows one (root, or user namespaces); say so plainly if it ever does not.
    expect(reasons, "this host cannot create a PID namespace").toEqual([]);
    const args = ["a b", "$(touch /tmp/never)", "'; exit 9", "*"];
    const run = runAnswered(wrapper!.program, [...wrapper!.argsBefore, "/bin/sh", "-c", 'printf "%s\\n" "$@"; exit 7', "sh", ...args]);
    expect(run.stdout).toBe(args.map((a) => `${a}\n`).join(""));
    expect(run.status).toBe(7);
  });

  it("gives the namespace its own /proc where the host allows: a command there sees only the namespace's processes", (ctx) => {
    const reasons: string[] = [];
    const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], (r) => reasons.push(r), (r) => reasons.push(r));
    ctx.skip(wrapper?.ownProc !== true, `this host cannot give commands their own /proc (${reasons.join("; ")})`);
    expect(reasons).toEqual([]);
    // PID 1 is the wrapper's shell, and the test runner (this process) is not to be seen.
    const run = runAnswered(wrapper!.program, [...wrapper!.argsBefore, "/bin/sh", "-c", `cat /proc/1/cmdline; echo; test -e /proc/${process.pid} && echo leaked; ls /proc | grep -c '^[0-9]'`]);
    const [cmdline, ...rest] = run.stdout.split("\n");
    expect(cmdline!.split("\0").slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(rest.join("\n")).not.toContain("leaked");
    expect(Number(rest[0])).toBeLessThan(10);
    expect(run.status).toBe(0);
  });
});
