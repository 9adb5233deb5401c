// Opening files so that a path swapped between the check and the use cannot redirect the
// operation. Every open is checked again afterwards against what the descriptor really
// refers to (/proc/self/fd on Linux). Anything that creates or removes an entry does it
// through a directory descriptor verified the same way, named as /proc/self/fd/N/name: the
// kernel resolves that from the opened directory itself, however its path changes later.

import { type BigIntStats, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, realpathSync, statSync, type Stats } from "node:fs";
import path from "node:path";

/**
 * This process's descriptor directory in /proc, named by the process id: /proc/self is a link
 * the kernel resolves again on every path through it, which a search of thousands of files
 * pays per file. The id is read from that link, so it is the one this /proc mount knows the
 * process by; it cannot change, nor name another process, while this one runs.
 */
export const procFdDirectory: string = (() => {
  try {
    return `/proc/${readlinkSync("/proc/self")}/fd`;
  } catch {
    return "/proc/self/fd";
  }
})();

/** Whether /proc names this process's descriptors: where it does, a descriptor it cannot name leads past PATH_MAX (see checkablePath). */
export const procNamesDescriptors: boolean = lstatSync(procFdDirectory, { throwIfNoEntry: false })?.isDirectory() === true;

/** What a descriptor really refers to; null where the system cannot say (no /proc). */
export function openedPath(fd: number): string | null {
  try {
    return readlinkSync(`${procFdDirectory}/${fd}`);
  } catch {
    return null;
  }
}

/**
 * Where an opened file or directory really is, for a check: openedPath, but refused where /proc
 * is there and cannot say, because the path is longer than the kernel reports (ENAMETOOLONG). A
 * path opened by a name of at most PATH_MAX leads that far only if a directory on the way was
 * swapped for a link since it was resolved: taken as the path resolved, the checks passed a
 * descriptor that a swapped directory had led into a classified file or out of the scope, as
 * deep as a command can make a tree. `fallback`: where there is no /proc (as before).
 */
export function checkablePath(fd: number, fallback: string): string {
  try {
    return readlinkSync(`${procFdDirectory}/${fd}`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENAMETOOLONG") throw new UncheckablePlaceError();
    return fallback;
  }
}

/** A descriptor that leads where /proc cannot tell (see checkablePath). */
export class UncheckablePlaceError extends Error {
  override name = "UncheckablePlaceError";
  constructor() {
    super("the path changed while it was being opened and now leads to a place too deep for the system to name, which tacit cannot check");
  }
}

export class NotRegularFileError extends Error {
  override name = "NotRegularFileError";
}

/** The refusal of a FIFO, socket or device a read found before opening it. */
const NOT_REGULAR = "not a regular file (a FIFO, socket or device); nothing was opened or read. Read a regular file";

/**
 * Whether `stats` (an lstat, undefined for a missing entry) is a FIFO, socket or device, whose
 * open is an effect of its own: read or written, such a file is refused before it is opened.
 */
export function opensWithEffect(stats: Stats | undefined): boolean {
  return stats !== undefined && (stats.isFIFO() || stats.isSocket() || stats.isCharacterDevice() || stats.isBlockDevice());
}

/**
 * Opens an existing file for reading without blocking (a FIFO would wait for a writer) and
 * without following a final link; refuses anything but a regular file. A FIFO, socket or device
 * is refused before it is opened, on an lstat of the name: opening one is an effect of its own (it
 * woke a process blocked opening the FIFO's other end, and a device's open can reset or arm the
 * hardware). One swapped in between the look and the open is still refused on what was opened.
 * `verify` gets the real opened path and throws if it is not acceptable. Returns the descriptor
 * and what fstat told of it (its size; its device and inode, for a caller that tells files apart).
 */
export function openForReading(real: string, verify: (actual: string) => void): { fd: number; stats: Stats } {
  // Missing: the open below fails with its own error, as it did.
  if (opensWithEffect(lstatSync(real, { throwIfNoEntry: false }))) throw new NotRegularFileError(NOT_REGULAR);
  const fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    verify(checkablePath(fd, real));
    const stats = fstatSync(fd);
    if (stats.isDirectory()) throw new NotRegularFileError("is a directory");
    if (!stats.isFile()) throw new NotRegularFileError("not a regular file (a FIFO, socket or device); nothing was read. Read a regular file");
    return { fd, stats };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Linux's O_PATH (Node does not export it): a descriptor that only names a directory, opened
 * with no permission on it but search (x) on the way, as a lookup in it needs. Opened to read
 * instead, a directory the user may write and enter but not list (mode -wx, a drop box) could
 * not be opened at all, so nothing could be created in it (nor could an approved command run in
 * it, exec/executor.ts). Its value is 010000000 on every architecture Node runs on but alpha,
 * parisc and sparc (asm-generic/fcntl.h), which keep O_RDONLY.
 */
export const O_PATH_FLAG =
  process.platform === "linux" && ["x64", "arm64", "arm", "ia32", "ppc64", "s390x", "riscv64", "loong64"].includes(process.arch)
    ? 0o10000000
    : constants.O_RDONLY;

/**
 * Runs `op` with a path naming the directory `realDir` as opened and verified: `verify`
 * receives where the directory really is. `op` gets "/proc/<pid>/fd/N" (or `realDir` itself
 * where there is no /proc) and the verified real location. With `finalLink` "refuse", a link
 * at `realDir` itself is not followed: the open fails (ELOOP) without looking where it leads.
 * `purpose` "list" opens it to read (a directory that cannot be listed fails the open, EACCES);
 * "look-up" (for names in it: opening, making, removing, looking at an entry) opens it as a
 * path only (O_PATH), which needs no read permission on it.
 */
export function inVerifiedDirectory<T>(
  realDir: string,
  verify: (actualDir: string) => void,
  op: (dir: string, actualDir: string) => T,
  finalLink: "follow" | "refuse" = "follow",
  purpose: "list" | "look-up" = "look-up",
): T {
  const access = purpose === "list" ? constants.O_RDONLY : O_PATH_FLAG;
  const fd = openSync(realDir, access | constants.O_DIRECTORY | (finalLink === "refuse" ? constants.O_NOFOLLOW : 0));
  try {
    const actual = checkablePath(fd, "");
    verify(actual || realDir);
    return op(actual === "" ? realDir : `${procFdDirectory}/${fd}`, actual || realDir);
  } finally {
    closeSync(fd);
  }
}

/**
 * The directory a file of tacit's own lies in is not the one tacit resolved: a directory on the way
 * (or the directory itself) was replaced by a link, or moved, since. `found` says what is there now:
 * where the directory opened really is, or, when its own name is no directory any more (a link,
 * which was not followed, or a file), what it is.
 */
export class DirectoryChangedError extends Error {
  override name = "DirectoryChangedError";
  constructor(
    readonly expected: string,
    readonly found: { directory: string } | { not: "a symbolic link" | "not a directory" },
  ) {
    super(`the directory ${expected} changed: ${DirectoryChangedError.describe(expected, found)}`);
  }

  /** What is at `expected` now, in words: "/a/b now leads to /x", "/a/b is now a symbolic link". */
  static describe(expected: string, found: DirectoryChangedError["found"]): string {
    if ("directory" in found) return `${expected} now leads to ${found.directory}`;
    return found.not === "a symbolic link" ? `${expected} is now a symbolic link` : `${expected} is no longer a directory`;
  }
}

/**
 * Runs `op` in the directory whose real path is `realDir`, as opened (without following a link at
 * its own name) and checked to really be at `realDir`: else DirectoryChangedError, and `op` does
 * not run. `op` gets the opened directory's path (/proc/<pid>/fd/N; `realDir` without /proc),
 * through which a name is looked up in that directory itself, as openat would (Node has none), so
 * a directory on the way swapped for a link after the check leads nowhere else either.
 */
function inDirectoryResolvedAs<T>(realDir: string, op: (dir: string) => T): T {
  try {
    return inVerifiedDirectory(
      realDir,
      (actual) => {
        if (actual !== realDir) throw new DirectoryChangedError(realDir, { directory: actual });
      },
      op,
      "refuse",
    );
  } catch (error) {
    // The directory itself could not be opened as one (not an entry of it, whose path runs through
    // /proc): a link at its own name, not followed (ENOTDIR, as O_DIRECTORY is checked first; ELOOP),
    // or a file or a link on the way (ENOTDIR). What it was resolved to was a directory: it changed.
    const e = error as NodeJS.ErrnoException;
    if ((e.code === "ELOOP" || e.code === "ENOTDIR") && e.syscall === "open" && e.path === realDir) {
      const link = lstatSync(realDir, { throwIfNoEntry: false })?.isSymbolicLink() === true;
      throw new DirectoryChangedError(realDir, { not: link ? "a symbolic link" : "not a directory" });
    }
    throw error;
  }
}

function assertSingleName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/")) throw new Error(`${JSON.stringify(name)} is not a single name`);
}

/**
 * Opens (with O_CREAT in `flags`, creates) the entry `name` of the directory whose real path is
 * `realDir`, through that directory as opened and checked (inDirectoryResolvedAs): if it is not
 * there any more, DirectoryChangedError, and nothing is opened or created. Checking the file's
 * path after opening it came too late for a file the open created: it already existed wherever
 * the link led. A link at `name` is not followed (O_NOFOLLOW, ELOOP). `check` runs on the opened
 * directory (its descriptor path) before the entry is opened, for what the caller knows of it
 * besides its path (which directory it is). Without /proc, the directory is opened by its path and
 * only `check` tells.
 */
export function openInVerifiedDirectory(realDir: string, name: string, flags: number, mode: number, check: (dir: string) => void = () => undefined): number {
  assertSingleName(name);
  return inDirectoryResolvedAs(realDir, (dir) => {
    check(dir);
    return openSync(path.join(dir, name), flags | constants.O_NOFOLLOW, mode);
  });
}

/**
 * Makes the directories `names`, each inside the one before, under the directory whose real path
 * is `realDir`: each in its parent as opened and checked (inDirectoryResolvedAs), so none is made
 * where a link put on the way leads. One that exists already is kept if it is a directory there
 * (a link there, or a file, is refused when it is opened to make the next, or by the caller's
 * open). Returns the real path of the last (`realDir` for none).
 */
export function makeDirectoriesInVerified(realDir: string, names: readonly string[], mode: number): string {
  let current = realDir;
  for (const name of names) {
    assertSingleName(name);
    inDirectoryResolvedAs(current, (dir) => {
      try {
        mkdirSync(path.join(dir, name), mode);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    });
    current = path.join(current, name);
  }
  return current;
}

/** The stat of the directory whose real path is `realDir`, as opened and checked there (inDirectoryResolvedAs). */
export function statVerifiedDirectory(realDir: string): BigIntStats {
  return inDirectoryResolvedAs(realDir, (dir) => statSync(dir, { bigint: true }));
}

/**
 * Where a directory that may not exist yet would be: the real path of `dir`, or of the nearest
 * directory above it that exists, and the names missing below that, outermost first (made with
 * makeDirectoriesInVerified). Null where that cannot be told (a file where a directory belongs, or an
 * unreadable directory on the way): making it by its path then fails with what is in the way.
 */
export function nearestExistingDirectory(dir: string): { real: string; missing: string[] } | null {
  const missing: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    try {
      const real = realpathSync(at);
      return statSync(real).isDirectory() ? { real, missing } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || path.dirname(at) === at) return null;
      missing.unshift(path.basename(at));
    }
  }
}

/**
 * What `real` is (its lstat), looked up in its parent directory as opened and verified, or
 * the directory itself when `real` is `top` (the scope's root, whose parent is outside it):
 * a parent swapped for a link between the check and the look cannot lead it elsewhere (a
 * security review read the size of a classified file and of one outside the scope that
 * way). `verify` receives where the entry really is. A final link is not followed: the
 * caller resolved every link, so one there now was swapped in. Null where the directory has
 * no entry of that name: Node builds an error for it (a few µs, most of an `exists` of a
 * missing file), which nothing here needs.
 */
export function statInVerifiedDirectory(real: string, top: string, verify: (actual: string) => void): Stats | null {
  if (real === top) return inVerifiedDirectory(real, verify, (dir) => lstatSync(`${dir}/.`));
  const name = path.basename(real);
  return inVerifiedDirectory(path.dirname(real), () => undefined, (dir, actualDir) => {
    verify(path.join(actualDir, name));
    return lstatSync(path.join(dir, name), { throwIfNoEntry: false }) ?? null;
  });
}

/** A path through this process's descriptors: /proc/<pid>/fd/N[/name] or /proc/self/fd/N[/name]. */
const DESCRIPTOR_PATH = /\/proc\/(?:\d+|self|thread-self)\/(?:task\/\d+\/)?fd\/\d+(?:\/[^\s',"]*)?/g;

/**
 * What went wrong in `error` (a system error of an operation on `requested`), in words that
 * name no host-internal path: Node's message names the path the call was given, which under a
 * verified directory is /proc/<tacit's pid>/fd/N/name ("ETXTBSY: text file is busy, open
 * '/proc/17264/fd/20/busy'"), telling a script the host's pid and how it opens files. The
 * description stays, the path goes (the caller names the path the script gave), and any
 * descriptor path left is replaced by `requested`.
 */
export function hostFreeErrorText(error: unknown, requested: string): string {
  const e = error as NodeJS.ErrnoException;
  let text = typeof e?.message === "string" ? e.message : String(error);
  if (typeof e?.code === "string") {
    if (text.startsWith(`${e.code}: `)) text = text.slice(e.code.length + 2);
    const call = typeof e.syscall === "string" ? text.lastIndexOf(`, ${e.syscall}`) : -1;
    if (call >= 0) text = text.slice(0, call);
    text = `${text} (${e.code})`;
  }
  return text.replace(DESCRIPTOR_PATH, requested);
}
