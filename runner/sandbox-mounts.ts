// The sandbox's view of the host's files, closed by the kernel as well as by Deno. Deno's
// permissions keep a script off the host's files (no --allow-read, no --allow-write), but native
// code in Deno does I/O no permission covers: node:sqlite's `PRAGMA temp_store_directory` told a
// zero-permission script whether any path existed and was writable, and created and unlinked a
// temporary file in any directory it named. So, where the host allows it, the sandbox and the
// pure evaluator run in a mount namespace of their own (made by the same `unshare` as their
// network namespace, see network-namespace.ts), where:
//   - every top-level directory of / but the system's (VISIBLE_TOP: the programs, libraries,
//     /etc, devices and procfs Deno needs) is covered by an empty, read-only tmpfs: the
//     home directories, /root, /tmp, /var (/var/tmp), /run (/run/user), /mnt, /media, /srv, /opt,
//     and the project wherever it is below one of them (the sandbox starts before the allowed
//     roots are known: see cli/prestart.ts); /dev/shm and /dev/mqueue too; and every other entry
//     of / but a link (a swap file, a file a container was given) by an empty read-only file;
//   - the three directories Deno needs of tacit's (KEPT: Deno's binary's, the sandbox's bootstrap
//     and the pure evaluator's, which may lie under a home or /tmp) are bound back, read-only, at
//     their own paths (the directories on the way to them are empty);
//   - every mount left in view is made read-only, / included: nothing can be created anywhere;
//     and nodev: no device node opens, but the few Deno may use (KEPT_DEVICES, bound on themselves
//     first). A user's device nodes are theirs to open (their terminals in /dev/pts, and on a
//     desktop the sound card, webcam and GPU by the seat's ACLs; as root, /dev/kmsg took lines
//     into the kernel's log); none is a place for the sandbox to reach;
//   - /sys is covered too, by an empty read-only tmpfs that holds copies of the few files Deno
//     reads there, made as each sandbox starts (see sandbox-sysfs.ts): the host's sysfs named the
//     machine (its network interfaces and their MAC addresses, DMI names, disks, cgroup tree);
//   - the file size limit is 0 bytes (as prlimit sets it where there is no mount namespace, see
//     sandbox-process.ts writesNoFile), and so is the core file size limit.
// The first process of the namespace, /bin/sh run as root of the user namespace (or as real root,
// whose sandbox then runs as an unprivileged user: see sandbox-user.ts), does this with
// util-linux `mount` (one `mount -a` over a table tacit writes: the cost does not grow with a
// process per mount), then has util-linux setpriv run the program without any capability (as the
// network namespace alone ran it), so that nothing in it can unmount a cover (and, as root, as
// that user). Each step runs the
// next in its place: the program is the process the setup runs as, pid and all. (The same unshare
// gives it an IPC namespace of its own, see network-namespace.ts: System V shared memory is no
// file; and, where the host allows, a PID namespace whose first process the setup is, with a /proc
// of its own mounted before the setup reads its mount table, so that it is made read-only too.)
// Not closed: /etc, /usr and the other system places are readable as before (their files are
// the host's, not the user's), and a project below one of them (/usr/src/app) is not covered.
// /proc/self/mountinfo lists every mount of the namespace, those under a cover too (the names
// mounted below /home, /mnt or /run, the mounts' sources and options, tacit's kept directories):
// a mount inherited into a user namespace is locked to it and cannot be unmounted, so only a root
// of the sandbox's own (pivot_root) would leave them out.

import { readdirSync, realpathSync, statSync } from "node:fs";
import { release } from "node:os";
import path from "node:path";
import { isWithin } from "./fs/containment.js";
import { SHELL } from "./exec/pid-namespace.js";
import { executable, isDirectory } from "./exec/program-path.js";
import { MOUNT_CANDIDATES, readOnlyLine, REMOUNT_SOURCE, tableField } from "./mount-table.js";
import { SETPRIV_CANDIDATES } from "./parent-death.js";
import { PROC, type ProcfsTreatment, procfsTreatment, SUBSET_LINE } from "./sandbox-procfs.js";
import { SYS, sysfsFilesDenoReads } from "./sandbox-sysfs.js";

/**
 * The top-level directories left in view: the system's programs and libraries (Deno's shared
 * libraries among them), /etc (ICU's time zone, the loader's cache), devices (Deno's stdio and
 * /dev/null), procfs (Deno reads its own /proc/self there). Every other one is covered, /sys
 * among them (with copies of what Deno reads there in its cover: see SYS_STAGE).
 */
const VISIBLE_TOP = new Set(["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/dev", "/proc"]);
/** The device nodes left usable (see SETUP's nodev): what Deno or a library in it may open, none a channel to anything. */
const KEPT_DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];
/** Places in view otherwise that hold what other processes of the host share: POSIX shared memory and message queues. */
const COVERED_BELOW_VISIBLE = ["/dev/shm", "/dev/mqueue"];
/**
 * Where the setup writes its mount table: the first cover it mounts (a regular file is needed:
 * `mount -T` cannot parse a pipe), hidden once read by a second, empty cover mounted over it.
 */
const TABLE_PLACE = "/tmp";
const TABLE_FILE = `${TABLE_PLACE}/.tacit-sandbox-mounts`;
/** The empty file the setup makes beside the table, bound over each top-level entry that is neither a directory nor a link. */
const EMPTY_FILE = `${TABLE_PLACE}/.tacit-sandbox-empty`;
/**
 * Where the setup makes the sandbox's /sys (see sandbox-sysfs.ts) beside the table: the files Deno
 * reads there, copied at their paths below it; bound over /sys as its cover, before the table's
 * place is covered again.
 */
const SYS_STAGE = `${TABLE_PLACE}/.tacit-sandbox-sys`;
/** coreutils mkdir, which the setup makes SYS_STAGE's directories with (the shell has no builtin for it). */
const MKDIR_CANDIDATES = ["/usr/bin/mkdir", "/bin/mkdir"];
/** tmpfs options of a cover: empty (the setup, root of the user namespace, makes the kept directories' mount points in it), read-only once remounted, nothing to run or open as a device. */
const COVER_OPTIONS = "mode=0555,nosuid,nodev,noexec,size=16k";
const COVER_SOURCE = "tacit-hidden";
/** "/" as the table names it for its remount (see sandboxMountTable). */
const ROOT_WRITTEN_OTHERWISE = "/.";
/** What the setup writes on stderr before it gives up (exit MOUNT_SETUP_FAILED_STATUS, the program not run). */
export const MOUNT_SETUP_FAILED = "tacit: the sandbox's mounts could not be set up:";
export const MOUNT_SETUP_FAILED_STATUS = 125;
/** How many of tacit's directories are bound back: the setup keeps them open on fds 3, 4 and 5. */
const KEPT_SLOTS = 3;

// The namespace's first process. Positional parameters: mount's path, the mount table in two parts
// (before and after TABLE_PLACE is covered again: procfs's covers, which bind EMPTY_FILE, go
// between), the covered places (as the table writes them, space-separated), keyutils' keyctl or ""
// (see KEYCTL_CANDIDATES), mkdir's path and the files of /sys copied into the sandbox's
// (space-separated, "" for none: see sandbox-sysfs.ts; one that cannot be read as the sandbox
// starts is left out, and Deno reads it as missing), how procfs's machine-wide entries are left
// out (a ProcfsTreatment, see sandbox-procfs.ts: the entries to cover are listed as each sandbox
// starts, so that one gone since does not fail the setup; where /proc is the PID namespace's own,
// the mounts listed below /proc are the host's /proc's, beneath it and out of view, and are not
// remounted), tacit's three kept directories (opened on
// fds 3-5 before anything is covered; the table binds them back from there), then the program and
// its arguments. No file of the host is written: the table goes into the first cover. The mounts
// left in view are read from this namespace's own mount table as the sandbox starts, not when
// tacit probed: one unmounted since (tacit serve runs for days) is not remounted, and so does not
// make every later sandbox fail; one mounted since is made read-only too. /proc/self/mountinfo
// escapes a mount point's space, tab, newline and backslash as the table does. The file size
// limits of 0 (soft and hard) that sandbox-process.ts has prlimit set elsewhere are set here, by
// the shell, once the mounts are made: a process less.
const SETUP = `fail() { printf '%s %s\\n' "${MOUNT_SETUP_FAILED}" "$1" >&2; exit ${MOUNT_SETUP_FAILED_STATUS}; }
set -f
m=$1 table=$2 rest=$3 covers=$4 keyctl=$5 mkdir=$6 sysfs=$7 procfs=$8; shift 8
exec 3<"$1" 4<"$2" 5<"$3" || fail "could not open tacit's directories $1, $2, $3"
shift 3
covered() { for c in $covers; do case $1 in "$c"|"$c"/*) return 0;; esac; done; return 1; }
out=$("$m" -t tmpfs -o mode=0700,nosuid,nodev,noexec,size=1m ${COVER_SOURCE} ${TABLE_PLACE} 2>&1) || fail "could not mount a tmpfs on ${TABLE_PLACE}: $out"
printf '' > ${EMPTY_FILE} || fail "could not make the empty file that covers files"
if [ -n "$sysfs" ]; then
  dirs=
  for f in $sysfs; do d=\${f%/*}; dirs="$dirs ${SYS_STAGE}\${d#${SYS}}"; done
  out=$("$mkdir" -p $dirs 2>&1) || fail "could not make the sandbox's ${SYS}: $out"
  for f in $sysfs; do { IFS= read -r v < "$f" && printf '%s\\n' "$v" > "${SYS_STAGE}\${f#${SYS}}"; } 2>/dev/null; done
fi
{
  printf '%s' "$table"
  files=
  if [ "$procfs" != subset ]; then
    set +f
    for e in ${PROC}/*; do
      case \${e#${PROC}/} in *[!0-9]*) ;; *) continue;; esac
      case \${e#${PROC}/} in *[!A-Za-z0-9._-]*) continue;; esac
      [ -L "$e" ] && continue
      if [ -d "$e" ]; then printf '${COVER_SOURCE} %s tmpfs ${COVER_OPTIONS},ro 0 0\\n' "$e"
      else printf '${EMPTY_FILE} %s none bind 0 0\\n' "$e"; files="$files $e"; fi
      covers="$covers $e"
    done
    set -f
  fi
  printf '%s' "$rest"
  for e in $files; do printf '${REMOUNT_SOURCE} %s none remount,bind,ro 0 0\\n' "$e"; done
  [ "$procfs" = subset ] && printf '%s\\n' "${SUBSET_LINE}"
  while read -r _ _ _ _ point _; do
    [ "$point" = / ] && point=${ROOT_WRITTEN_OTHERWISE}
    case $procfs:$point in subset:${PROC}/*|own-covered:${PROC}/*) continue;; esac
    covered "$point" || printf '${REMOUNT_SOURCE} %s none remount,bind,ro,nodev 0 0\\n' "$point"
  done < /proc/self/mountinfo
} > ${TABLE_FILE} || fail "could not write the mount table"
out=$("$m" --no-canonicalize -v -a -T ${TABLE_FILE} 2>&1) || fail "$out"
case $out in *": ignored"*|*": already mounted"*) fail "a mount was skipped: $out";; esac
exec 3<&- 4<&- 5<&-
[ -z "$keyctl" ] || "$keyctl" new_session >/dev/null 2>&1 || :
ulimit -f 0 && ulimit -c 0 || fail "could not set the file size limits"
exec "$@"`;

/**
 * keyutils' keyctl, where the host has it. A process keeps the session keyring of the process that
 * started it, user namespace or not, and may read the keys it holds (a Kerberos ticket kept in a
 * keyring, an encrypted home's passphrase): native code in a program launched as the sandbox is read
 * a key tacit's session keyring held. So the setup runs `keyctl new_session`, which gives it (its
 * parent) a new, empty session keyring, then the program. Best effort: where keyctl is missing, or
 * the kernel's quota of keys for the user is reached (200 by default; each live sandbox holds one),
 * the program keeps the keyring it was given.
 */
export const KEYCTL_CANDIDATES = ["/usr/bin/keyctl", "/bin/keyctl"];

/**
 * util-linux setsid, which runs the program in a session (and process group) of its own: for the
 * first process of a PID namespace (see network-namespace.ts), which would otherwise stay in the
 * process group of the unshare that waits outside the namespace. A process group is the one name
 * for a process outside its namespace that native code inside still has: kill(0, SIGSTOP) stopped
 * that unshare, and, with the program's parent-death signal cleared first (prctl, which nothing
 * refuses), kill(0, SIGKILL) ended it: tacit saw the sandbox end, could no longer find the program
 * to kill it, and the program ran on, out of every limit, past tacit's own end.
 */
const SETSID_CANDIDATES = ["/usr/bin/setsid", "/bin/setsid"];

/** How the setup is run, found once per process (see sandboxMountPlan). */
export interface SandboxMountPlan {
  /**
   * The shell and its arguments (`sh -c SETUP name mount table kept…`), then setpriv's, before the
   * program's: the setup, then the program without a capability (see WITHOUT_CAPABILITIES).
   */
  argsBefore: string[];
  /**
   * The same, then setsid's, for the first process of a PID namespace (see SETSID_CANDIDATES):
   * there it leads no process group, so setsid makes the new session in its place, no fork. Its
   * table also leaves only the namespace's processes in its own /proc (see sandbox-procfs.ts).
   * Null where the host has no util-linux setsid.
   */
  argsBeforeInOwnSession: string[] | null;
  /**
   * The same plan, with setpriv switching the program to another user as it drops its capabilities
   * (`asUser`: setpriv's arguments, see sandbox-user.ts: root's sandbox, whose setup runs as real
   * root). Made from what sandboxMountPlan found: the host is not looked at again.
   */
  as(asUser: readonly string[]): SandboxMountPlan;
}

/**
 * util-linux setpriv's arguments that take every capability from the program (root of the user
 * namespace, where the setup needed them to mount), for good: none kept, inherited, ambient or in
 * the bounding set, no new privileges, and securebits so that uid 0 gains none at exec. It can
 * unmount nothing, so no cover can be lifted. (A user namespace of its own inside, as
 * exec/confinement.ts makes for commands, would need unshare from inside this view.)
 */
export const WITHOUT_CAPABILITIES = [
  "--no-new-privs",
  "--inh-caps=-all",
  "--ambient-caps=-all",
  "--bounding-set=-all",
  "--securebits=+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked,+keep_caps_locked",
  "--",
];

/**
 * What is covered: every real top-level directory but the system's (a link there leads into one
 * covered or kept), and every other top-level entry that is not a link (`files`): a swap file,
 * which root's sandbox could read (root owns it), or a file a container was given.
 */
function coveredPlaces(): { dirs: string[]; files: string[] } {
  const top = readdirSync("/", { withFileTypes: true }).filter((entry) => !entry.isSymbolicLink());
  const dirs = top
    .filter((entry) => entry.isDirectory())
    .map((entry) => `/${entry.name}`)
    .filter((dir) => !VISIBLE_TOP.has(dir));
  const files = top.filter((entry) => !entry.isDirectory()).map((entry) => `/${entry.name}`);
  return { dirs: [...dirs, ...COVERED_BELOW_VISIBLE.filter(isDirectory)], files };
}

/**
 * The mount table for `kept` (tacit's directories, real paths) and the places it covers, with
 * `sysfsCopied` (the files of /sys the setup copies into SYS_STAGE, see sandbox-sysfs.ts). Its
 * lines, in order: the covers (/sys's is SYS_STAGE, where there are copies); a second cover over
 * TABLE_PLACE (hiding the table, once read); the kept directories under a cover, bound back from the setup's fds (their mount points made in the
 * cover); the kept devices bound on themselves; each cover, kept directory and device remounted
 * read-only (a device node is written through a read-only mount all the same). The setup adds the mounts still
 * in view, remounted read-only and nodev, / among them (see SETUP): the kept devices, each a mount
 * of its own made before, stay usable. `table` holds the lines before the second cover over
 * TABLE_PLACE, `rest` the others: the setup adds procfs's covers between (see sandbox-procfs.ts).
 */
export function sandboxMountTable(kept: readonly string[], sysfsCopied: readonly string[]): { table: string; rest: string; covers: string[] } {
  const { dirs: covers, files } = coveredPlaces();
  if (!covers.includes(TABLE_PLACE)) covers.push(TABLE_PLACE);
  const hidden = (p: string): boolean => covers.some((cover) => isWithin(p, cover));
  const lines: string[] = [];
  const sysStaged = covers.includes(SYS) && sysfsCopied.length > 0;
  for (const cover of covers) {
    // TABLE_PLACE is mounted by the setup itself, before the table is written there.
    if (cover === TABLE_PLACE) continue;
    // Bound from the setup's tmpfs (mounted nosuid,nodev,noexec), before TABLE_PLACE is covered again.
    if (cover === SYS && sysStaged) lines.push(`${SYS_STAGE} ${SYS} none bind 0 0`);
    else lines.push(`${COVER_SOURCE} ${tableField(cover)} tmpfs ${COVER_OPTIONS} 0 0`);
  }
  // Before TABLE_PLACE is covered again, while EMPTY_FILE is in view (the setup adds procfs's covers there: see SETUP).
  for (const file of files) lines.push(`${EMPTY_FILE} ${tableField(file)} none bind 0 0`);
  const beforeAgain = lines.length;
  // Named apart: `mount -a` skips a line whose source, type and target are those of a mount already there.
  lines.push(`${COVER_SOURCE}-again ${TABLE_PLACE} tmpfs ${COVER_OPTIONS} 0 0`);
  const bound: string[] = [];
  kept.forEach((dir, slot) => {
    if (!hidden(dir) || bound.includes(dir)) return;
    lines.push(`/proc/self/fd/${3 + slot} ${tableField(dir)} none bind,X-mount.mkdir=0555 0 0`);
    bound.push(dir);
  });
  const devices = KEPT_DEVICES.filter(isCharacterDevice);
  for (const device of devices) lines.push(`${tableField(device)} ${tableField(device)} none bind 0 0`);
  for (const point of [...covers, ...files, ...bound, ...devices]) lines.push(readOnlyLine(point));
  // Its copies are files Deno opens: nothing in them runs, and no device node opens there.
  if (sysStaged) lines.push(`${REMOUNT_SOURCE} ${SYS} none remount,bind,ro,nosuid,nodev,noexec 0 0`);
  const text = (part: string[]): string => part.map((line) => `${line}\n`).join("");
  return { table: text(lines.slice(0, beforeAgain)), rest: text(lines.slice(beforeAgain)), covers: [...covers, ...files].map(tableField) };
}

function isCharacterDevice(file: string): boolean {
  try {
    return statSync(file).isCharacterDevice();
  } catch {
    return false;
  }
}

/** tacit's directories Deno reads (see KEPT_SLOTS): real paths, each a directory. */
function keptDirectories(files: readonly string[]): string[] {
  return files.map((file) => path.dirname(realpathSync(file)));
}

/**
 * The plan for the sandbox's mounts, or why there is none: `files` are what Deno must still
 * reach (its binary, the sandbox's bootstrap, the pure evaluator), each at its real path.
 * `kernelRelease` decides how a PID namespace's own /proc is trimmed (see sandbox-procfs.ts).
 * The program runs as the setup's user (see SandboxMountPlan.as for another).
 */
export function sandboxMountPlan(files: readonly string[], kernelRelease: string = release()): SandboxMountPlan | { unavailable: string } {
  if (process.platform !== "linux") return { unavailable: `mount namespaces are Linux's, and this is ${process.platform}` };
  const mount = MOUNT_CANDIDATES.find(executable);
  if (mount === undefined) return { unavailable: "util-linux `mount` is not installed" };
  if (!executable(SHELL)) return { unavailable: `${SHELL} is not installed` };
  const setpriv = SETPRIV_CANDIDATES.find(executable);
  if (setpriv === undefined) return { unavailable: "util-linux `setpriv` is not installed" };
  if (files.length !== KEPT_SLOTS) throw new Error(`sandboxMountPlan: ${KEPT_SLOTS} files, not ${files.length}`);
  let kept: string[];
  try {
    kept = keptDirectories(files);
  } catch (error) {
    return { unavailable: `tacit's files could not be found: ${(error as Error).message}` };
  }
  // A file Deno is given by a path that is not its real one would not be found: it is bound back at its real path.
  const renamed = files.find((file) => realpathSync(file) !== file);
  if (renamed !== undefined) return { unavailable: `${renamed} is reached through a symbolic link` };
  // Without mkdir, the sandbox's /sys is empty: glibc counts the CPUs in /proc/stat (or, where the
  // sandbox's procfs leaves it out, by sched_getaffinity: see sandbox-procfs.ts), and Deno sees no cgroup quota.
  const mkdir = MKDIR_CANDIDATES.find(executable) ?? "";
  const sysfsCopied = mkdir === "" ? [] : sysfsFilesDenoReads();
  const { table, rest, covers } = sandboxMountTable(kept, sysfsCopied);
  const keyctl = KEYCTL_CANDIDATES.find(executable) ?? "";
  const sysfs = sysfsCopied.join(" ");
  const setupWith = (procfs: ProcfsTreatment): string[] => [SHELL, "-c", SETUP, "tacit-sandbox-mounts", mount, table, rest, covers.join(" "), keyctl, mkdir, sysfs, procfs, ...kept, setpriv];
  // Without a PID namespace /proc is the host's; in one, the namespace's own (see sandbox-procfs.ts).
  const setup = setupWith(procfsTreatment(false));
  const setupInOwnProc = setupWith(procfsTreatment(true, kernelRelease));
  // setsid last, run without a capability, as the program is.
  const setsid = SETSID_CANDIDATES.find(executable);
  const planAs = (asUser: readonly string[]): SandboxMountPlan => {
    const argsBefore = [...setup, ...asUser, ...WITHOUT_CAPABILITIES];
    const inOwnSession = setsid === undefined ? null : [...setupInOwnProc, ...asUser, ...WITHOUT_CAPABILITIES, setsid];
    return { argsBefore, argsBeforeInOwnSession: inOwnSession, as: planAs };
  };
  return planAs([]);
}
