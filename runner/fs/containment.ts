// Where a path really leads, and whether that is inside a root. Containment is decided on
// fully resolved paths (symlinks followed, dead ones included) and by whole path components,
// never by string prefix: /work/app_evil is not inside /work/app.

import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { caseFolded } from "./case-folding.js";
import { procMounts } from "./proc-mounts.js";

const MAX_LINK_HOPS = 40;

export class PathResolutionError extends Error {
  override name = "PathResolutionError";
}

/**
 * A path whose resolution met more links than MAX_LINK_HOPS: a loop, or a chain too long. Its
 * words name no path: the one being resolved when the count ran out is where a link leads, often
 * outside the scope, which a script is never told ("too many symbolic links resolving
 * /outside/loop/a" named a link's target that no other answer names). The caller names the path
 * the script gave.
 */
function tooManyLinks(): PathResolutionError {
  return new PathResolutionError(`too many symbolic links (a loop of links, or a chain of more than ${MAX_LINK_HOPS}); use another path, or remove the link (delete() removes a link, not what it leads to)`);
}

/**
 * A link on the way leads outside the bounds the path was resolved within (a file-system scope's
 * root, or the allowed roots), and resolving on from there failed. Its words say nothing of what
 * failed: a loop out there said "too many symbolic links", an unsearchable directory "permission
 * denied", anything else there "outside the scope", which told a script one thing about the
 * outside per link it made. The caller refuses it as it refuses any path that leads outside.
 */
export class LeadsOutside extends PathResolutionError {
  override name = "LeadsOutside";
  constructor() {
    super("a symbolic link on the way leads outside the bounds it was resolved within");
  }
}

/**
 * Whether a place is inside the bounds a path is resolved within: an error met on the way past a
 * link that leads out of them is LeadsOutside, whatever it was. Null: no bounds (the host's own
 * names, matched as they resolve).
 */
export type InsideBounds = ((place: string) => boolean) | null;

/** Bounds of one real directory (a scope's real root). */
export function insideOf(realRoot: string): InsideBounds {
  return (place) => isWithin(place, realRoot);
}

/** A link on the way was swapped in and out again and again while the path was being resolved. */
export class PathKeptChanging extends PathResolutionError {
  override name = "PathKeptChanging";
}

/** A "." or ".." component of a POSIX path. */
const DOT_COMPONENT = /\/\.\.?(?:\/|$)/;

/**
 * path.resolve(`p`), without its work when `p` is absolute and normalized already (it would
 * return `p` unchanged): every file operation resolved the same path string three or four
 * times over, and path.resolve's character-by-character loop was a measurable share of a
 * small read, most of all before the JIT warms up.
 */
export function resolvedPath(p: string): string {
  return isNormalizedAbsolute(p) ? p : path.resolve(p);
}

/**
 * Whether `p` is a POSIX absolute path that path.resolve would return unchanged: no empty, "."
 * or ".." component, and no trailing "/" but the root's. Asked several times of every path of
 * every file operation (and of each protected path and root it is compared with): two
 * substring searches decide most paths, where a regular expression's run cost more than the
 * rest of the test. The expression of before took a trailing "/" after a line break ("/a\n/")
 * for normalized (its "." matches no line terminator), where path.resolve drops the "/".
 */
function isNormalizedAbsolute(p: string): boolean {
  if (path.sep !== "/" || p.charCodeAt(0) !== SLASH) return false;
  if (p.length > 1 && p.charCodeAt(p.length - 1) === SLASH) return false;
  if (p.includes("//")) return false;
  // Without a "/." there is no "." or ".." component; with one (a hidden name, say), the expression decides.
  return !p.includes("/.") || !DOT_COMPONENT.test(p);
}

/**
 * True if `candidate` is `root` or below it, by whole components. Both should be absolute
 * and normalized: then "inside" is equality or a prefix ending at a separator (/work/app_evil
 * is not inside /work/app), checked on the strings, which is cheap enough for every path of a
 * walk. Anything else goes through path.relative, which normalizes first.
 */
export function isWithin(candidate: string, root: string): boolean {
  if (isNormalizedAbsolute(candidate) && isNormalizedAbsolute(root)) return isWithinNormalized(candidate, root);
  const relative = path.relative(root, candidate);
  return relative === "" || (relative !== ".." && !relative.startsWith(".." + path.sep) && !path.isAbsolute(relative));
}

/** isWithin for two paths that are both isNormalizedAbsolute: the strings alone decide. */
function isWithinNormalized(candidate: string, root: string): boolean {
  return candidate === root || root === "/" || (candidate.length > root.length && candidate.charCodeAt(root.length) === SLASH && candidate.startsWith(root));
}

const SLASH = 0x2f;

/**
 * isWithin(`candidate`, root) as a test of many roots: the candidate's form is looked at once,
 * not again for each root (the protected paths, a dozen or more, are each tried on the path of
 * every file operation, and that look was most of the time it took).
 */
export function withinTest(candidate: string): (root: string) => boolean {
  if (!isNormalizedAbsolute(candidate)) return (root) => isWithin(candidate, root);
  return (root) => (isNormalizedAbsolute(root) ? isWithinNormalized(candidate, root) : isWithin(candidate, root));
}

/**
 * withinTest in any case (caseFolded): whether `candidate` is a root or below it once both are
 * in lower case. For tacit's own files, which a script on a case-insensitive file system reached
 * by another spelling of their names (`SECURE.LOG` for the secure output `secure.log`). The
 * candidate is folded once, at the first root tried; each root is folded as it is tried (an
 * operation tries the few protected paths around its scope).
 */
export function withinTestInAnyCase(candidate: string): (root: string) => boolean {
  let test: ((root: string) => boolean) | undefined;
  return (root) => (test ??= withinTest(caseFolded(candidate)))(caseFolded(root));
}

/** isWithin in any case (see withinTestInAnyCase). */
export function isWithinInAnyCase(candidate: string, root: string): boolean {
  return isWithin(caseFolded(candidate), caseFolded(root));
}

/** Whether `p` is a directory now, links followed (false for none, a dead link or one that cannot be looked at). */
export function existsAsDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function lstatOrNull(p: string): import("node:fs").Stats | null {
  try {
    // ENOENT without an error built for it (ENOTDIR still throws).
    return lstatSync(p, { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

/**
 * The way to a path, followed through a symbolic link, leads into the kernel's process file
 * system (a procfs mount, see proc-mounts.ts): refused before anything there is looked at.
 * Resolved, the links there told a script about processes and about tacit itself: their errors
 * ("permission denied" for another user's process's cwd, "no such file or directory" for a
 * kernel thread's exe), and where tacit's own /proc/self/fd/N lead (the refusal named the
 * secure output), as a path named in /proc is refused for (see FileSystemExecutor.resolve).
 */
export class LeadsIntoProcfs extends Error {
  override name = "LeadsIntoProcfs";
  constructor(readonly mount: string) {
    super(`a symbolic link on the way leads into the kernel's process file system (procfs, mounted at ${mount})`);
  }
}

/** The procfs mount `p` is on (or is the mount point of), or null. */
export function procfsMountOf(p: string): string | null {
  return procMounts().find((mount) => isWithin(p, mount)) ?? null;
}

/** Whether `p` is on a procfs mount (or is one's mount point). */
export function isInProcfs(p: string): boolean {
  return procfsMountOf(p) !== null;
}

/**
 * The real location of `absolute`: every symlink on the way resolved, including a dead
 * final link (whose target is where a write would land) and links inside parts that do not
 * exist yet. Components after the first missing one are appended as written. LeadsIntoProcfs
 * where a link on the way leads into procfs.
 */
export function resolveReal(absolute: string, procfs: ProcfsOnTheWay = "refuse", inside: InsideBounds = null): string {
  const normalized = resolvedPath(absolute);
  try {
    // Its own real path: there is no link on the way, so none that leads into procfs.
    const real = realpathSync.native(normalized);
    if (real === normalized || procfs === "follow") return real;
  } catch (error) {
    // Refusing: resolved below, link by link, which fails as realpath did, or refuses first.
    const code = (error as NodeJS.ErrnoException).code;
    if (procfs === "follow" && code !== "ENOENT" && code !== "ENOTDIR") {
      if (code === "ELOOP") throw tooManyLinks();
      throw error;
    }
  }
  // Walk down from the filesystem root, one link at a time: what realpath read through a link
  // into procfs (where it led, or its error) is not taken.
  return walkDown(path.parse(normalized).root, normalized.split(path.sep).filter(Boolean), 0, false, procfs, inside);
}

/**
 * What resolution does with a link that leads into procfs: "refuse" (LeadsIntoProcfs), for
 * every path a script names or a listing meets; "follow", for the host's own names of its own
 * files and of the operator's patterns (a classified pattern "/proc/self/environ", a protected
 * "/dev/stdin"), which tacit resolves as before, for matching only.
 */
export type ProcfsOnTheWay = "refuse" | "follow";

/**
 * resolveReal(`absolute`) for a path known to be `realTop` (a real directory: a scope's root,
 * resolved when the scope opened) or below it: only the components below `realTop` are looked
 * at, one lstat each, where realpath reads every component from the filesystem root again on
 * every call. A small read paid three or four system calls more for that, a measurable share
 * of it. Should `realTop` have been swapped for a link since, the result is still a place
 * below `realTop` as named: the checks after opening see where a descriptor really leads (and
 * `realTop` itself is resolved in full, so the directory is found to lead elsewhere).
 */
export function resolveRealBelow(realTop: string, absolute: string, finalAsNamed = false): string {
  const normalized = resolvedPath(absolute);
  const inside = insideOf(realTop);
  // The directory itself is resolved in full: a root swapped for a link is told as such.
  if (normalized === realTop || !isWithin(normalized, realTop)) return resolveReal(normalized, "refuse", inside);
  // A normalized path ends with a separator only as the file system's root ("/").
  const below = normalized.slice(realTop.endsWith(path.sep) ? realTop.length : realTop.length + 1);
  return walkDown(realTop, below.split(path.sep).filter(Boolean), 0, finalAsNamed, "refuse", inside);
}

/**
 * resolveReal of the entry `name` of the real directory `realDir`, as a listing of it found them
 * (a link, usually): only the entry and what its link names are looked at, not the way to
 * `realDir` again, which realpath read in full, and then resolveReal again link by link (a walk of
 * 20,000 links took twice as long). Should `realDir` have moved since, the result is a place as
 * named below it: the checks after opening see where a descriptor really leads.
 */
export function resolveLinkIn(realDir: string, name: string, inside: InsideBounds = null): string {
  // Read as a link first (the listing found one): no lstat to learn it is one.
  const link = linkTextOrNull(childPath(realDir, name));
  return link === null ? walkDown(realDir, [name], 0, false, "refuse", inside) : followLink(realDir, link, [], 0, "refuse", inside);
}

/**
 * Where `named`, a path under a file-system scope's root as the script named that root, really
 * leads: from the real root the scope was opened at (resolved then), which is where every action
 * of the scope is carried out, whatever a link on the way to the named root leads to now.
 */
export function realPathInScope(root: string, realRoot: string, named: string, finalAsNamed = false): string {
  const fromRealRoot = isWithin(named, realRoot) ? named : path.join(realRoot, path.relative(root, named));
  return resolveRealBelow(realRoot, fromRealRoot, finalAsNamed);
}

/**
 * Resolves `parts` one by one below the real directory `start`. With `finalAsNamed`, the
 * last part is taken as it is, not looked at: for a caller that opens the result without
 * following a final link (O_NOFOLLOW), so that a link there fails the open (ELOOP) rather than
 * being read, and then resolves the path in full (see FileSystemExecutor.read). A link met is
 * followed here, its target and the parts after it walked on from the deepest directory already
 * resolved that holds them; once one has been followed, a part on a procfs mount is refused
 * (LeadsIntoProcfs) before it is looked at. `hops`: links followed before.
 */
function walkDown(start: string, parts: string[], hops: number, finalAsNamed = false, procfsOnTheWay: ProcfsOnTheWay = "refuse", inside: InsideBounds = null): string {
  let resolved = start;
  let lookedAgain = 0;
  /** The link last found unreadable, and how many times in a row it was that same link (path and inode). */
  let unread = null as UnreadLink | null;
  for (let i = 0; i < parts.length; i++) {
    const next = childPath(resolved, parts[i]!);
    const procfs = hops > 0 && procfsOnTheWay === "refuse" ? procfsMountOf(next) : null;
    if (procfs !== null) throw new LeadsIntoProcfs(procfs);
    if (finalAsNamed && i === parts.length - 1) return next;
    const stat = lstatOrNull(next);
    if (stat === null) return path.join(next, ...parts.slice(i + 1));
    if (stat.isSymbolicLink()) {
      const link = linkTextOrNull(next);
      if (link === null) {
        // Swapped for a directory or file (or removed) between the lstat and the readlink: it
        // is looked at again, as it is now. Failed with EINVAL, any operation on a path another
        // process swaps said "invalid path", where one a moment earlier or later answers.
        const same = unread !== null && unread.path === next && unread.dev === stat.dev && unread.ino === stat.ino;
        unread = { path: next, dev: stat.dev, ino: stat.ino, times: same ? unread!.times + 1 : 1 };
        if (++lookedAgain > MAX_LINK_HOPS) {
          // The same link every time was not swapped: it is a link that cannot be read (a
          // /proc/<pid>/exe of a kernel thread reads ENOENT however often it is asked). Its own
          // error, as before links were looked at again, not "it kept changing; try again".
          if (unread.times === lookedAgain) readlinkSync(next);
          throw new PathKeptChanging(
            "it kept changing while it was being resolved (a link on the way was swapped in and out again and again); try again once nothing is changing the tree",
          );
        }
        i--;
        continue;
      }
      return followLink(resolved, link, parts.slice(i + 1), hops, procfsOnTheWay, inside);
    }
    // `resolved` is real and `next` is no link, so `next` is real too. realpath on each
    // prefix instead cost the cube of the depth (every call walks the prefix again): a
    // security review blocked the host for 35 s with one `exists` under 1,500 directories.
    resolved = next;
  }
  return resolved;
}

/**
 * The rest of walkDown's way from the link in the real directory `resolved` that holds `link`, with
 * the parts after the link (`rest`); `hops`: links followed before this one. Refused where the way
 * leads into procfs (LeadsIntoProcfs).
 */
function followLink(resolved: string, link: string, rest: readonly string[], hops: number, procfsOnTheWay: ProcfsOnTheWay = "refuse", inside: InsideBounds = null): string {
  if (hops + 1 > MAX_LINK_HOPS) throw tooManyLinks();
  // `resolved` is real (no link on the way), so a ".." in the target is its parent, as before
  // (the target is normalized as written, and every link on the way then resolved).
  const target = path.resolve(resolved, link);
  const whole = rest.length > 0 ? path.join(target, ...rest) : target;
  const procfs = procfsOnTheWay === "refuse" ? procfsMountOf(whole) : null;
  if (procfs !== null) throw new LeadsIntoProcfs(procfs);
  // Out of the bounds, whatever goes wrong from here on is about what lies outside: one refusal for all of it.
  if (inside !== null && !inside(whole)) {
    try {
      return followedFrom(resolved, whole, hops, procfsOnTheWay, inside);
    } catch {
      throw new LeadsOutside();
    }
  }
  return followedFrom(resolved, whole, hops, procfsOnTheWay, inside);
}

/** followLink's walk on from the real directory `resolved` to `whole`, the link's target with the parts after it. */
function followedFrom(resolved: string, whole: string, hops: number, procfsOnTheWay: ProcfsOnTheWay, inside: InsideBounds): string {
  // Usually no other link lies on its way (a link to a file or a directory): then it is its own
  // real path, which realpath says in one call, where the walk below pays two or three.
  if (isOwnRealPath(whole)) return whole;
  // Walked on from the deepest directory already resolved that holds it: a relative link (the
  // usual kind) costs an lstat for each part it names, not the whole way again.
  let from = resolved;
  while (!isWithin(whole, from)) from = path.dirname(from);
  const parts = whole === from ? [] : whole.slice(from.endsWith(path.sep) ? from.length : from.length + 1).split(path.sep).filter(Boolean);
  return walkDown(from, parts, hops + 1, false, procfsOnTheWay, inside);
}

/** Whether realpath finds `p` as it is: every part of it exists, and none is a link. */
function isOwnRealPath(p: string): boolean {
  try {
    return realpathSync.native(p) === p;
  } catch {
    return false;
  }
}

/** A link walkDown found it could not read (see there). */
interface UnreadLink {
  path: string;
  dev: number;
  ino: number;
  times: number;
}

/** What the link `p` holds, or null where `p` is no longer a link (EINVAL) or gone (ENOENT). */
function linkTextOrNull(p: string): string | null {
  try {
    return readlinkSync(p);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EINVAL" || code === "ENOENT") return null;
    throw error;
  }
}

/**
 * path.join(`dir`, `name`) for a normalized absolute `dir` and a `name` that is one plain
 * component (as the parts of a normalized path are): the two joined by a separator, which is
 * what path.join's normalizing returns for them. A walk joins each component of every path
 * it resolves, and path.join was the costliest function V8 compiled for a run of small reads.
 */
function childPath(dir: string, name: string): string {
  if (path.sep !== "/" || name === "" || name === "." || name === ".." || name.includes("/") || !isNormalizedAbsolute(dir)) return path.join(dir, name);
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/**
 * resolveReal, or the path as given when it cannot be resolved (a link loop): for matching and
 * naming only; the executors' own resolution refuses such a path when it is used.
 */
export function resolveRealOrSelf(absolute: string): string {
  try {
    return resolveReal(absolute, "follow");
  } catch {
    return path.resolve(absolute);
  }
}

/**
 * Each path as named (absolute) and where it really leads (resolveRealOrSelf), without repeats:
 * what tacit protects or looks for under both names, so that a link on the way to it neither
 * hides it nor stands in for it.
 */
export function namedAndReal(paths: readonly string[]): string[] {
  // Each directory's real path once, for all the paths in it: a path whose last part is no link
  // (or is missing) lies in it as named, which an lstat says. Resolved one by one, the 512 paths
  // of 256 remembered audit logs and their locks (most locks missing, each a failed realpath and a
  // walk from the root) cost every start 10.6 ms, against about 1 this way.
  const realDirectories = new Map<string, string | null>();
  const realOf = (named: string): string => {
    const directory = path.dirname(named);
    if (directory === named) return resolveRealOrSelf(named);
    let realDirectory = realDirectories.get(directory);
    if (realDirectory === undefined) {
      realDirectory = realOrNull(directory);
      realDirectories.set(directory, realDirectory);
    }
    if (realDirectory === null) return resolveRealOrSelf(named);
    const stat = lstatOrNull(named);
    return stat !== null && stat.isSymbolicLink() ? resolveRealOrSelf(named) : childPath(realDirectory, path.basename(named));
  };
  return [...new Set(paths.flatMap((each) => {
    const named = path.resolve(each);
    return [named, realOf(named)];
  }))];
}

/** realpath of `directory`, or null where it cannot be found (missing, a loop): resolved link by link then. */
function realOrNull(directory: string): string | null {
  try {
    return realpathSync.native(directory);
  } catch {
    return null;
  }
}
