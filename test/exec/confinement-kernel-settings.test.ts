// A confined command (--confine-commands) run by tacit as root cannot change the kernel's settings.
// /proc is the namespace's own, and the command runs in a user namespace of its own, which was
// taken to refuse it the sysctls; but as root that namespace maps root to root, and the kernel
// lets the global root user write /proc/sys whatever its namespace: a confined `sh` wrote
// /proc/sys/fs/lease-break-time and the host read the new value, and kernel.core_pattern or
// kernel.modprobe name a program the kernel runs as root, unconfined (one the command wrote in a
// root). The test writes each setting's own value back (a no-op where it lands), and looks at the
// other places of /proc a container runtime keeps read-only for the same reason (IRQ affinities,
// PCI devices, file systems' settings).

import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { confinementDir } from "./fixtures.js";

const asRoot = process.geteuid?.() === 0;

describe.skipIf(!asRoot)("a confined command run as root and the kernel's settings in /proc", () => {
  it("cannot write a sysctl, nor IRQ, PCI or file-system settings: they are read-only", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confined-sysctl-");
    const places = ["/proc/irq/default_smp_affinity", "/proc/bus/pci/devices", "/proc/fs"];
    const look = [
      // The command's own attempts to lift the cover first (its user namespace locks the mount).
      "umount -l /proc/sys 2>/dev/null; mount -o remount,bind,rw /proc/sys 2>/dev/null",
      // Or a fresh proc, whose sys would not be covered: in a mount (and PID) namespace of its own,
      // and beside its /proc. The kernel refuses both, /proc not being fully visible to it.
      "unshare --mount --pid --fork sh -c 'mount -t proc proc /proc && v=$(cat /proc/sys/fs/lease-break-time) && echo \"$v\" > /proc/sys/fs/lease-break-time && echo wrote-sysctl-fresh-proc' 2>/dev/null",
      "mkdir -p /tmp/fresh-proc && mount -t proc proc /tmp/fresh-proc 2>/dev/null && echo mounted-fresh-proc",
      // The value as it is, written back: the write fails, or changes nothing.
      "v=$(cat /proc/sys/fs/lease-break-time) && echo \"$v\" > /proc/sys/fs/lease-break-time && echo wrote-sysctl",
      ...places.map((p) => `[ -e ${p} ] && [ -w ${p} ] && echo writable:${p}`),
      "true",
    ].join("; ");
    writeFileSync(
      path.join(dir, "script.ts"),
      `println(JSON.stringify(requestExecPermission(["sh"], (proc) => proc.exec("sh", ["-c", ${JSON.stringify(look)}]))));\n`,
    );
    const run = await runCli(["run", "--no-check", "--command-permissions", "sh", "--confine-commands", "script.ts"], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { exitCode: number; stdout: string; stderr: string };
    expect(result.stdout).not.toContain("wrote-sysctl");
    expect(result.stdout).not.toContain("mounted-fresh-proc");
    expect(result.stdout).not.toContain("writable:");
    expect(result.stderr).toContain("Read-only file system");
  });
});
