// A confined command (--confine-commands) runs in an IPC namespace of its own, as the sandbox does
// (runner/network-namespace.ts, --ipc). Without one it reached the System V shared memory of the
// user's other programs, which no mount covers (`ipcs -m -i ID` showed a segment the test made,
// mode 0600, that shmat would then have read and written: an X server's, a database's), and a
// segment it made (`ipcmk -M`) outlived it on the host. Tested with util-linux's ipcmk and ipcs
// (`ipcs -i` exits 0 whether it finds the segment or not: what it prints tells).

import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { realTempDir } from "../files/fixtures.js";

const hasIpcTools = spawnSync("ipcmk", ["--version"], { stdio: "ignore" }).status === 0 && spawnSync("ipcs", ["--version"], { stdio: "ignore" }).status === 0;

/** The ids of the host's shared memory segments of `bytes` bytes (a size no other program picks). */
function segmentsOfSize(bytes: number): string[] {
  return execFileSync("ipcs", ["-m"], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[4] === String(bytes))
    .map((fields) => fields[1]!);
}

describe.skipIf(!hasIpcTools)("a confined command and the System V IPC of the user's programs", () => {
  // Sizes of their own, so that the test finds its segments among any others of the host.
  const hostBytes = 40_000 + (process.pid % 10_000) * 2 + 1;
  const madeBytes = hostBytes + 1;
  let hostSegment: string;
  let dir: string;
  let cleanup: () => void;
  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-confined-ipc-"));
    hostSegment = /(\d+)\s*$/.exec(execFileSync("ipcmk", ["-M", String(hostBytes), "-p", "0600"], { encoding: "utf8" }))![1]!;
  });
  afterAll(() => {
    for (const id of [...segmentsOfSize(hostBytes), ...segmentsOfSize(madeBytes)]) spawnSync("ipcrm", ["-m", id]);
    cleanup();
  });

  it("neither sees the host's segments nor leaves one of its own there", async () => {
    const script = `
const r = requestExecPermission(["sh"], (proc) =>
  proc.exec("sh", ["-c", "if ipcs -m -i ${hostSegment} 2>&1 | grep -q shmid=; then echo saw-host-segment; fi; ipcmk -M ${madeBytes}"]));
println(JSON.stringify(r));
`;
    writeFileSync(path.join(dir, "script.ts"), script);
    const run = await runCli(["run", "--no-check", "--command-permissions", "sh", "--confine-commands", "script.ts"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    // The command ran, and made its segment (in its own namespace).
    expect(run.stdout).toMatch(/"exitCode":0,"stdout":"Shared memory id: \d+/);
    expect(run.stdout).not.toContain("saw-host-segment");
    expect(segmentsOfSize(madeBytes)).toEqual([]);
    expect(segmentsOfSize(hostBytes)).toEqual([hostSegment]);
  });
});
