// What the sandbox sees of /sys. The host's sysfs names the machine: native code in Deno (which no
// permission binds) listed the host's network interfaces and read their MAC addresses in
// /sys/class/net (the sandbox's network namespace hides the interfaces from the network, not from a
// sysfs mounted outside it), the product, vendor and board names in /sys/class/dmi/id (as root,
// the serial number and UUID too), the disks in /sys/block, the firmware's tables in
// /sys/firmware, and the whole cgroup tree in /sys/fs/cgroup (on a desktop, a scope named for each
// application the person runs). A sysfs of the sandbox's own (its network namespace's) would list
// only its loopback in /sys/class/net, but every device, disk, DMI name and firmware table as
// before. So, in the sandbox's mount namespace (sandbox-mounts.ts), /sys is an empty read-only
// tmpfs that holds only copies of the files Deno reads there, made as each sandbox starts:
//   - /sys/devices/system/cpu/online: glibc's count of the CPUs online (sysconf, get_nprocs),
//     which Deno asks as it starts (without it, glibc counts them in /proc/stat, or by
//     sched_getaffinity where the sandbox's procfs leaves /proc/stat out: the same number);
//   - the CPU quota of the cgroup tacit (and so the sandbox) runs in, and of those above it, as
//     Rust's std::thread::available_parallelism reads it (Deno asks it three times as it starts,
//     and it is navigator.hardwareConcurrency): in a container limited to 2 CPUs on a host of 64,
//     Deno would otherwise size its pools for 64.
// Deno reads nothing else there as it starts or runs a script (strace -f -e trace=%file on a
// sandbox; /sys/devices/system/cpu/cpu0/tsc_freq_khz is looked for too, which stock kernels do
// not have, and is left missing). process.constrainedMemory() reads the memory cgroup's limit;
// the validator refuses `process` in a script, so that is not copied (it answers 0 there).

import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { isDirectory } from "./exec/program-path.js";
import { isWithin } from "./fs/containment.js";

/** Where sysfs is. */
export const SYS = "/sys";

/** glibc's list of the CPUs online. */
const CPUS_ONLINE = "/sys/devices/system/cpu/online";

/** Where Rust's std looks for a cgroup v2 hierarchy (file-hierarchy(7)), and, in order, for cgroup v1's cpu controller (cgroups(7)). */
const CGROUP_V2_MOUNT = "/sys/fs/cgroup";
const CGROUP_V1_CPU_MOUNTS = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"];

/**
 * The names a copied file's path may hold: the setup's shell splits the list of them on spaces,
 * unquoted, and a cgroup named otherwise (systemd escapes what it would not write so) is not copied.
 */
const PLAIN_PATH = /^[A-Za-z0-9._@:,+=/-]+$/;

/** The cgroup whose CPU quota Rust's std reads, from /proc/self/cgroup's text: as its `quota()` chooses (a v1 line with the cpu controller over the v2 line). */
export function cgroupOfCpuQuota(procSelfCgroup: string): { version: 1 | 2; path: string } | null {
  let chosen: { version: 1 | 2; path: string } | null = null;
  for (const line of procSelfCgroup.split("\n")) {
    // hierarchy-ID:controller-list:cgroup-path (cgroups(7)); the path may hold colons.
    const fields = /^[^:]*:([^:]*):(.*)$/.exec(line);
    if (fields === null) continue;
    const controllers = fields[1]!;
    const group = fields[2]!;
    const version = controllers === "" ? 2 : controllers.split(",").includes("cpu") ? 1 : null;
    if (version === null || (chosen !== null && version === 2)) continue;
    chosen = { version, path: group };
  }
  return chosen;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `dir` and each directory above it up to `mount`, leaf first: where Rust's std reads a quota. */
function upTo(dir: string, mount: string): string[] {
  const dirs: string[] = [];
  for (let at = dir; isWithin(at, mount); at = path.posix.dirname(at)) {
    dirs.push(at);
    if (at === mount) break;
  }
  return dirs;
}

/** The files of the cgroup's CPU quota that Rust's std reads, where they exist. */
function cpuQuotaFiles(cgroup: { version: 1 | 2; path: string }): string[] {
  if (cgroup.version === 2) {
    const leaf = path.posix.join(CGROUP_V2_MOUNT, cgroup.path);
    // Rust reads no quota where the leaf has no cgroup.controllers (no cgroup2 there).
    if (!isWithin(leaf, CGROUP_V2_MOUNT) || !isFile(`${leaf}/cgroup.controllers`)) return [];
    return [`${leaf}/cgroup.controllers`, ...upTo(leaf, CGROUP_V2_MOUNT).map((dir) => `${dir}/cpu.max`)].filter(isFile);
  }
  // The first of the usual mounts where the group is (Rust then looks in /proc/self/mountinfo for a
  // cpu controller mounted elsewhere: outside /sys, which the sandbox's mounts cover or leave as they are).
  for (const mount of CGROUP_V1_CPU_MOUNTS) {
    const leaf = path.posix.join(mount, cgroup.path);
    if (!isWithin(leaf, mount) || !isDirectory(leaf)) continue;
    return upTo(leaf, mount)
      .flatMap((dir) => [`${dir}/cpu.cfs_quota_us`, `${dir}/cpu.cfs_period_us`])
      .filter(isFile);
  }
  return [];
}

/**
 * The files of /sys that the sandbox's /sys holds copies of (see above), as this host has them:
 * each a regular file, its path plain (see PLAIN_PATH). Found once per process, with the plan.
 */
export function sysfsFilesDenoReads(procSelfCgroup = "/proc/self/cgroup"): string[] {
  let cgroups = "";
  try {
    cgroups = readFileSync(procSelfCgroup, "utf8");
  } catch {
    // No cgroups: Rust's std reads no quota either.
  }
  const cgroup = cgroupOfCpuQuota(cgroups);
  const files = [...(isFile(CPUS_ONLINE) ? [CPUS_ONLINE] : []), ...(cgroup === null ? [] : cpuQuotaFiles(cgroup))];
  return [...new Set(files)].filter((file) => PLAIN_PATH.test(file) && isWithin(file, SYS));
}
