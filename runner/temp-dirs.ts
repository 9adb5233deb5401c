// tacit's own working directories under the system's temporary directory: where a type check
// writes the script, its settings and (tacit serve's checker) the launcher it starts the
// checker with. A script whose allowed roots hold the temporary directory could otherwise
// rewrite another run's settings or launcher before the checker reads or runs them: this run's
// temporary directory and the default one, which runs started without TMPDIR use.

import { mkdtempSync, readdirSync } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { isWithin, namedAndReal } from "./fs/containment.js";
import { CHANNEL_DIR_PREFIX } from "./sandbox-input.js";

/** One-shot type checks (typecheck.ts), and tacit serve's incremental checker (incremental-typecheck.ts). */
const KINDS = ["tacit-check-", "tacit-checker-"] as const;
export type TempDirKind = (typeof KINDS)[number];
/**
 * Every directory tacit makes there: also the one of a sandbox's input socket (sandbox-input.ts),
 * which lives from the sandbox's start until the host has connected. A script that removed it
 * meanwhile would end that sandbox (a warm spare of tacit serve's, say).
 */
const PREFIXES = [...KINDS, CHANNEL_DIR_PREFIX];

/**
 * A new owner-only directory of this kind under the temporary directory, its name holding this
 * process's pid (`tacit-check-<pid>-XXXXXX`) so that a later tacit can tell it was left behind
 * (sweepLeftDirs). The first one a process makes starts that sweep.
 */
export function makeTempDir(kind: TempDirKind): string {
  const dir = mkdtempSync(path.join(tmpdir(), `${kind}${process.pid}-`));
  sweepLeftDirs();
  return dir;
}

/**
 * A directory makeTempDir or a sandbox's input (sandbox-input.ts) made: the prefix, the maker's
 * pid, mkdtemp's six characters.
 */
const MADE_NAME = new RegExp(`^(?:${PREFIXES.join("|")})([1-9][0-9]{0,9})-[A-Za-z0-9]{6}$`);
/**
 * How old a left directory must be to be removed. Its maker being dead is not enough alone: a
 * tacit in another pid namespace that shares this temporary directory (a container given the
 * host's /tmp) has a pid that means nothing here, and a check directory lives as long as its check.
 */
const LEFT_FOR_MS = 60 * 60 * 1000;
let sweepStarted = false;

/**
 * Removes, in the background and once per process, the check directories of tacits that ended
 * without their exit hooks (killed outright: SIGKILL, the OOM killer, an MCP client's hard stop),
 * which nothing else would ever remove, and the input directories of sandboxes such a tacit had
 * just started: those of this user, named (MADE_NAME) for a pid that is no longer running,
 * untouched for an hour. Failures are ignored: a directory left is only litter.
 */
function sweepLeftDirs(): void {
  if (sweepStarted || process.platform === "win32") return;
  sweepStarted = true;
  const uid = process.getuid?.();
  const root = tmpdir();
  const removeIfLeft = async (name: string): Promise<void> => {
    const pid = Number(MADE_NAME.exec(name)?.[1] ?? 0);
    if (pid === 0 || pid === process.pid || isRunning(pid)) return;
    const dir = path.join(root, name);
    const stats = await lstat(dir);
    if (!stats.isDirectory() || stats.uid !== uid || Date.now() - stats.mtimeMs < LEFT_FOR_MS) return;
    // Not followed if it has become a link meanwhile: rm takes the link itself.
    await rm(dir, { recursive: true, force: true });
  };
  void readdir(root)
    .then((names) => Promise.all(names.map((name) => removeIfLeft(name).catch(() => undefined))))
    .catch(() => undefined);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: running, as another user.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

let roots: string[] | undefined;
/** What a path in one of tacit's directories starts with, under each root. */
let starts: string[] | undefined;

/**
 * Where a run whose environment has no TMPDIR makes its directories (os.tmpdir() on Unix): a run
 * with TMPDIR set elsewhere refused its scripts only its own temporary directory's, so a script
 * whose roots held /tmp rewrote the checker settings of a tacit serve started without it.
 */
const DEFAULT_TMP = "/tmp";

/** This run's temporary directory and the default one (DEFAULT_TMP), each as named and as it really is. */
export function tempRoots(): string[] {
  if (!roots) {
    const named = process.platform === "win32" ? [path.resolve(tmpdir())] : [path.resolve(tmpdir()), DEFAULT_TMP];
    roots = namedAndReal(named);
  }
  return roots;
}

const isTacitDirName = (name: string): boolean => PREFIXES.some((prefix) => name.startsWith(prefix));

/** The tacit working directory that `candidate` (absolute and normalized, as the executors' paths are) is or lies in, or null. */
export function tacitTempDirOf(candidate: string): string | null {
  // A few startsWith turn away any other path (this runs on every file operation).
  starts ??= tempRoots().flatMap((root) => PREFIXES.map((prefix) => path.join(root, prefix)));
  if (!starts.some((start) => candidate.startsWith(start))) return null;
  for (const root of tempRoots()) {
    if (candidate === root || !isWithin(candidate, root)) continue;
    const name = path.relative(root, candidate).split(path.sep)[0]!;
    if (isTacitDirName(name)) return path.join(root, name);
  }
  return null;
}

/** A tacit working directory that exists now below `candidate` (which would remove it), or null. */
export function tacitTempDirBelow(candidate: string): string | null {
  for (const root of tempRoots()) {
    if (!isWithin(root, candidate)) continue;
    let names: string[];
    try {
      names = readdirSync(root);
    } catch {
      continue;
    }
    const found = names.find(isTacitDirName);
    if (found !== undefined) return path.join(root, found);
  }
  return null;
}

/** Where tacit's directories are made: each root (as named and as it really is) with each name prefix. */
export function tempDirPlaces(): Array<{ root: string; prefix: string }> {
  return tempRoots().flatMap((root) => PREFIXES.map((prefix) => ({ root, prefix })));
}
