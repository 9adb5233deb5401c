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
//   - /proc/meminfo: Deno's memory info reads MemAvailable there, after sysinfo(2) (strace shows
//     both, and the string beside the path in Deno's binary); without it, the available memory is
//     sysinfo's free memory;
//   - /proc/sys/kernel/osrelease: read by a thread of Deno's, by the strings beside its path in
//     the binary ("microsoft", "/.dockerenv") to tell WSL or a container; missing, it is neither
//     (the sandbox is no WSL), and the release itself is uname(2)'s;
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
// host's procfs, which is not remounted (that would change the host's /proc), and shows every
// process of the user (see network-namespace.ts); there, and on kernels before 5.8, the setup
// covers the machine-wide entries one by one instead (see ProcfsTreatment).

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
 * How the setup leaves procfs's machine-wide entries out of the sandbox's view (see above):
 *   - "subset": its /proc is the PID namespace's own procfs, remounted with `subset=pid`;
 *   - "own-covered": its own procfs, on a kernel without `subset=pid`: each top-level entry but the
 *     processes' and the links (self, thread-self, and mounts and net, which lead into self) is
 *     covered, a directory by an empty read-only tmpfs, a file by an empty read-only file;
 *   - "host-covered": without a PID namespace /proc is the host's procfs, which is not remounted
 *     (its options are the host's /proc's): the same covers, in the sandbox's mount namespace only.
 * With its own procfs, the mounts listed below /proc are those of the host's /proc beneath it
 * (systemd's binfmt_misc automount on /proc/sys/fs/binfmt_misc), out of reach: the setup, which
 * made every mount listed read-only, failed on them, and the sandbox ran without its PID namespace.
 * The covers cost a mount each: about 2.2 ms of CPU more per start (the namespaces and setup alone,
 * medians of 101 interleaved runs: 8.68 ms before, 10.85 ms with them), where `subset=pid` costs nothing measurable.
 */
export type ProcfsTreatment = "subset" | "own-covered" | "host-covered";

export function procfsTreatment(ownProcfs: boolean, kernelRelease: string = release()): ProcfsTreatment {
  if (!ownProcfs) return "host-covered";
  return hasProcSubset(kernelRelease) ? "subset" : "own-covered";
}

/**
 * The mount table's line that leaves only the processes in the sandbox's own /proc ("subset").
 * The source is REMOUNT_SOURCE's, so that `mount -a` does not skip the line as the mount already
 * made; nosuid,nodev,noexec as `unshare --mount-proc` mounted it. Before the setup's read-only
 * remounts: a remount of the file system resets the mount's flags to those it names.
 */
export const SUBSET_LINE = `${REMOUNT_SOURCE} ${PROC} proc remount,nosuid,nodev,noexec,subset=pid 0 0`;
