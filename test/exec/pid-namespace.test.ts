// The probe for a PID namespace to run commands in (runner/exec/pid-namespace.ts): where
// `unshare` works it gives the wrapper, whose shell passes the command's argv and exit status
// through unchanged; where it is missing, no wrapper and the reason. The containment itself is
// tested through the CLI in limits.test.ts.

import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";

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
    const run = spawnSync(wrapper!.program, [...wrapper!.argsBefore, "/bin/sh", "-c", 'printf "%s\\n" "$@"; exit 7', "sh", ...args], { encoding: "utf8" });
    expect(run.stdout).toBe(args.map((a) => `${a}\n`).join(""));
    expect(run.status).toBe(7);
  });
});
