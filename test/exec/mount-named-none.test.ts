// A mount whose source is the word "none" (tracefs as `perf` mounts it, `mount -t tmpfs none …`)
// made every confined command fail. The confined view makes each mount read-only with a
// `none <point> none remount,bind,ro` line of its mount table, and `mount -a` takes a line whose
// source and target are a mount's own for one already made: it skipped it ("already mounted"),
// and the setup, which refuses where a mount was skipped, refused every command ("its
// confinement could not be set up (a mount was skipped …)"). On this project's machines that
// was /sys/kernel/tracing, once a profiler had mounted it. The remount lines now name a source
// no mount has.
//
// The mount is made in a mount namespace of the test's own (as root), where tacit runs too, so
// the host's table is left as it was.

import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { childEnv, tacitBin } from "../helpers.js";
import { realTempDir } from "./fixtures.js";

const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find((p) => spawnSync(p, ["--version"]).status === 0);

function whyNot(): string | null {
  if (process.getuid?.() !== 0) return "the test mounts in a mount namespace of its own, which takes root";
  if (UNSHARE === undefined) return "no unshare";
  const reasons: string[] = [];
  const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], (r) => reasons.push(r), (r) => reasons.push(r));
  if (wrapper?.ownProc !== true) return `this host cannot give commands a mount namespace (${reasons.join("; ")})`;
  const probe = spawnSync(UNSHARE, ["--mount", "--propagation", "private", "sh", "-c", "mount -t tmpfs none /mnt"], { encoding: "utf8" });
  return probe.status === 0 ? null : `cannot mount in a mount namespace here: ${probe.stderr.trim()}`;
}

const skip = whyNot();

it.skipIf(skip !== null)(`a confined command runs where a mount's source is named "none"${skip === null ? "" : ` (skipped: ${skip})`}`, () => {
  const { dir, cleanup } = realTempDir("tacit-confine-none-", "/var/tmp");
  try {
    const project = path.join(dir, "project");
    const volume = path.join(project, "volume");
    mkdirSync(volume, { recursive: true });
    writeFileSync(path.join(project, "notes.txt"), "ordinary notes\n");
    const script = `requestExecPermission(["cat"], (p) => println(p.exec("cat", ["notes.txt"]).stdout.trim()));\n`;
    writeFileSync(path.join(dir, "script.ts"), script);
    const tacit = [process.execPath, tacitBin, "run", "--no-check", "--confine-commands", "--command-permissions", "cat", path.join(dir, "script.ts")]
      .map((word) => `'${word.replaceAll("'", "'\\''")}'`)
      .join(" ");
    // The mount in the test's own namespace, then tacit there: a tmpfs named "none" in the project.
    const run = spawnSync(UNSHARE!, ["--mount", "--propagation", "private", "sh", "-c", `mount -t tmpfs none '${volume}' && cd '${project}' && exec ${tacit}`], {
      encoding: "utf8",
      env: childEnv({ TACIT_HOME: path.join(dir, "home") }),
      timeout: 60_000,
    });
    expect(run.stderr + run.stdout).not.toMatch(/could not be set up|already mounted/);
    expect(run.stdout).toBe("ordinary notes\n");
    expect(run.status).toBe(0);
  } finally {
    cleanup();
  }
});
