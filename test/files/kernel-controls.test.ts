// The kernel's control file systems (sysfs, cgroup, debugfs, …) may be read but not changed,
// whatever the allowed roots say: their files are the kernel's settings, not files. A script whose
// root held /sys/fs/cgroup made a cgroup with mkdir() and set its pids.max with write(), and could
// have moved tacit's own process (cgroup.procs lists it) into a frozen cgroup, hanging the host.

import { randomUUID } from "node:crypto";
import { existsSync, rmdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit } from "./fixtures.js";

let cwd: string;
let cleanup: () => void;
/** What the attempts would make, were they let through (as root, a new cgroup; elsewhere, nothing the kernel allows). */
const made = [`/sys/fs/cgroup/tacit-test-${randomUUID()}`, `/sys/kernel/tacit-test-${randomUUID()}`];

beforeAll(() => ({ dir: cwd, cleanup } = realTempDir("tacit-files-kernel-controls-")));
afterAll(() => {
  for (const place of made) if (existsSync(place)) rmdirSync(place);
  cleanup();
});

describe.runIf(process.platform === "linux" && existsSync("/sys/kernel"))("the kernel's control file systems", () => {
  it("refuse mkdir, write, append and delete before the kernel is asked, and stay readable", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem("/sys", (fs) => {
  attempt("mkdir cgroup", () => fs.access(${lit(made[0]!)}).mkdir());
  attempt("mkdir sysfs", () => fs.access(${lit(made[1]!)}).mkdir());
  attempt("write", () => fs.access(${lit(`${made[1]!}.file`)}).write("1"));
  attempt("append", () => fs.access(${lit(`${made[1]!}.appended`)}).append("1"));
  attempt("delete", () => fs.access("/sys/fs/cgroup").delete());
  attempt("read", () => fs.access("/sys/kernel").isDirectory);
});
`;
    const r = await tacit(cwd, script, ["--allowed-roots", "/sys"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["mkdir cgroup", "mkdir sysfs", "write", "append", "delete"], /refused: this is the kernel's \S+ file system \(mounted at \/sys[^)]*\), whose files are the kernel's controls/);
    for (const place of made) expect(existsSync(place), place).toBe(false);
    expect(attemptOf(found, "read")).toEqual({ status: "ok", value: true });
  }, 30_000);
});
