// Where the kernel's process file system (procfs) is mounted. Through it a file capability
// whose root holds it (`--allowed-roots /`, or a root holding a bind-mounted /proc) reached
// the host itself: /proc/<tacit's pid>/environ (tacit's environment, the LLM API key among it),
// /proc/self/... (which, opened by the host, is tacit), /proc/<pid>/fd/N (tacit's open files:
// the secure output, the audit log), /proc/<pid>/mem, and writable files such as
// /proc/<pid>/oom_score_adj or /proc/sys/*. fs/protected-paths.ts refuses every path on such a
// mount to reads and writes alike, and recursive searches and walks do not enter one.

import { readFileSync } from "node:fs";

/** Where procfs is normally mounted: refused even where the mount table cannot be read. */
const USUAL_PLACE = "/proc";

/** A mount point as /proc/self/mountinfo writes it: space, tab, newline and backslash as octal escapes. */
function unescapeMountPoint(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * The mount points of procfs in /proc/self/mountinfo (field 5 is the mount point; the file
 * system type follows the " - " separator).
 */
export function procMountsIn(mountinfo: string): string[] {
  const found: string[] = [];
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    const separator = fields.indexOf("-", 6);
    if (separator === -1 || fields[separator + 1] !== "proc" || fields[4] === undefined) continue;
    found.push(unescapeMountPoint(fields[4]));
  }
  return found;
}

let mounts: readonly string[] | undefined;

/**
 * Every procfs mount point of this process's mount namespace, /proc always among them; read
 * once per thread (a mount made later, which needs privileges tacit does not give scripts, is
 * not seen).
 */
export function procMounts(): readonly string[] {
  if (mounts) return mounts;
  let table = "";
  try {
    table = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    // No /proc here (or not Linux): /proc alone.
  }
  mounts = [...new Set([USUAL_PLACE, ...procMountsIn(table)])];
  return mounts;
}

/**
 * File systems whose files are the kernel's controls rather than files: writing, making or
 * removing an entry there changes how the system or its processes run. A cgroup file system is
 * the sharpest: a script whose root held /sys/fs/cgroup made a cgroup with mkdir() and set its
 * pids.max with write(), and could move tacit's process (listed in cgroup.procs) into one that is
 * frozen or may start no process, hanging the host. Reading them stays as it was.
 */
const KERNEL_INTERFACE_TYPES = new Set([
  "sysfs",
  "cgroup",
  "cgroup2",
  "debugfs",
  "tracefs",
  "securityfs",
  "configfs",
  "bpf",
  "pstore",
  "efivarfs",
  "fusectl",
  "binfmt_misc",
  "selinuxfs",
  "smackfs",
  "nfsd",
  "rpc_pipefs",
]);

/** The mount points of those file systems (KERNEL_INTERFACE_TYPES) in a /proc/self/mountinfo table, with their type. */
export function kernelInterfaceMountsIn(mountinfo: string): Array<{ type: string; point: string }> {
  const found: Array<{ type: string; point: string }> = [];
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    const separator = fields.indexOf("-", 6);
    const type = separator === -1 ? undefined : fields[separator + 1];
    if (type === undefined || !KERNEL_INTERFACE_TYPES.has(type) || fields[4] === undefined) continue;
    found.push({ type, point: unescapeMountPoint(fields[4]) });
  }
  return found;
}

/** Those of this process's mount namespace as the table says now; /sys always among them (as sysfs), as /proc is among procfs's. */
export function kernelInterfaceMounts(): ReadonlyArray<{ type: string; point: string }> {
  let table = "";
  try {
    table = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    // No /proc here (or not Linux): /sys alone.
  }
  // The innermost first, so that a refusal names the file system a path is really on (a cgroup's, not the sysfs around it).
  const found = kernelInterfaceMountsIn(table).sort((a, b) => b.point.length - a.point.length);
  return found.some(({ point }) => point === "/sys") ? found : [{ type: "sysfs", point: "/sys" }, ...found];
}

/** Every mount point in a /proc/self/mountinfo table (field 5), unescaped. */
export function mountPointsIn(mountinfo: string): string[] {
  const found: string[] = [];
  for (const line of mountinfo.split("\n")) {
    const point = line.split(" ")[4];
    if (point !== undefined) found.push(unescapeMountPoint(point));
  }
  return found;
}
