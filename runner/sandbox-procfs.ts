// What the sandbox sees of procfs beyond its own processes. In its PID namespace the sandbox has a
// /proc of its own (network-namespace.ts, `unshare --mount-proc`), which lists only its processes;
// but procfs's other entries are the machine's whatever the namespace, and native code in Deno
// (which no permission binds) read them: the kernel's command line (/proc/cmdline, which holds
// secrets or tokens on some hosts), the disks and their layout (/proc/partitions, /proc/diskstats,
// /proc/swaps), the processor and memory (/proc/cpuinfo, /proc/meminfo), the host-wide load and
// activity of other workloads (/proc/loadavg, /proc/stat, /proc/interrupts, /proc/pressure), the
// kernel's build and modules (/proc/version, /proc/modules), the boot's identifier
// (/proc/sys/kernel/random/boot_id) and the rest of /proc/sys.
//
// So the setup remounts the sandbox's own procfs with `subset=pid` (Linux 5.8): it then shows the
// process directories, /proc/self and /proc/thread-self, and nothing else. Each mount of procfs is
// a file system of its own since 5.8 (and one made for a new PID namespace always was), so this
// changes nothing of the host's /proc. What the sandbox reads under /proc as it starts (strace -f
// -e trace=%file on `tacit run examples/hello.ts`):
//   - /proc/self/{exe,maps,cgroup,mountinfo} (Deno, V8, Rust's std for the CPU quota), and the host
//     reads the namespace's /proc/<pid> directories (namespaced-program.ts): all kept;
//   - /proc/meminfo: Deno's memory info reads MemAvailable there, after the total from sysinfo(2)
//     (which sizes V8's heap); without it, the available memory is sysinfo's free memory;
//   - /proc/sys/kernel/osrelease: read by a thread of Deno's; the same release is uname(2)'s;
//   - /proc/sys/kernel/cap_last_cap: util-linux setpriv, which without it finds the last
//     capability with prctl(PR_CAPBSET_READ) (the bounding set is emptied all the same: see
//     test/attacks/sandbox-root.test.ts);
//   - /proc/stat: glibc counts the online CPUs there only where /sys/devices/system/cpu/online is
//     missing, which the sandbox's /sys holds a copy of (sandbox-sysfs.ts); without either, glibc
//     (2.36 here) counts them with sched_getaffinity: the same number, unless tacit runs pinned.
// None is needed: Deno starts and runs as before without them (test/attacks/sandbox-procfs.test.ts).
// What remains is what system calls tell any process, which no mount hides: uname(2) (the kernel's
// release and version), sysinfo(2) (uptime, load averages, total and free memory, the host's
// number of processes), the processor's own CPUID. Where there is no PID namespace, /proc is the
// host's procfs, which is not remounted (it would change the host's), and shows all of this, and
// every process of the user besides (see network-namespace.ts).

import { release } from "node:os";
import { REMOUNT_SOURCE } from "./mount-table.js";

/** Where procfs is. */
export const PROC = "/proc";

/** The first Linux whose procfs has `subset=pid` (a mount option older kernels refuse, which would fail the setup). */
const SUBSET_SINCE: readonly [number, number] = [5, 8];

/** Whether the kernel `kernelRelease` names (uname -r: "6.8.0-45-generic") has procfs's `subset=pid`. */
export function hasProcSubset(kernelRelease: string): boolean {
  const version = /^(\d+)\.(\d+)/.exec(kernelRelease);
  if (version === null) return false;
  const [major, minor] = [Number(version[1]), Number(version[2])];
  return major > SUBSET_SINCE[0] || (major === SUBSET_SINCE[0] && minor >= SUBSET_SINCE[1]);
}

/**
 * The mount table's line that leaves only the processes in the sandbox's own /proc (see above), or
 * null where this kernel has no `subset=pid`. For a PID namespace's setup only: its /proc is a
 * procfs of its own. The source is REMOUNT_SOURCE's, so that `mount -a` does not skip the line as
 * the mount already made; nosuid,nodev,noexec as `unshare --mount-proc` mounted it.
 */
export function ownProcfsLine(kernelRelease: string = release()): string | null {
  return hasProcSubset(kernelRelease) ? `${REMOUNT_SOURCE} ${PROC} proc remount,nosuid,nodev,noexec,subset=pid 0 0` : null;
}
