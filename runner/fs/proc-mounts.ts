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

/** Every mount point in a /proc/self/mountinfo table (field 5), unescaped. */
export function mountPointsIn(mountinfo: string): string[] {
  const found: string[] = [];
  for (const line of mountinfo.split("\n")) {
    const point = line.split(" ")[4];
    if (point !== undefined) found.push(unescapeMountPoint(point));
  }
  return found;
}
