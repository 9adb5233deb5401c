// Opt-in confinement of allowed commands (--confine-commands, config libraryConfig.confineCommands).
// Without it a command runs with the user's full authority: with `cat` allowed, `cat .env`,
// `cat ~/.ssh/id_rsa` or `tee ../outside` read and wrote what the capability API refuses.
// With it, the command's PID and mount namespace (pid-namespace.ts) is made, before the command
// starts, into a view of the file system where:
//   - everything is read-only but the allowed roots and a private, empty /tmp (a root under /tmp
//     is mounted back into it at its own path); with / a root, everything but its top level and
//     the system's places (SYSTEM_PLACES: tacit runs programs from them unconfined), and /tmp is
//     still private (see grants);
//   - the classified paths, Unix sockets, FIFOs and device nodes found under the allowed roots (a directory there tacit
//     may not list, whole: see listedEntries), the hidden entries of the home
//     directory (~/.ssh, ~/.aws, ~/.bashrc, ~/.config, …, of the home HOME names and of the one
//     the password database gives), the user's runtime directory (its daemons' sockets, see
//     runtimeDirectories), the classified paths named by an absolute pattern, and
//     tacit's own files (its homes, config file, secure output, audit log, record directory, a
//     procfs mounted elsewhere than /proc; not the null device) are covered by an empty read-only
//     file or directory (tacit's homes, the secure output and the record directory are made first
//     where they do not exist yet in the roots, see ownPlacesMade: only what exists can be covered;
//     the audit log exists from before the script until tacit ends, its writer's lock lies in tacit's home; the directories
//     on the way to them are pinned, see pins, and those holding a link on the way made read-only);
//     a home directory in the roots has a read-only top level, its entries writable as before, so
//     that a hidden entry that does not exist (~/.bash_profile) cannot be made (see frozenHomes); a home entry that holds an allowed root or the command's own program
//     (~/.cargo/bin/cargo) is not covered whole, only its classified paths are (so a program
//     there that the command runs in turn by name, from ~/.local/bin, is not found);
//   - git's configuration and hooks under the roots (see gitControlOf) are read-only, and the
//     directories that hold them (a .git) cannot be renamed away and replaced (see pins): git runs
//     what they name with the user's full authority, unconfined, at the user's next git command;
//     so is tacit's own code under the roots (paths.ts, tacitCodeLocations), which tacit runs so
//     at its next start, and so are the files that decide how it starts (launch-files.ts: the MCP
//     clients' settings holding its command and flags) and what `npx tacit` runs
//     (node_modules/.bin/tacit), and the files an AI client runs on its own (fs/agent-hooks.ts:
//     what its hooks name), where they exist; a link on the way to any of these cannot be a
//     mount point (mount follows it), so the directory holding it is made read-only instead, and a
//     command is refused where that directory is a root (see keep in masks, linkInRoot);
//   - /proc is the namespace's own, its kernel settings read-only (see PROC_SETTINGS).
// What of these a command makes where there was none cannot be covered: it is undone once the
// command has ended (see afterwards: a commondir, hooks, launch files, package.json, and a git
// repository of its own, new-repositories.ts), and the command's stderr says so.
// The first process of the namespace, a shell tacit chooses, does this with util-linux `mount`
// (one `mount -a` over a table tacit writes, so the cost does not grow with a process per mount),
// then changes into the working directory again (the old one was the unconfined view), checks it
// is the same directory, and runs the command in a user and mount namespace of its own, where the
// kernel locks those mounts (see lockFailure). Where any step fails the command does not run: it
// is refused with the reason (never run unconfined).
//
// The classified paths under the roots are found anew for each command by a walk of the roots
// (a file written since, or renamed, is covered), which lists again only the directories whose
// change time moved since tacit last listed them (see Listing): a stat per directory, after a
// first full walk per process (a walk does not enter a classified directory, covered whole).
// The covers are mounted by the child after the walk: once they are (or where a mount failed), it
// has `stat` check that no directory the walk listed, nor a home listed for its hidden entries, has
// changed since (see wrap), and gives up where one has (a confined command in another run can move
// files in the roots meanwhile); the host then plans the covers anew, a bounded number of times
// (see RootsChangedDuringSetup), before the command is refused.
// Not covered: a classified file outside the roots and the home directory whose pattern is a
// name or a glob (a link in a root that leads there reads it); the other files under the roots
// that programs run later and tacit's file API refuses to change (.envrc, executables on PATH,
// agents' hook settings); pre-existing mounts below an allowed root become read-only.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, type BigIntStats, constants, type Dirent, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { RECORD_DIRECTORY_WHAT } from "../client-settings.js";
import { agentHookFiles } from "../fs/agent-hooks.js";
import type { ClassifiedPaths } from "../fs/classified-paths.js";
import { isWithin } from "../fs/containment.js";
import { homes } from "../fs/home-config.js";
import { mountPointsIn } from "../fs/proc-mounts.js";
import { configuredPlacesOf } from "../fs/git-repository.js";
import { gitControlOf, type ProtectedPath } from "../fs/protected-paths.js";
import { isNpxTacitProgram, npxTacitPrograms, tacitLaunchFiles } from "../launch-files.js";
import { npxTacitCodeLocations, tacitCodeLocations } from "../paths.js";
import { MOUNT_CANDIDATES, REMOUNT_SOURCE, tableField } from "../mount-table.js";
import { printable } from "../printable.js";
import { prepareRecordDirectory } from "../record-directory.js";
import { EffectFailure } from "../refusals.js";
import { KEYCTL_CANDIDATES } from "../sandbox-mounts.js";
import { isSinkRefusal, SecureSink } from "../secure-sink.js";
import { tempRoots } from "../temp-dirs.js";
import { inOwnersDirectory } from "./aside-name.js";
import { watchLaunchManifests } from "./launch-manifests.js";
import { gitIdentity, newRepositoriesSetAside } from "./new-repositories.js";
import { mayHoldNotUtf8, notUtf8Names, shownName } from "./not-utf8-names.js";
import { COMMONDIR, isRepository, REPOSITORY_CONTROLS } from "./repository-shape.js";
import { lifelineCheck } from "./lifeline.js";
import { MAP_CURRENT_USER, type NamespaceWrapper, SHELL } from "./pid-namespace.js";
import { executable, isDirectory } from "./program-path.js";

const TMP = "/tmp";
const PROC = "/proc";
/**
 * The operating system's own places: a root that holds them (`--allowed-roots /`) does not make them
 * writable (see grants). tacit runs programs from them with the user's full authority, unconfined:
 * node and its libraries at its next start, and, for the next command, unshare, sh, mount, stat and
 * the rest of the setup before the command is confined; /etc/ld.so.preload names a library every
 * program loads. /dev and /sys hold devices and the kernel's settings, not files a root grants.
 */
export const SYSTEM_PLACES = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev", "/sys"];
const SLASH = "/";
/**
 * Never covered, whatever names it (a remembered or current --secure-output /dev/null, a classified
 * pattern): it holds nothing (reads end at once, writes are dropped), and covered with an empty
 * read-only file it made every `2>/dev/null` fail, the setup's own check of the walked directories
 * included, so every confined command was refused as if the roots had changed.
 */
const NULL_DEVICE = "/dev/null";
/**
 * What the setup writes before it gives up, with exit status 125, the command not run: on its own
 * channel (fd 4 as started, kept on fd 7, see SETUP), closed before the command runs. Not on
 * stderr, which the command writes too: a confined command that wrote this there and exited 125
 * was reported refused and "not-started" though it had run, and one that wrote the roots-changed
 * reason was run again, up to SETUP_ATTEMPTS times.
 */
const SETUP_FAILED = "tacit-confinement-failed:";
/** Where a confined command's first shell gets its lifeline: after the walked directories (3) and the failure channel (4). */
export const CONFINED_LIFELINE_FD = 5;
const SETUP_FAILED_STATUS = 125;
const GLOB_CHAR = /[*?[\]{}!]/;
/** What the setup has \`stat\` say of each directory walked: device, inode, change time (ns), as walkedLine writes them. */
const WALKED_STAT = "%d %i %.9Z\\n";

/**
 * What the setup says when a directory the walk listed changed before the covers were mounted (see
 * CommandConfinement.wrap), or when a mount failed and one had: the host plans again (see
 * RootsChangedDuringSetup).
 */
const CHANGED_DURING_SETUP = "the allowed roots changed while it was set up";
/**
 * How many times a command's confinement is planned and set up before its refusal stands, where
 * each gave up because the roots changed meanwhile (see RootsChangedDuringSetup).
 */
export const SETUP_ATTEMPTS = 3;

/**
 * The device nodes a confined command may open: what programs write to and read from as a matter
 * of course, none a channel to anything (/dev/tty opens only on a controlling terminal, which a
 * command has not). Every mount in view but the roots is made nodev (see readOnlyNoDevicesLine),
 * these are bound on themselves first (a bind keeps the flags of its source as they are then).
 * Without nodev, a confined command of tacit run as root read a classified `.env` in a root off the
 * block device that holds the root (`grep -a` on /dev/loop0), past its cover (and could have
 * written the disk, past every read-only mount), and wrote into the kernel's log (/dev/kmsg); a
 * user's own are their terminals in /dev/pts.
 */
const KEPT_DEVICES = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];
/**
 * The places of the namespace's own /proc that hold the kernel's settings, made read-only (as a
 * container runtime does). The command's user namespace was taken to refuse them, but as root it
 * maps root to root, and the kernel lets the global root user write /proc/sys from any namespace:
 * a confined `sh` of tacit run as root changed fs.lease-break-time on the host, and
 * kernel.core_pattern or kernel.modprobe name a program the kernel runs as root, unconfined. The
 * same user changed IRQ affinities (/proc/irq), PCI devices (/proc/bus) and file systems'
 * settings (/proc/fs). Each where it exists.
 */
const PROC_SETTINGS = ["/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/sysrq-trigger"];
/** The flags `unshare --mount-proc` gives the namespace's /proc, repeated by a remount of a place in it. */
const PROC_FLAGS = "nosuid,nodev,noexec,relatime";
/**
 * Where a confined command gets terminals of its own, for programs that make one (script, expect,
 * ssh -t): a new instance of devpts, whose ptmx is bound over /dev/ptmx; the host's /dev/pts, which
 * holds the user's terminals, is under it, nodev.
 */
const PTS = "/dev/pts";
const PTMX = "/dev/ptmx";
/** The source named by the new devpts's line: not the host's "devpts", which `mount -a` would take for the same mount, already made. */
const PTS_SOURCE = "tacit-devpts";

/**
 * The table's line that makes the mount at `point` read-only, and its device nodes unopenable (see
 * KEPT_DEVICES), keeping the flags `kept` names (see lockedFlags).
 */
function readOnlyNoDevicesLine(point: string, kept: LockedFlags): string {
  return `${REMOUNT_SOURCE} ${tableField(point)} none ${["remount,bind,ro,nodev", ...kept(point)].join(",")} 0 0`;
}

/** The flags a remount of what lies at a path must repeat (see lockedFlags). */
type LockedFlags = (point: string) => readonly string[];

/**
 * The per-mount flags a remount at a path must repeat: those of the mount it lies on, in tacit's
 * mount table (`mountinfo`), that the kernel locks on a mount a user namespace inherits: nosuid,
 * noexec and how access times are kept. `mount -a` remounts with exactly the flags its line
 * names, and a line that left out a locked one failed with EPERM: as a user who is not root, whose
 * confined namespace is such a user namespace, a host mount `ro,nosuid,nodev` refused every
 * confined command. As root nothing is locked, and the line cleared those flags: a nosuid mount
 * (a /tmp, a /dev/shm) took set-user-ID programs in the confined view; it keeps them now.
 */
function lockedFlags(mountinfo: string): LockedFlags {
  const flags = new Map<string, string[]>();
  for (const line of mountinfo.split("\n")) {
    const fields = line.split(" ");
    if (fields[4] === undefined || fields[5] === undefined) continue;
    const options = fields[5].split(",");
    const kept: string[] = options.filter((option) => option === "nosuid" || option === "noexec" || option === "noatime" || option === "nodiratime" || option === "relatime");
    // Neither noatime nor relatime: strictatime, which a remount names (its default is relatime).
    if (!options.includes("noatime") && !options.includes("relatime")) kept.push("strictatime");
    // A later line for the same point is a mount over the earlier one: the one in view.
    flags.set(mountPointsIn(line)[0]!, kept);
  }
  return (point) => {
    let best: string | null = null;
    for (const mountPoint of flags.keys()) {
      if ((point === mountPoint || isWithin(point, mountPoint)) && (best === null || mountPoint.length > best.length)) best = mountPoint;
    }
    return best === null ? [] : flags.get(best)!;
  };
}

/**
 * unshare's flags for the namespaces the command itself runs in, inside the confined one: a user
 * namespace, where the kernel locks the mounts it inherits (see lockFailure), its mount namespace,
 * and an IPC namespace, as the sandbox's (network-namespace.ts): without one a confined command
 * reached the System V shared memory of the user's other programs, which no mount covers (`ipcs -m
 * -i ID` showed a segment of mode 0600 that shmat would read and write), and a segment it made
 * outlived it.
 */
const COMMAND_NAMESPACES = `--user ${asTacitsOwnUser()} --mount --ipc`;

/**
 * unshare's flags that map the command's user and group in its own user namespace to tacit's
 * own: as root, root to root; as another user, that user to the root of the confined namespace
 * (see confinedNamespaceArgs), which is that user outside.
 */
function asTacitsOwnUser(): string {
  const uid = process.geteuid?.() ?? 0;
  const gid = process.getegid?.() ?? 0;
  return `--map-user=${uid} --map-group=${gid}`;
}

/**
 * The confined namespace's unshare arguments: the PID namespace's (see pid-namespace.ts), but one
 * made through a user namespace maps tacit's user to root there, not to itself. Its setup mounts
 * the covers, and mapped to itself it held no capability there: every confined command of a user
 * who is not root was refused ("could not mount a private /tmp"). The command itself runs as that
 * user again, in a user namespace of its own (COMMAND_NAMESPACES), with no capability over the
 * confined one: it cannot undo the mounts, nor trace the setup's shell, which holds them.
 */
function confinedNamespaceArgs(wrapper: NamespaceWrapper): string[] {
  return wrapper.namespaceArgs.map((arg) => (arg === MAP_CURRENT_USER ? "--map-root-user" : arg));
}

// The namespace's first process. Positional parameters: mount's path, the mount table, the
// working directory, whether /tmp is private, the SHA-256 of what
// \`stat\` says of the directories walked (see Walked), keyutils' keyctl or "" (see
// KEYCTL_CANDIDATES), how many directories to make in the private /tmp (roots under /tmp), those
// directories, then unshare's path, the command and its arguments.
// fd 5 is the lifeline (see lifeline.ts): tacit's answer waited for, then closed, first. fd 3 brings
// the walked directories' paths (NUL-separated), kept on fd 6; fd 4 is where a failure is reported
// (SETUP_FAILED), kept on fd 7 and closed before the command runs. Then fd 3 keeps the old /tmp
// (the roots under it are mounted back from there), fd 4 the working directory as opened, fd 5 the
// empty file and directory the masks are made of.
const SETUP = `${lifelineCheck(CONFINED_LIFELINE_FD)}
exec 7>&4 4>&- || exit ${SETUP_FAILED_STATUS}
fail() { printf '%s %s\\n' '${SETUP_FAILED}' "$1" >&7; exit ${SETUP_FAILED_STATUS}; }
m=$1 table=$2 cwd=$3 privtmp=$4 walked=$5 keyctl=$6 n=$7; shift 7
exec 6<&3 || fail "could not read the directories walked"
exec 3</tmp 4<. || fail "could not open /tmp or the working directory"
if [ "$privtmp" = 1 ]; then
  "$m" -t tmpfs -o mode=1777,nosuid,nodev tacit-tmp /tmp || fail "could not mount a private /tmp"
  d=/tmp/.tacit-confinement; /bin/mkdir -m 700 "$d" || fail "could not make $d"
else
  d=$(/bin/mktemp -d /tmp/tacit-confinement.XXXXXX) || fail "could not make a directory in /tmp"
fi
: > "$d/file" && /bin/mkdir "$d/dir" && printf '%s' "$table" > "$d/fstab" && exec 5<"$d" || fail "could not write the mount table in $d"
i=0
while [ "$i" -lt "$n" ]; do /bin/mkdir -p "$1" || fail "could not make $1 in the private /tmp"; shift; i=$((i+1)); done
unchanged() {
  seen=$(/usr/bin/xargs -0 -r /usr/bin/stat --printf '${WALKED_STAT}' -- <&6 2>/dev/null | /usr/bin/sha256sum) || fail "could not check the directories walked"
  exec 6<&-
  [ "\${seen%% *}" = "$walked" ]
}
out=$("$m" --no-canonicalize -v -a -T "$d/fstab" 2>&1) || { unchanged || fail "${CHANGED_DURING_SETUP}"; fail "$out"; }
case $out in *": ignored"*|*": already mounted"*) fail "a mount was skipped: $out";; esac
"$m" -o remount,bind,ro,nodev / || fail "could not make / read-only"
unchanged || fail "${CHANGED_DURING_SETUP}"
/bin/rm -rf "$d" || fail "could not remove $d"
exec 5<&-
cd -P "$cwd" || fail "could not enter the working directory $cwd"
[ . -ef /proc/self/fd/4 ] || fail "the working directory $cwd changed while confinement was set up"
exec 3<&- 4<&- 7>&-
[ -z "$keyctl" ] || "$keyctl" new_session >/dev/null 2>&1 || :
u=$1; shift
"$u" ${COMMAND_NAMESPACES} -- "$@"; exit $?`;

/** What confinement needs to know of the policy. */
export interface ConfinementSettings {
  /** Real paths of the allowed roots: the only places a command may write. */
  allowedRoots: readonly string[];
  classified: ClassifiedPaths;
  /** tacit's own files (fs/protected-paths.ts), covered like classified ones. */
  protectedPaths: readonly ProtectedPath[];
  /**
   * Every place a run of this user keeps tacit's home (tacit-home.ts, tacitHomes): one that does
   * not exist yet in a root is made before the command (see ownPlacesMade), so that it is covered.
   */
  tacitHomes: readonly string[];
  /**
   * The files tacit writes plaintext to later (the secure output, sink.file): one that does not
   * exist yet in a root is made, empty and owner-only, before the command (see ownPlacesMade).
   */
  tacitFiles: readonly string[];
  /**
   * The record directory (--record), which `tacit run` makes only when it writes the record, after
   * the script: one that does not exist yet in a root is made, owner-only, before the command (see
   * ownPlacesMade), as the Recorder would make it.
   */
  recordDirectory: string | null;
}

/**
 * A directory's classified entries and subdirectories, as listed when its change time was
 * `ctimeNs`. Any change of its entries (a file made, removed or renamed in it) sets the change
 * time, and no program can set it back (utimes sets it to now), so a listing whose directory has
 * the same change time, inode and device is still right. A command costs a stat per directory of
 * the roots instead of reading every directory: a walk of a 130,000-entry tree took seconds.
 */
interface Listing {
  ctimeNs: bigint;
  ino: bigint;
  dev: bigint;
  classified: string[];
  /** Git's configuration and hooks (and a `.git` file) here, made read-only (see gitControlOf). */
  gitControls: string[];
  /** node_modules/.bin/tacit here (isNpxTacitProgram): what `npx tacit` runs, kept as it is (see keep in masks). */
  npxPrograms: string[];
  /** Unix sockets, FIFOs and device nodes here, covered (see walkClassified). */
  opensWithEffect: string[];
  /** A git directory of the roots (see isRepository) that holds no `commondir`: one made here is removed after the command (see gitMovesUndone). */
  commondirMissing: boolean;
  /** package.json here: judged after the command, as the file API judges a write (see launch-manifests.ts). */
  manifests: string[];
  directories: string[];
  /** tacit could not list it (see listedEntries): covered whole, as nothing in it could be told apart. */
  unlistable: boolean;
  /**
   * Which entries named `.git` (in any case) it holds, by identity (see gitIdentity): one that is not
   * among them after the command is set aside (see new-repositories.ts).
   */
  gitEntries: string[];
  /** It is a repository's directory (see isRepository): one it becomes has its configuration and hooks set aside after the command. */
  repository: boolean;
  /** As a repository's directory, the identities (see gitIdentity) of its configuration, hooks and commondir. */
  controlEntries: string[];
}

/** Directory listings kept, per set of classified patterns, at most (then they are forgotten and read again). */
const LISTINGS_KEPT = 200_000;
const listingsByPatterns = new Map<string, Map<string, Listing>>();

/** A directory the walk listed, and what it was when listed (checked again once mounted: see wrap). */
interface Walked {
  dir: string;
  listing: Listing;
}

/** A change time as `stat --printf %.9Z` writes it: seconds, a dot, nine digits (a directory gone: never what stat writes). */
function nanoseconds(ns: bigint): string {
  if (ns < 0n) return "gone";
  return `${ns / 1_000_000_000n}.${(ns % 1_000_000_000n).toString().padStart(9, "0")}`;
}

/** `dir`'s lstat, or null where it is gone. */
function stampOf(dir: string): BigIntStats | null {
  try {
    return lstatSync(dir, { bigint: true });
  } catch {
    return null;
  }
}

/** A listing of nothing yet, made at `stamp` (null: the directory was gone, as no later stamp is). */
function emptyListing(stamp: BigIntStats | null): Listing {
  const { ctimeNs, ino, dev } = stamp ?? { ctimeNs: -1n, ino: -1n, dev: -1n };
  return { ctimeNs, ino, dev, classified: [], gitControls: [], npxPrograms: [], opensWithEffect: [], commondirMissing: false, manifests: [], directories: [], unlistable: false, gitEntries: [], repository: false, controlEntries: [] };
}

/** Whether `stamp` is the device, inode and change time `listing` was made at (gone: not, unless it was then). */
function sameStamp(stamp: BigIntStats | null, listing: Listing): boolean {
  return stamp === null ? listing.ctimeNs < 0n : stamp.ctimeNs === listing.ctimeNs && stamp.ino === listing.ino && stamp.dev === listing.dev;
}

/** Whether `p` is a character device (links followed). */
function isCharacterDevice(p: string): boolean {
  try {
    return statSync(p).isCharacterDevice();
  } catch {
    return false;
  }
}

/** Whether `real` is the null device: /dev/null, and a character device (a regular file there may hold what tacit wrote to it). */
function isNullDevice(real: string): boolean {
  if (real !== NULL_DEVICE) return false;
  try {
    return statSync(real).isCharacterDevice();
  } catch {
    return false;
  }
}

interface Mask {
  target: string;
  directory: boolean;
}

function entries(dir: string): Dirent[] {
  return listedEntries(dir) ?? [];
}

/**
 * `dir`'s entries; [] where it is gone (ENOENT, ENOTDIR: the setup's check of the walked directories
 * sees it changed), null where it is there but tacit may not list it (EACCES: mode 000, or a
 * directory one may enter but not list, 0711). Such a directory is no empty one to the command: it
 * runs as the same user, who may `chmod u+r` a directory of their own, and may open a name in one it
 * can enter without listing it. Taken for empty, its classified files were not covered: as a user
 * who is not root, a confined `sh -c 'chmod 700 locked; cat locked/.env'` printed the secret after
 * the script had made `locked` mode 000 with an earlier `chmod`.
 */
function listedEntries(dir: string): Dirent[] | null {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? [] : null;
  }
}

/**
 * Whether `p`, which could not be made, lies on a read-only file system: its nearest existing
 * directory does (access(2) says EROFS; mkdir -p itself says ENOENT there). The confined view keeps
 * it read-only (mounts below a root stay read-only there), so the command cannot make it either.
 * Not a directory tacit may not write (EACCES): the command runs with all capabilities over the
 * user's own files in its user namespace, so one of the user's with mode 0500 it can.
 */
function onReadOnlyFileSystem(p: string): boolean {
  let existing = path.dirname(p);
  while (realTarget(existing) === null && path.dirname(existing) !== existing) existing = path.dirname(existing);
  try {
    accessSync(existing, constants.W_OK);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EROFS";
  }
}

/** Where a path really leads and whether that is a directory, or null (a dead link, gone). */
function realTarget(p: string): { real: string; directory: boolean } | null {
  try {
    const real = realpathSync.native(p);
    return { real, directory: statSync(real).isDirectory() };
  } catch {
    return null;
  }
}

/** tacit's namespace's mount table (/proc/self/mountinfo), or "" where there is none (then / alone is made read-only). */
function mountInfo(): string {
  try {
    return readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return "";
  }
}

/** `dir` and each directory above it, up to `/`. */
function thisAndAbove(dir: string): string[] {
  const dirs: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    dirs.push(at);
    if (path.dirname(at) === at) return dirs;
  }
}

/** Most links followed resolving one path: the kernel's own limit (ELOOP past it). */
const MOST_LINKS = 40;

/**
 * The directory holding each symbolic link met resolving `named` (absolute) as the kernel does,
 * a link's target component by component (a link inside it counts too), up to where a component
 * is missing. `lookups` keeps what each path is (a link's target, null: no link, undefined: none)
 * for the call: the places resolved share most of their directories.
 */
function linkHolders(named: string, lookups: Map<string, string | null | undefined>): string[] {
  const lookup = (p: string): string | null | undefined => {
    if (!lookups.has(p)) {
      try {
        lookups.set(p, lstatSync(p).isSymbolicLink() ? readlinkSync(p) : null);
      } catch {
        lookups.set(p, undefined);
      }
    }
    return lookups.get(p);
  };
  const holders: string[] = [];
  const pending = path.resolve(named).split(path.sep).filter((part) => part !== "");
  let current: string = path.sep;
  let links = 0;
  for (let part = pending.shift(); part !== undefined; part = pending.shift()) {
    if (part === ".") continue;
    if (part === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    const link = lookup(next);
    if (link === undefined) break;
    if (link === null) {
      current = next;
      continue;
    }
    if (++links > MOST_LINKS) break;
    holders.push(current);
    if (path.isAbsolute(link)) current = path.sep;
    pending.unshift(...link.split(path.sep).filter((p) => p !== ""));
  }
  return holders;
}

/**
 * The refusal of a command where a link on the way to what must be kept as it is (tacit's code, a
 * launch file, what `npx tacit` runs) lies directly in an allowed root: a link cannot be made
 * read-only itself (mount follows it), only the directory holding it, and that is the root.
 */
function linkInRoot(command: string, named: string, what: string, root: string): EffectFailure {
  return new EffectFailure(
    `exec("${command}"): refused, nothing was run: ${named} (${what}) is reached through a symbolic link in the allowed root ${root}. ` +
      "Confined, the command could replace that link with one of its own, and tacit would then run, read or write what the new link " +
      "leads to, with the user's full authority; a link cannot be kept read-only by itself, only the directory holding it, which here is " +
      "the whole root. Replace the link with what it leads to (or move it into a subdirectory), or keep this directory out of the allowed roots",
  );
}

/**
 * The refusal of a command where tacit may not list a home directory that holds an allowed root or
 * the command's program (see masks): its hidden entries cannot be found to be covered, and the
 * command could open them by name.
 */
function unlistableHome(command: string, home: string): EffectFailure {
  return new EffectFailure(
    `exec("${command}"): refused, nothing was run: commands are confined (--confine-commands), but tacit may not list the home directory ` +
      `${home}, so it cannot find the hidden entries there (~/.ssh, ~/.aws, ~/.config, …) to cover them, and the command, which runs as ` +
      `you, could open them by name. Give the home directory's owner read permission on it (chmod u+r ${home}), or keep the allowed roots ` +
      "and the command's program out of it",
  );
}

/** What tacit runs at its next start, for linkInRoot. */
const WHAT_STARTS_TACIT = "it decides what tacit runs at its next start: tacit's own code, npm's or an MCP client's settings, or the program `npx tacit` runs";
const WHAT_AN_AGENT_RUNS = "an AI client runs it on its own: a file its hooks, status line or key helper name, or Cursor's hooks file";

export class CommandConfinement {
  private readonly roots: readonly string[];
  private readonly privateTmp: boolean;
  /** The allowed roots under /tmp, mounted back into the private one (one inside another left out). */
  private readonly tmpRoots: readonly string[];
  /** Listings of the directories walked, kept for the process (for these classified patterns). */
  private readonly listings: Map<string, Listing>;

  constructor(private readonly settings: ConfinementSettings) {
    const patterns = settings.classified.resolvedPatterns.join("\0");
    let listings = listingsByPatterns.get(patterns);
    if (listings === undefined) {
      if (listingsByPatterns.size >= 16) listingsByPatterns.clear();
      listings = new Map();
      listingsByPatterns.set(patterns, listings);
    }
    this.listings = listings;
    // A root inside another is mounted with it.
    const roots = [...new Set(settings.allowedRoots)];
    this.roots = roots.filter((root) => !roots.some((other) => other !== root && isWithin(root, other)));
    // /tmp is private unless it is a root itself: under `--allowed-roots /` as well, where the user's
    // sockets there (tmux, X11, an ssh agent) would let a command act outside its confinement. The
    // roots under it are mounted back (any, also those inside `/`).
    this.privateTmp = !this.roots.includes(TMP);
    const underTmp = roots.filter((root) => isWithin(root, TMP));
    this.tmpRoots = this.privateTmp ? underTmp.filter((root) => !underTmp.some((other) => other !== root && isWithin(root, other))) : [];
  }

  /** The roots the command may write in (a root inside another left out). */
  get allowedRoots(): readonly string[] {
    return this.roots;
  }

  /** Whether `p` can be seen in the confined view: not under the private /tmp, unless in a root. */
  private visible(p: string): boolean {
    return !this.privateTmp || !isWithin(p, TMP) || this.tmpRoots.some((root) => isWithin(p, root));
  }

  /**
   * Whether the confined view leaves `p` writable as part of an allowed root: seen there, in a root,
   * and not in one of the system's places that root only holds (`/` holds /usr: see SYSTEM_PLACES).
   */
  private grants(p: string): boolean {
    if (!this.visible(p)) return false;
    if (this.tmpRoots.some((root) => isWithin(p, root))) return true;
    return this.roots.some((root) => isWithin(p, root) && !SYSTEM_PLACES.some((place) => isWithin(p, place) && !isWithin(root, place)));
  }

  /**
   * A directory where tacit runs make their working directories (temp-dirs.ts: this run's TMPDIR
   * and /tmp, which runs without TMPDIR use) that the confined view leaves writable, or null. With
   * TMPDIR in a root, a confined `sh` could rewrite the files a type check of another run had just
   * written there, before its checker read them (a tsconfig.json with noEmit off and an outDir
   * anywhere, a .ts file of the name it wants): the checker, which runs unconfined, then writes a
   * file of the command's choosing outside the roots (dist/cli/main.js of tacit's own install, say).
   * Such a directory is made after the command starts, so no cover can be planned for it: the
   * command is refused instead, unless a cover of a whole directory (`masks`: TMPDIR in ~/.cache
   * with the home a root) hides it, and whatever is made in it later.
   */
  private exposedTempRoot(masks: readonly Mask[]): string | null {
    const covered = (root: string): boolean => masks.some((mask) => mask.directory && isWithin(root, mask.target));
    return tempRoots().find((root) => this.grants(root) && !covered(root)) ?? null;
  }

  /**
   * The program and arguments that run `program` confined, and what the child reads on its fd 3
   * (`walked`); its fd 4 is where its setup reports a failure (see setupFailure), and fd 5
   * (CONFINED_LIFELINE_FD) is its lifeline. Throws, saying why, where that cannot be.
   * The covers are planned from a walk and mounted later, by the child: a directory changed in
   * between (a confined command in another run moved a directory holding a .env into one already
   * listed and left a decoy .env at the old path) had the cover mounted on the decoy, the real file
   * readable. So the child, once everything is mounted, has `stat` say again what the walk saw of
   * every directory it listed (any change of a directory's entries moves its change time), and
   * gives up where anything differs.
   */
  wrap(
    wrapper: NamespaceWrapper | null,
    command: string,
    program: string,
    args: readonly string[],
    cwd: string,
  ): { program: string; args: string[]; walked: Buffer; changedSince: () => string | null; afterwards: () => string } {
    if (wrapper === null || !wrapper.ownProc) {
      throw refusal(
        command,
        wrapper === null ? "this host gives commands no PID and mount namespace" : "this host gives commands no mount namespace of their own",
        "run tacit where util-linux `unshare --mount --pid` works: as root, or with unprivileged user namespaces allowed (in a container, one allowed to call unshare)",
      );
    }
    const unlocked = lockFailure(wrapper);
    if (unlocked !== null) {
      throw refusal(
        command,
        `this host does not let the command run in a user, mount and IPC namespace of its own inside it (${unlocked}), which keeps it from undoing the mounts and from the System V IPC of your programs`,
        "run tacit where unprivileged user namespaces are allowed (sysctl user.max_user_namespaces above 0; in a container, one allowed to call unshare)",
      );
    }
    const mount = MOUNT_CANDIDATES.find(executable) ?? null;
    if (mount === null) throw refusal(command, "util-linux `mount` is not installed (/usr/bin/mount)", "install util-linux's mount");
    this.ownPlacesMade(command);
    const frozen = this.frozenHomes();
    let planned: ReturnType<CommandConfinement["masks"]>;
    try {
      planned = this.masks(command, program, frozen);
    } catch (error) {
      if (error instanceof NotUtf8Name) {
        throw refusal(
          command,
          `the allowed roots hold a name that is not UTF-8 (${printable(shownName(error.entry))} in ${printable(error.directory)}), which tacit ` +
            "cannot name, so it cannot find or cover the classified files in or under it",
          "rename it to a UTF-8 name (convmv, or mv with the shell's $'\\xNN' quoting), or keep that directory out of the allowed roots",
        );
      }
      if (!(error instanceof TooDeepToList)) throw error;
      throw refusal(
        command,
        `a directory in the allowed roots lies deeper than a path reaches (${PATH_MAX_BYTES} bytes, the system's limit: ` +
          `${printable(error.directory.slice(0, 120))}…), so tacit cannot list it to cover the classified files in it`,
        "move that directory nearer the top of its root, or keep it out of the allowed roots",
      );
    }
    const { masks, readOnly, pinned, walked, absentLaunchFiles, absentGitPlaces, absentHookFiles } = planned;
    const exposedTemp = this.exposedTempRoot(masks);
    if (exposedTemp !== null) {
      throw refusal(
        command,
        `tacit's temporary directory ${exposedTemp} lies in the allowed roots, where the command could write: there tacit's type ` +
          "checks keep the settings and the script the checker reads (it would write its output wherever rewritten settings said, " +
          "with your full authority) and sandboxes their input sockets, its own and those of every other tacit run",
        "set TMPDIR to a directory outside the allowed roots, and keep /tmp itself out of them (a root under /tmp is fine: " +
          "a confined command gets a /tmp of its own)",
      );
    }
    const hidden = masks.find((mask) => mask.directory && isWithin(cwd, mask.target));
    if (hidden) {
      throw new EffectFailure(
        `exec("${command}"): refused, nothing was run: its working directory ${cwd} is covered in the confined view (it is, or lies in, ` +
          `${hidden.target}: a classified path, a hidden entry of the home directory, tacit's own, or a directory tacit may not list, whose ` +
          "classified files it cannot find). Pass a cwd elsewhere in the allowed roots (or make that directory listable: chmod u+rx)",
      );
    }
    const table = this.table(masks, readOnly, pinned, frozen);
    const underTmp = this.tmpRoots;
    // What the child's `stat` says of the directories it can see: not those now covered whole.
    const checked = walked.filter(({ dir }) => this.visible(dir) && !masks.some((mask) => mask.directory && isWithin(dir, mask.target)));
    // Git directories without a commondir, where the command could make one (see gitMovesUndone).
    const gitDirectories = checked.filter(({ listing }) => listing.commondirMissing).map(({ dir }) => dir);
    // The package.json files `npx tacit` would read: in the directories of the roots (a package of a
    // monorepo; not the packages in node_modules, where no client starts it), and where tacit and
    // the command start and above, one that does not exist yet too (see launch-manifests.ts).
    const manifests = [
      ...checked.filter(({ dir }) => !dir.split(path.sep).includes("node_modules")).flatMap(({ listing }) => listing.manifests),
      ...[process.cwd(), cwd].flatMap((start) => thisAndAbove(start)).filter((dir) => this.grants(dir)).map((dir) => path.join(dir, "package.json")),
    ];
    const manifestsAfter = watchLaunchManifests(manifests);
    const gitAfter = gitMovesUndone(gitDirectories);
    const gitPlacesAfter = gitPlacesUndone(absentGitPlaces);
    const launchAfter = launchFilesUndone(absentLaunchFiles);
    const hooksAfter = hookFilesUndone(absentHookFiles);
    const changedSinceWalk = ({ dir, listing }: { dir: string; listing: Listing }): boolean => !sameStamp(stampOf(dir), listing);
    const repositoriesAfter = newRepositoriesSetAside(
      checked.map((walked) => ({ dir: walked.dir, changed: () => changedSinceWalk(walked), gits: walked.listing.gitEntries, wasRepository: walked.listing.repository, controls: walked.listing.controlEntries })),
    );
    const expected = createHash("sha256")
      .update(checked.map(({ listing }) => `${listing.dev} ${listing.ino} ${nanoseconds(listing.ctimeNs)}\n`).join(""))
      .digest("hex");
    return {
      walked: Buffer.from(checked.map(({ dir }) => `${dir}\0`).join("")),
      // For the refusal, where the setup found the roots changed: a directory that has changed since the walk.
      changedSince: () => checked.find(changedSinceWalk)?.dir ?? null,
      // Each on its own: one that threw (a stat of a path the command made unreachable) ended tacit
      // before the next ran, and the .git the command made was left for the user's next git status.
      afterwards: () => [gitAfter, gitPlacesAfter, launchAfter, hooksAfter, manifestsAfter, repositoriesAfter].map(undoneOrNoted).join(""),
      program: wrapper.program,
      args: [
        ...confinedNamespaceArgs(wrapper),
        SHELL,
        "-c",
        SETUP,
        "tacit-exec",
        mount,
        table,
        cwd,
        this.privateTmp ? "1" : "0",
        expected,
        // A new, empty session keyring for the command (best effort, as the sandbox's: see
        // KEYCTL_CANDIDATES): it kept tacit's, and a confined `keyctl print` read a key it held.
        KEYCTL_CANDIDATES.find(executable) ?? "",
        String(underTmp.length),
        ...underTmp,
        wrapper.program,
        program,
        ...args,
      ],
    };
  }

  /**
   * Makes each of tacit's homes (owner-only) and the files it writes plaintext to that does not
   * exist yet where the command could make it: in a root, seen by the command. A cover is a mount
   * on a path that exists, so a missing one was no cover at all:
   * - with the home directory the root and no ~/.config yet, a confined `sh` made
   *   ~/.config/tacit/approvals.json, and the next run took the approvals it held as a person's,
   *   deleting a file its policy says a person must approve;
   * - a command that started before the secure output was first written (a classified value
   *   printed just before, still being computed) waited for the file and printed the plaintext
   *   tacit appended there to its own output, which the script gets;
   * - with --record in the root, a confined `sh` made the record directory a link to a directory
   *   outside the roots, where `tacit run` then wrote the record (it makes the directory after the
   *   script), or made it with a record file of its own, whose forged first lines tacit continued.
   * tacit would make them at its first remembered approval or key, its first classified print, or
   * the end of the run (the record), anyway; here they are made before the walk, which then finds them (and ~/.config) and covers
   * them. Throws where one cannot be made (a dangling link there, a file in the way).
   * The secure output is made wherever it is, not only in a root: a confined command reads what lies
   * outside the roots, and one outside them, not made yet as the command started, was not covered
   * (the second case above: a confined `sh` printed the plaintext tacit appended there).
   */
  private ownPlacesMade(command: string): void {
    const makeable = (p: string): boolean => this.grants(p) && realTarget(p) === null;
    const unmade = (p: string, what: string): EffectFailure =>
      new EffectFailure(
        `exec("${command}"): refused, nothing was run: ${what} ${p} does not exist and could not be made, and it lies in the allowed roots, ` +
          `where the command could make it itself (and plant or read what tacit keeps there). Remove what is in the way at ${p} (a dangling ` +
          "link, a file where a directory belongs), or keep tacit's files outside the allowed roots",
      );
    const recordDirectory = this.settings.recordDirectory === null ? null : path.resolve(this.settings.recordDirectory);
    const directories = [
      ...this.settings.tacitHomes.map((dir) => ({ dir, what: "tacit's home (remembered approvals, the audit signing key)" })),
      ...(recordDirectory === null ? [] : [{ dir: recordDirectory, what: RECORD_DIRECTORY_WHAT }]),
    ];
    for (const { dir, what } of directories) {
      if (!makeable(dir)) continue;
      if (dir === recordDirectory) {
        // Made as the Recorder makes it, and noted as tacit's, so that the run records into it (record-directory.ts).
        if (prepareRecordDirectory(dir) !== null && onReadOnlyFileSystem(dir)) continue;
      } else {
        try {
          mkdirSync(dir, { recursive: true, mode: 0o700 });
        } catch {
          if (onReadOnlyFileSystem(dir)) continue;
        }
      }
      if (realTarget(dir)?.directory !== true) throw unmade(dir, what);
    }
    for (const file of this.settings.tacitFiles.map((named) => path.resolve(named))) {
      if (realTarget(file) !== null) continue;
      try {
        // As the secure output makes it, in its directory as tacit first found that.
        new SecureSink(file).makeNow();
      } catch (error) {
        if (isSinkRefusal(error)) throw new EffectFailure(`exec("${command}"): refused, nothing was run: ${error.message}`);
        if (onReadOnlyFileSystem(file)) continue;
      }
      if (realTarget(file) !== null) continue;
      if (this.grants(file)) throw unmade(file, "the secure output (--secure-output, plaintext)");
      throw new EffectFailure(
        `exec("${command}"): refused, nothing was run: the secure output ${file} (--secure-output, plaintext) does not exist and could not be made, ` +
          "and a confined command reads what lies outside the allowed roots: it could read the plaintext tacit appends there once tacit makes it. " +
          "Make the secure output's directory writable (or give --secure-output a file that exists)",
      );
    }
  }

  /**
   * The directories between a root and each of `kept` (git's controls and the rest kept read-only,
   * tacit's own files), parents first: each
   * is bound on itself, a mount point, which the command cannot rename (EBUSY). Left movable, a
   * confined `sh` ran `mv .git .git-old`, made a new .git of the old one's objects, refs and
   * HEAD with a config of its own (core.fsmonitor) and a pre-commit hook, and the user's next
   * git status and commit ran both, unconfined.
   */
  private pins(kept: readonly string[]): string[] {
    const pins = new Set<string>();
    for (const control of kept) {
      // The innermost root holding it: one under the private /tmp is mounted back inside `/`.
      const root = [...this.tmpRoots, ...this.roots].find((candidate) => isWithin(control, candidate));
      if (root === undefined) continue;
      for (let dir = path.dirname(control); dir !== root && isWithin(dir, root); dir = path.dirname(dir)) pins.add(dir);
    }
    return [...pins].sort((a, b) => a.split(path.sep).length - b.split(path.sep).length);
  }

  /**
   * The mount table the setup applies, in order: the roots, read-only mounts, the directories
   * holding git's controls (and the rest kept read-only) and tacit's own files (`pinned`), those
   * controls, then the masks.
   */
  private table(masks: readonly Mask[], readOnly: readonly string[], pinned: readonly string[], frozen: readonly string[]): string {
    const lines: string[] = [];
    // What is a mount point already is not bound on itself again: `mount -a` skips that ("already
    // mounted"), which the setup takes as a failure, and a mount point cannot be renamed anyway (a
    // node_modules on a volume of its own, as devcontainers make it, refused every confined command).
    const table = mountInfo();
    const points = mountPointsIn(table);
    const kept = lockedFlags(table);
    const mounted = new Set(points);
    // A place bound on itself once: `mount -a` skips a second bind of it ("already mounted").
    const bound = new Set<string>();
    const bindItself = (p: string, how: "bind" | "rbind"): void => {
      if (mounted.has(p) || bound.has(p)) return;
      bound.add(p);
      lines.push(`${tableField(p)} ${tableField(p)} none ${how} 0 0`);
    };
    // The devices a command may open, bound on themselves before anything is made nodev (see KEPT_DEVICES).
    for (const device of KEPT_DEVICES) if (isCharacterDevice(device)) bindItself(device, "bind");
    // The roots but `/`, which the namespace's / is already (`mount -a` ignores a line for /, and the
    // setup took that for a failure: `--allowed-roots /` refused every command), and those under /tmp.
    for (const root of [...this.roots, ...this.tmpRoots.filter((root) => !this.roots.includes(root))]) {
      if (root === SLASH) continue;
      const source = this.privateTmp && isWithin(root, TMP) ? path.join("/proc/self/fd/3", path.relative(TMP, root)) : root;
      lines.push(`${tableField(source)} ${tableField(root)} none rbind 0 0`);
    }
    // `/` a root: its top level is read-only like a home's (see frozenHomes; the setup remounts /),
    // each entry bound on itself with what is mounted below it, writable but for the system's places
    // (see SYSTEM_PLACES, made read-only below): nothing can be made, removed or renamed at the top,
    // so /lib64, which names the loader of every program, stays the link it is.
    if (this.roots.includes(SLASH)) {
      for (const entry of entries(SLASH)) {
        const full = path.join(SLASH, entry.name);
        if (entry.isSymbolicLink() || full === PROC || (this.privateTmp && full === TMP)) continue;
        bindItself(full, "rbind");
      }
    }
    // A home in the roots: each entry bound on itself (writable, as in the root), then the home
    // carried along with them (rbind) and made read-only, that mount alone (see frozenHomes). An
    // entry that is a mount of its own is left as it is by the home's remount; a home that is one
    // is remounted.
    for (const home of frozen) {
      for (const entry of entries(home)) {
        if (!entry.isSymbolicLink()) bindItself(path.join(home, entry.name), "bind");
      }
      bindItself(home, "rbind");
      lines.push(readOnlyNoDevicesLine(home, kept));
    }
    const readOnlyMounts = this.readOnlyMounts(points);
    for (const point of readOnlyMounts) lines.push(readOnlyNoDevicesLine(point, kept));
    // The kernel's settings in the namespace's own /proc (see PROC_SETTINGS), bound on themselves there.
    for (const place of PROC_SETTINGS.filter((p) => existsSync(p))) {
      lines.push(`${tableField(place)} ${tableField(place)} none bind 0 0`);
      lines.push(`${REMOUNT_SOURCE} ${tableField(place)} none remount,bind,ro,${PROC_FLAGS} 0 0`);
    }
    for (const pin of this.pins([...readOnly, ...pinned])) bindItself(pin, "rbind");
    for (const file of readOnly) {
      bindItself(file, "bind");
      lines.push(readOnlyNoDevicesLine(file, kept));
    }
    for (const mask of masks) {
      lines.push(`/proc/self/fd/5/${mask.directory ? "dir" : "file"} ${tableField(mask.target)} none bind 0 0`);
      lines.push(readOnlyNoDevicesLine(mask.target, kept));
    }
    // Terminals of its own (see PTS), mounted over the host's once that is nodev: a line after the
    // remounts, which would otherwise make the new one read-only and nodev too.
    if (isDirectory(PTS) && !this.grants(PTS)) {
      lines.push(`${PTS_SOURCE} ${PTS} devpts newinstance,ptmxmode=0666,mode=0620,nosuid,noexec 0 0`);
      lines.push(`${PTS}/ptmx ${PTMX} none bind 0 0`);
    }
    return `${lines.join("\n")}\n`;
  }

  /**
   * The home directories (homes(): HOME's and the password database's, where they really are) that
   * lie in an allowed root, whose top level is made read-only in the confined view (see table): each
   * entry in it stays as writable as before, but none can be made, removed or renamed there. The
   * hidden entries that exist are covered, but one that does not exist cannot be, and the shells and
   * tools make them with the user's full authority: started in the home, a confined `sh` wrote
   * ~/.bash_profile (read at login, before ~/.profile) and ~/.zshenv, and `git config --global` made
   * ~/.gitconfig with core.fsmonitor; the user's next login shell and git status ran them, unconfined.
   * (tacit's file API refuses scripts the same, home-config.ts.) Not a refusal: tacit started in the
   * home makes it the default root.
   */
  private frozenHomes(): string[] {
    const found = new Set<string>();
    for (const home of homes()) {
      const target = realTarget(home);
      if (target?.directory && this.grants(target.real)) found.add(target.real);
    }
    return [...found];
  }

  /** The mounts of tacit's namespace made read-only (/ apart: `mount -a` skips it, the setup does it). */
  private readOnlyMounts(mountPoints: readonly string[]): string[] {
    const points = mountPoints.filter(
      (point) =>
        point !== "/" &&
        !KEPT_DEVICES.includes(point) &&
        !isWithin(point, PROC) &&
        !(this.privateTmp && isWithin(point, TMP)) &&
        !this.grants(point),
    );
    // Not /proc, the namespace's own: the nested user namespace is made through it (uid_map), and
    // other processes' files there the nested namespace refuses; its kernel settings are made
    // read-only apart (see PROC_SETTINGS), which root's nested namespace does not refuse.
    return [...new Set(points)];
  }

  /** What is covered with an empty read-only file or directory (none inside another). */
  private masks(
    command: string,
    program: string,
    frozen: readonly string[],
  ): { masks: Mask[]; readOnly: string[]; pinned: string[]; walked: Walked[]; absentLaunchFiles: string[]; absentGitPlaces: string[]; absentHookFiles: string[] } {
    const found = new Map<string, boolean>();
    /** Covers `p` where it really is, and returns that place (null: nothing covered). */
    const add = (p: string): string | null => {
      const target = realTarget(p);
      if (target === null || !this.visible(target.real) || target.real === "/" || isNullDevice(target.real)) return null;
      found.set(target.real, target.directory);
      return target.real;
    };
    const realProgram = realTarget(program)?.real ?? program;
    // Git's configuration and hooks in the roots: git runs what they name with the user's full
    // authority, unconfined, at the user's next git command (a confined `sh` wrote a pre-commit
    // hook and `git config core.fsmonitor`, and the user's next git status and commit ran them).
    const readOnly = (p: string): void => {
      if (this.grants(p)) kept.add(p);
    };
    const kept = new Set<string>();
    // A place kept read-only as named, not only where it leads: the file it really is, and the
    // directory holding each link on the way to it (a link cannot be a mount point).
    const lookups = new Map<string, string | null | undefined>();
    const holdLinks = (named: string, what: string): void => {
      for (const holder of linkHolders(named, lookups)) {
        // A home in the roots has a read-only top level already: its links cannot be replaced.
        if (frozen.includes(holder) || (holder === SLASH && this.roots.includes(SLASH))) continue;
        if (this.roots.includes(holder)) throw linkInRoot(command, named, what, holder);
        readOnly(holder);
      }
    };
    const keep = (named: string, what: string = WHAT_STARTS_TACIT): void => {
      const target = realTarget(named);
      if (target !== null) readOnly(target.real);
      holdLinks(named, what);
    };
    // The system's places a root holds (`/`): read-only, as they are under any other root.
    for (const place of SYSTEM_PLACES) {
      const target = realTarget(place);
      if (target?.directory && this.roots.some((root) => root !== target.real && isWithin(target.real, root))) kept.add(target.real);
    }
    const listed: Walked[] = [];
    const walked: string[] = [...this.roots];
    for (const home of homes()) {
      // Its hidden entries are covered as listed here: checked like a walked directory (one made
      // meanwhile, another process's ~/.aws, was not covered). Stamped before it is listed.
      const real = realTarget(home)?.real;
      const stamp = real === undefined ? null : stampOf(real);
      if (real !== undefined && stamp !== null) listed.push({ dir: real, listing: emptyListing(stamp) });
      const homeEntries = listedEntries(home);
      if (homeEntries === null) {
        // One tacit's user may enter but not list (mode 0100, 0311) hid its hidden entries from
        // tacit, not from the command, which runs as that user: a confined `cat ~/.ssh/id_rsa` read
        // the key by its name. Covered whole; where it holds what the command needs, refused.
        const inside = (p: string): boolean => isWithin(p, home) || (real !== undefined && isWithin(p, real));
        if (this.roots.some(inside) || inside(program) || inside(realProgram)) throw unlistableHome(command, home);
        add(home);
        continue;
      }
      for (const entry of homeEntries) {
        if (!entry.name.startsWith(".")) continue;
        const full = path.join(home, entry.name);
        const holdsWhatRuns = this.roots.some((root) => isWithin(root, full)) || isWithin(program, full) || isWithin(realProgram, full);
        if (holdsWhatRuns && entry.isDirectory()) walked.push(full);
        else add(full);
      }
    }
    // The user's runtime directory: the sockets of the session's daemons, which act for whoever
    // connects, outside the confinement (a Unix socket on a read-only mount still takes connections:
    // a confined `node` reached one there and had it act). systemd's user manager and the session
    // bus there start any command they are asked to (`systemd-run --user`), unconfined; gpg-agent
    // and the keyring's ssh agent sign with the user's keys. Not where it holds a root or the program.
    for (const dir of runtimeDirectories()) {
      const holdsWhatRuns = this.roots.some((root) => isWithin(root, dir)) || isWithin(program, dir) || isWithin(realProgram, dir);
      if (!holdsWhatRuns) add(dir);
    }
    const covered = (p: string): boolean => [...found].some(([mask, directory]) => directory && isWithin(p, mask));
    for (const top of walked) {
      // A root inside a classified directory is classified all through: covered whole.
      if (this.settings.classified.matches(top)) add(top);
      else this.walkClassified(top, add, covered, readOnly, keep, listed);
    }
    // What the configuration of each repository found in the roots names outside its .git (the
    // hooks directory core.hooksPath names, husky's `.husky/_` and the scripts it runs in `.husky`,
    // an included file, a program a setting runs): git runs or reads it with the user's full
    // authority, unconfined, as it does .git/hooks. A confined `sh` appended a line to the
    // `.husky/pre-commit` of a project, and the user's next `git commit` ran it.
    /**
     * Notes in `absent` what the command would make for `file` (missing, or the end of links that
     * lead nowhere: see missingEnd), where a root grants it: removed if the command makes it.
     */
    const undoIfMade = (file: string, absent: string[]): void => {
      const end = missingEnd(file);
      if (end !== null && this.grants(end)) absent.push(end);
    };
    const absentGitPlaces: string[] = [];
    for (const { dir, listing } of listed) {
      if (!listing.commondirMissing) continue;
      // Its own hooks directory and configuration, where there is none (a repository made without
      // hooks), a bare one's too (by its shape): a confined `sh` moved back the hooks tacit had set
      // aside in a bare repository an earlier command made (new-repositories.ts), and the user's
      // next `git push` to it ran its pre-receive, unconfined.
      for (const own of ["hooks", "config"].map((name) => path.join(dir, name))) if (!lexists(own) && this.grants(own)) absentGitPlaces.push(own);
      if (path.basename(dir).toLowerCase() !== ".git") continue;
      for (const place of configuredPlacesOf(path.dirname(dir))) {
        const target = realTarget(place);
        if (target !== null) readOnly(target.real);
        // One that does not exist cannot be kept: removed if the command makes it (see gitPlacesUndone),
        // where a link that leads nowhere ends too (see missingEnd).
        else {
          undoIfMade(place, absentGitPlaces);
        }
        holdLinks(place, "git runs or reads it with the user's full authority, unconfined, at the user's next git command");
      }
    }
    for (const pattern of this.settings.classified.resolvedPatterns) {
      if (pattern.startsWith("/") && !GLOB_CHAR.test(pattern)) add(pattern);
    }
    // tacit's own code in the roots (a project that has tacit as a dependency, its packages, the
    // V8 code cache tacit compiles its bundle with): tacit runs it with the user's full authority,
    // unconfined, at its next start. A confined `sh` appended a line to
    // node_modules/tacit/dist/bundle/code-cache.cjs, and the next `tacit --version` ran it.
    for (const location of tacitCodeLocations()) keep(location);
    // And the code of another tacit that `npx tacit` runs from the start directory (paths.ts, npxTacitCodeLocations).
    for (const location of npxTacitCodeLocations()) keep(location);
    // And the files that decide how tacit starts (launch-files.ts: an MCP client's settings that
    // hold tacit's command and flags, npm's configuration), read-only to scripts for that reason:
    // a confined `sed -i` rewrote the project's .mcp.json to give the next `tacit serve`
    // `--allowed-roots / --command-permissions *`.
    // One that does not exist cannot be kept: removed if the command makes it (see launchFilesUndone).
    const absentLaunchFiles: string[] = [];
    for (const file of tacitLaunchFiles()) {
      keep(file);
      undoIfMade(file, absentLaunchFiles);
    }
    // And the files an AI client runs on its own (fs/agent-hooks.ts: the scripts its hooks, status
    // line and key helper name, Cursor's hooks files), read-only to scripts for that reason: a
    // confined `sh` rewrote the project's .claude/hooks/format.sh, which Claude Code runs after
    // each MCP tool call, tacit's too, with the user's full authority, unconfined.
    // One that does not exist cannot be kept: removed if the command makes it (see hookFilesUndone).
    const absentHookFiles: string[] = [];
    for (const file of agentHookFiles()) {
      keep(file, WHAT_AN_AGENT_RUNS);
      undoIfMade(file, absentHookFiles);
    }
    // And what `npx tacit` runs (node_modules/.bin/tacit, the link npm makes, or a shim): found by
    // the walk in every directory of the roots (npx started there or below runs it), and in tacit's
    // start directory and each above it, where npx looks first (a .bin that is a link is not walked).
    // A confined `sh` ran `ln -sfn ../../payload.js node_modules/.bin/tacit`, and the user's next
    // `npx tacit` ran payload.js, unconfined; so did a rewritten shim, and a workspace's
    // node_modules/tacit link replaced by a directory of its own.
    for (const bin of npxTacitPrograms()) {
      keep(bin);
      if (!lexists(bin) && this.grants(bin)) absentLaunchFiles.push(bin);
    }
    // tacit's own files, covered, and kept where tacit looks for them by name: the directories on the
    // way are pinned (see pins) and those holding a link on the way made read-only. Left movable, a
    // confined `sh` ran `mv logs logs-old && mkdir logs && echo 1 > logs/audit.jsonl.lock` (the covers
    // moved with the directory), and the next run with that --audit-log found the log gone and a lock
    // held by process 1; the same rename put a file of the command's where the secure output or
    // tacit's home was looked for.
    const own: string[] = [];
    for (const file of this.settings.protectedPaths) {
      if (file.readable || isWithin(file.path, PROC)) continue;
      const covered = add(file.path);
      if (covered !== null) own.push(covered);
      holdLinks(file.path, file.what);
    }
    const masks = [...found].map(([target, directory]) => ({ target, directory }));
    const covering = (p: string, self: string | null): boolean => masks.some((other) => other.directory && other.target !== self && isWithin(p, other.target));
    return {
      masks: masks.filter((mask) => !covering(mask.target, mask.target)),
      readOnly: [...kept].filter((p) => !covering(p, null)).filter((p, _, all) => !all.some((other) => other !== p && isWithin(p, other))),
      pinned: [
        ...own.filter((p) => !covering(p, p)),
        // And the directories on the way to a file an AI client runs that does not exist yet, as to
        // one that does (see pins): left movable, a confined `sh` renamed .claude/hooks away and
        // linked it to a directory of its own holding the missing script, which tacit would not
        // remove through a directory that led elsewhere, and the client's next hook ran it.
        ...absentHookFiles.map((file) => firstMissing(path.dirname(file))?.path ?? file).filter((p) => !covering(p, null)),
      ],
      walked: listed,
      absentLaunchFiles,
      absentGitPlaces,
      absentHookFiles,
    };
  }

  /** The classified entries below `dir` (not entering them, nor links, nor what is covered already). */
  private walkClassified(
    dir: string,
    add: (p: string) => void,
    covered: (p: string) => boolean,
    readOnly: (p: string) => void,
    keep: (named: string) => void,
    listed: Walked[],
  ): void {
    const pending = [dir];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      // Past the system's limit a path names nothing: the directory can be neither listed nor covered,
      // but a command reaches it by steps (cd into each). Its stat failed as if it were gone, and the
      // setup's check of the walked directories then told of roots changed by another process.
      if (Buffer.byteLength(next) >= PATH_MAX_BYTES) throw new TooDeepToList(next);
      // Not what the command cannot write (the system's places under `/`, like what lies outside the
      // roots; the private /tmp hides the rest of /tmp), nor /proc, the namespace's own.
      if (covered(next) || !this.grants(next) || next === PROC) continue;
      const listing = this.listing(next);
      listed.push({ dir: next, listing });
      // What it holds cannot be told apart: covered whole, fail closed (see listedEntries).
      if (listing.unlistable) {
        add(next);
        continue;
      }
      for (const classified of listing.classified) add(classified);
      // A Unix socket is a door to the process listening on it, which acts for whoever connects
      // (a docker.sock, an ssh agent's, a database's); so is a FIFO to the process reading it, and a
      // device node to the device (the roots are not nodev): their file's bytes are nothing, and
      // neither a read-only mount nor the roots' being writable says anything of what is behind
      // them (the file API refuses to open them for that reason: fs/checked-open.ts,
      // opensWithEffect). A confined `node` connected to a socket in the root and had its server act
      // on what it sent, wrote a line into a FIFO a shell loop outside read commands from, and read
      // a device node placed in the root (run as root, the disk's past every cover). Covered like a
      // classified file, each names an empty read-only file: connect(2) fails (ECONNREFUSED), a
      // write fails (EROFS), a read ends at once. The command's own, made once it runs, are its own.
      for (const door of listing.opensWithEffect) add(door);
      for (const control of listing.gitControls) readOnly(control);
      for (const program of listing.npxPrograms) keep(program);
      for (const directory of listing.directories) pending.push(directory);
    }
  }

  /** What `dir` holds, from the listings kept while the directory's change time, inode and device are the same. */
  private listing(dir: string): Listing {
    const stamp = stampOf(dir);
    if (stamp === null) return emptyListing(null);
    const kept = this.listings.get(dir);
    if (kept && sameStamp(stamp, kept)) return kept;
    const listing = emptyListing(stamp);
    const found = listedEntries(dir);
    // A name that is not UTF-8 is read back with U+FFFD in its place: a path that leads elsewhere
    // (to nothing, or to a directory made with that name), so what the real one holds went uncovered.
    // A confined `sh` renamed a directory holding a .env to "\xff" beside an empty "\uFFFD", and the
    // next one read the .env. Such a name cannot be given to mount either: the command is refused.
    if (found !== null && mayHoldNotUtf8(found)) {
      const name = notUtf8Name(dir);
      if (name !== null) throw new NotUtf8Name(dir, name);
    }
    listing.unlistable = found === null;
    const names = new Set((found ?? []).map((entry) => entry.name.toLowerCase()));
    const repository = isRepository(dir, names);
    listing.repository = repository;
    if (repository) listing.controlEntries = (found ?? []).filter((entry) => REPOSITORY_CONTROLS.has(entry.name.toLowerCase())).flatMap((entry) => gitIdentity(path.join(dir, entry.name)) ?? []);
    listing.commondirMissing = repository && !names.has(COMMONDIR);
    listing.gitEntries = (found ?? []).filter((entry) => entry.name.toLowerCase() === ".git").flatMap((entry) => gitIdentity(path.join(dir, entry.name)) ?? []);
    for (const entry of found ?? []) {
      const full = path.join(dir, entry.name);
      if (this.settings.classified.matchesExactly(full, entry.name)) listing.classified.push(full);
      // A repository's configuration, hooks and commondir (which names where they are) wherever it is, a bare one's too: kept as they are.
      else if (repository && REPOSITORY_CONTROLS.has(entry.name.toLowerCase()) && !entry.isSymbolicLink()) {
        listing.gitControls.push(full);
        // Walked too, so that a classified file in it is covered (a directory that only looks like a repository's).
        if (entry.isDirectory()) listing.directories.push(full);
      }
      // A .git directory is entered (its objects and index stay writable); its config and hooks are not.
      else if (!(entry.isDirectory() && entry.name.toLowerCase() === ".git") && !entry.isSymbolicLink() && gitControlOf(full) !== null) {
        listing.gitControls.push(full);
        if (entry.isDirectory()) listing.directories.push(full);
      }
      else if (entry.isDirectory()) listing.directories.push(full);
      if (isNpxTacitProgram(full)) listing.npxPrograms.push(full);
      if (entry.name.toLowerCase() === "package.json") listing.manifests.push(full);
      if (entry.isSocket() || entry.isFIFO() || ((entry.isCharacterDevice() || entry.isBlockDevice()) && !KEPT_DEVICES.includes(full))) listing.opensWithEffect.push(full);
    }
    if (this.listings.size >= LISTINGS_KEPT) this.listings.clear();
    this.listings.set(dir, listing);
    return listing;
  }
}

/** What `undo` (one of a confined command's checks once it has ended) says; where it throws, a note that says so. */
function undoneOrNoted(undo: () => string): string {
  try {
    return undo();
  } catch (error) {
    return `\n[tacit: a check of what the command left failed (${printable((error as Error).message)}): look for what it made in the allowed roots (a .git, an .npmrc, a hook's script) before you run git, npx or an AI client there]\n`;
  }
}

/** Removes `made`, a command's, in a directory the command may have made unwritable to its owner (see inOwnersDirectory). */
function removeMade(made: string): void {
  inOwnersDirectory(made, () => rmSync(made, { recursive: true, force: true }));
}

/** Whether there is anything at `p` (a dead link counts). */
function lexists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * What a command would make for `file` to name a file of its own: `file`, where there is nothing;
 * where it is a link that leads nowhere, the path its links end at (a hook's
 * `.claude/hooks/format.sh` linked to `../../scripts/format.sh`, not built yet: a confined `sh`
 * wrote scripts/format.sh, and the client's next hook ran it); null where it leads to a file.
 */
function missingEnd(file: string): string | null {
  let at = file;
  for (let hops = 0; hops < 40; hops++) {
    if (!lexists(at)) return at;
    let link: string;
    try {
      link = readlinkSync(at);
    } catch {
      return null; // Not a link: there is a file.
    }
    at = path.resolve(path.dirname(at), link);
  }
  return null;
}

/** Where `dir` really leads, by its nearest existing directory (a dead end, null). */
function realDirectory(dir: string): string | null {
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      return path.join(realpathSync.native(at), path.relative(at, dir));
    } catch {
      if (path.dirname(at) === at) return null;
    }
  }
}

/**
 * The first of `dir` and the directories above it that does not exist, below the nearest that
 * does, with where that one really leads; null where `dir` exists (or nothing on the way does).
 */
function firstMissing(dir: string): { path: string; parent: string } | null {
  for (let at = dir; path.dirname(at) !== at; at = path.dirname(at)) {
    if (lexists(at)) return null;
    if (!lexists(path.dirname(at))) continue;
    const parent = realDirectory(path.dirname(at));
    return parent === null ? null : { path: at, parent };
  }
  return null;
}

/**
 * Of `paths`, none of which existed as the command started, what to remove once it has ended: a
 * check that removes each it made, where its directory leads where it led then (never through a
 * directory the command swapped for a link to elsewhere), and says so for the command's stderr:
 * "the command made <what it removed, or could not, saying why>, <why>" ("" where it made none).
 */
function madeRemover(paths: readonly string[], why: string): () => string {
  const before = paths.map((p) => ({ p, dir: realDirectory(path.dirname(p)), made: firstMissing(path.dirname(p)) }));
  return () => {
    const removed: string[] = [];
    for (const { p, dir, made } of before) {
      if (!lexists(p)) continue;
      const shown = printable(p);
      if (dir === null || realDirectory(path.dirname(p)) !== dir) {
        // A directory on the way that did not exist, which the command made a link to elsewhere (a
        // hook's `.claude/hooks` linked to a directory of its own holding the script): that link is
        // removed, where the directory holding it still leads where it led. Left, the client ran the
        // script through it.
        if (made !== null && realDirectory(path.dirname(made.path)) === made.parent) {
          try {
            removeMade(made.path);
            removed.push(`${shown} (through ${printable(made.path)}, which it made and tacit removed)`);
          } catch (error) {
            removed.push(`${shown} (could not be removed: ${printable((error as Error).message)}; remove ${printable(made.path)} yourself)`);
          }
          continue;
        }
        removed.push(`${shown} (not removed: its directory now leads elsewhere; remove it yourself)`);
        continue;
      }
      try {
        removeMade(p);
        removed.push(shown);
      } catch (error) {
        removed.push(`${shown} (could not be removed: ${printable((error as Error).message)}; remove it yourself)`);
      }
    }
    return removed.length === 0 ? "" : `\n[tacit: the command made ${removed.join(", ")}, ${why}]\n`;
  };
}

/**
 * Removes the `commondir` a confined command made in a git directory of the roots that had none
 * (`dirs`), and says so for the command's stderr ("" where there was none). A commondir names the
 * directory git reads the repository's configuration and hooks from: a confined `sh` wrote
 * `.git/commondir` naming a directory of its own holding objects, refs and a config with
 * core.fsmonitor, and the user's next `git status` ran that, unconfined, past the read-only
 * `.git/config` and hooks. A name that does not exist cannot be covered, and `.git` stays writable
 * (git makes its lock files and renames them there), so it is undone once the command has ended.
 */
export function gitMovesUndone(dirs: readonly string[]): () => string {
  return madeRemover(
    dirs.map((dir) => path.join(dir, COMMONDIR)),
    "which moves git's configuration and hooks to another directory, and git would run the commands named there, unconfined, " +
      "at the user's next git command; tacit removed it. A confined command may not change git's configuration: ask the user to",
  );
}

/**
 * Removes what a confined command made, where there was none, of the places a repository's
 * configuration names outside its .git (`absent`: a hooks directory core.hooksPath names, a hook
 * manager's configuration, an included file, a program a setting runs; see configuredPlacesOf),
 * and says so. Those that exist are kept read-only, a missing one cannot be covered: a confined
 * `sh` made the missing `.githooks/pre-commit` of a repository whose core.hooksPath named it, and
 * the user's next git commit ran it, unconfined.
 */
function gitPlacesUndone(absent: readonly string[]): () => string {
  return madeRemover(
    absent,
    "which a repository's git configuration names as hooks, configuration or a program to run, and git would run it, unconfined, " +
      "at the user's next git command; tacit removed it. A confined command may not change what git runs: ask the user to",
  );
}

/**
 * Removes the files that decide how tacit starts (launch-files.ts: npm's and yarn's configuration,
 * the MCP clients' project settings, what `npx tacit` runs) that a confined command made where
 * there was none (`absent`), and says so. Those that exist are kept read-only (see keep in masks),
 * but a missing one cannot be covered: a confined `sh` wrote an .npmrc whose node-options loads a
 * file of its own into the next `npx tacit`, with the user's full authority.
 */
function launchFilesUndone(absent: readonly string[]): () => string {
  return madeRemover(
    absent,
    "which decides how tacit starts next (npm's configuration, an MCP client's settings, or the program `npx tacit` runs), with " +
      "the user's full authority; tacit removed it. A confined command may not make these: ask the user to",
  );
}

/**
 * Removes the files an AI client runs on its own (fs/agent-hooks.ts) that a confined command made
 * where there was none (`absent`), and says so. Those that exist are kept read-only, but a missing
 * one cannot be covered: a hook's script not written yet would run, as the command wrote it, at
 * the client's next tool call.
 */
function hookFilesUndone(absent: readonly string[]): () => string {
  return madeRemover(
    absent,
    "which an AI client (Claude Code, Gemini CLI, Cursor) runs on its own, as its settings name it (a hook around its next tool call, " +
      "tacit's included, its status line, its key helper), with the user's full authority; tacit removed it. A confined command may not " +
      "make these: ask the user to",
  );
}

/**
 * The user's runtime directories, where the session's daemons keep their sockets: the one
 * XDG_RUNTIME_DIR names, and /run/user/UID, where logind makes it.
 */
function runtimeDirectories(): string[] {
  const dirs = new Set<string>();
  const uid = process.getuid?.();
  if (uid !== undefined) dirs.add(`/run/user/${uid}`);
  const named = process.env.XDG_RUNTIME_DIR;
  if (named !== undefined && path.isAbsolute(named)) dirs.add(path.resolve(named));
  return [...dirs];
}

/** The longest path the system takes, in bytes, its terminating NUL included (Linux's PATH_MAX). */
const PATH_MAX_BYTES = 4096;

/** The first name in `dir` that is not UTF-8, or null (none, or `dir` gone: the setup's check of the walk sees that). */
function notUtf8Name(dir: string): Buffer | null {
  try {
    return notUtf8Names(dir)[0] ?? null;
  } catch {
    return null;
  }
}

/** The walk met a name that is not UTF-8 (see listing). */
class NotUtf8Name extends Error {
  constructor(
    readonly directory: string,
    readonly entry: Buffer,
  ) {
    super(`a name that is not UTF-8 in ${directory}`);
  }

}

/** The walk met a directory whose path is too long to list (see walkClassified). */
class TooDeepToList extends Error {
  constructor(readonly directory: string) {
    super(`too deep to list: ${directory}`);
  }
}

/**
 * The confined commands running in this process: the command, its allowed roots, and when it was
 * about to start (Date.now(), before its view was made; see confinedCommandOver).
 */
const running = new Set<{ command: string; roots: readonly string[]; startedAtMs: number }>();

/**
 * Marks a confined command as running in `roots` until the returned function is called. Its
 * view was made when it started: a classified file made since, in its roots, is not covered there.
 * `startedAtMs`: Date.now() taken before it was spawned.
 */
export function confinedCommandRunning(command: string, roots: readonly string[], startedAtMs: number): () => void {
  const entry = { command, roots, startedAtMs };
  running.add(entry);
  return () => running.delete(entry);
}

/**
 * How long before a command's start a file's change time counts as after it: the kernel stamps
 * files from a clock read at its last tick (some milliseconds behind Date.now()), and a second
 * more refuses little.
 */
const CHANGE_TIME_SLACK_MS = 1000;

/**
 * A confined command running in this process whose roots hold `real` and whose view may show the
 * file there, or null (see confinedCommandRunning). `existing`: the file at `real` now, or
 * undefined. Its view covers the classified files there were when it started; a file made since
 * (by anyone, the command included) it is not covered from, and neither is one put at its name
 * since, renamed or linked there (each changes the file's change time): a confined `sh` made
 * src/.env.copy, another session's writeClassified filled it (a classified file "that exists"),
 * and the command printed the secret. Nor one below a directory made or renamed there since, up to
 * the root (renaming a directory changes its change time, not its files'): a confined `sh` renamed
 * src/data, not classified when it started and so not covered, to src/.aws, another session's
 * writeClassified filled src/.aws/credentials (changed long before), and the command printed it.
 */
export function confinedCommandOver(real: string, existing?: { ctimeMs: number }): string | null {
  for (const entry of running) {
    const root = entry.roots.find((candidate) => isWithin(real, candidate));
    if (root === undefined) continue;
    const since = entry.startedAtMs - CHANGE_TIME_SLACK_MS;
    if (existing === undefined || existing.ctimeMs >= since) return entry.command;
    // The directories between the root and the file: one renamed (or made) since changed then.
    for (let dir = path.dirname(real); dir !== root && isWithin(dir, root); dir = path.dirname(dir)) {
      const stats = lstatSync(dir, { throwIfNoEntry: false });
      if (stats === undefined || stats.ctimeMs >= since) return entry.command;
    }
  }
  return null;
}

let lockProbe: { failure: string | null } | undefined;

/**
 * Why the command cannot run in a user, mount and IPC namespace of its own, nested in the confined
 * one, or null (found once per process). It must: a command runs there with all capabilities over
 * the confined namespace (as root, or in the user namespace the wrapper made), and
 * `umount .env` or `mount -o remount,bind,rw /` undid the confinement (shown through the CLI with
 * `sh` allowed). In a mount namespace owned by a new user namespace the kernel locks every mount
 * it inherits: none can be unmounted to show what it covers, nor made writable again.
 */
function lockFailure(wrapper: NamespaceWrapper): string | null {
  if (lockProbe === undefined) {
    const probe = spawnSync(
      wrapper.program,
      [...confinedNamespaceArgs(wrapper), SHELL, "-c", `"$1" ${COMMAND_NAMESPACES} -- /bin/sh -c "exit 0"`, "tacit-exec", wrapper.program],
      { encoding: "utf8", timeout: 5000 },
    );
    lockProbe = { failure: probe.status === 0 ? null : (probe.stderr || probe.error?.message || `unshare --user exited ${probe.status}`).trim() };
  }
  return lockProbe.failure;
}

/** The refusal of a command confinement cannot be set up for: nothing was run. */
function refusal(command: string, why: string, what: string): EffectFailure {
  return new EffectFailure(
    `exec("${command}"): refused, nothing was run: commands are confined (--confine-commands, config libraryConfig.confineCommands), ` +
      `but ${why}. To run commands, ${what}; or have the operator drop --confine-commands, so that allowed commands run with the user's full authority`,
  );
}

/**
 * The setup gave up, the command not run, because a directory the walk listed changed before the
 * covers were mounted (a file made, removed or renamed there by another process). Nothing was
 * loosened: the executor plans the covers anew from the roots as they are now and sets them up
 * again, at most SETUP_ATTEMPTS times in all (each attempt checked the same way), and only then is
 * the command refused (see refusedAfter). A run beside a build or another tacit run was refused
 * where a file it was to cover was merely removed meanwhile.
 */
export class RootsChangedDuringSetup extends EffectFailure {
  constructor(
    private readonly command: string,
    /** A directory that had changed since the walk when the setup gave up, or null (changed back, or found unchanged by then). */
    readonly changed: string | null,
  ) {
    super(rootsChangedMessage(command, 1, changed));
  }

  /** The refusal after `attempts` setups in a row each found the roots changed. */
  refusedAfter(attempts: number): EffectFailure {
    return new EffectFailure(rootsChangedMessage(this.command, attempts, this.changed));
  }
}

function rootsChangedMessage(command: string, attempts: number, changed: string | null): string {
  const times = attempts === 1 ? "" : `, ${attempts} times in a row (the covers were planned anew from the roots each time)`;
  return (
    `exec("${command}"): refused, nothing was run: commands are confined (--confine-commands, config libraryConfig.confineCommands), ` +
    `but the allowed roots changed while it was set up${times}: a directory listed to find the classified paths or the home's hidden ` +
    `entries${changed === null ? "" : ` (${changed})`} had entries made, removed or renamed (by another command or process) before their ` +
    "covers were mounted, so a cover could be missing. Run the command again once nothing else is moving files in the allowed roots (a " +
    "build, another tacit run), or keep such busy directories out of the allowed roots; or have the operator drop --confine-commands, so " +
    "that allowed commands run with the user's full authority"
  );
}

/**
 * The refusal of a command whose confinement failed to set up (the child's status, and what its
 * setup reported on its fd 4: see SETUP_FAILED), or null when it ran: a RootsChangedDuringSetup
 * where the roots changed meanwhile (`changedSince` names a directory that did, see wrap).
 */
export function setupFailure(command: string, exitCode: number, setupReport: string, changedSince: () => string | null = () => null): EffectFailure | null {
  const at = setupReport.lastIndexOf(SETUP_FAILED);
  if (exitCode !== SETUP_FAILED_STATUS || at === -1) return null;
  const reason = setupReport.slice(at + SETUP_FAILED.length).trim();
  if (reason === CHANGED_DURING_SETUP) return new RootsChangedDuringSetup(command, changedSince());
  return refusal(
    command,
    `its confinement could not be set up (${reason})`,
    "fix what the reason names (a mount that fails: a path the allowed roots or classified paths name), or run tacit where mounts in a user namespace work",
  );
}
