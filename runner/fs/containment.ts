// Where a path really leads, and whether that is inside a root. Containment is decided on
// fully resolved paths (symlinks followed, dead ones included) and by whole path components,
// never by string prefix: /work/app_evil is not inside /work/app.

import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import path from "node:path";

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

/** A link on the way was swapped in and out again and again while the path was being resolved. */
export class PathKeptChanging extends PathResolutionError {
  override name = "PathKeptChanging";
}

/** A POSIX path with an empty, "." or ".." component, or a trailing "/": not normalized. */
const UNNORMALIZED = /\/\/|\/\.\.?(?:\/|$)|.\/$/;

/**
 * path.resolve(`p`), without its work when `p` is absolute and normalized already (it would
 * return `p` unchanged): every file operation resolved the same path string three or four
 * times over, and path.resolve's character-by-character loop was a measurable share of a
 * small read, most of all before the JIT warms up.
 */
export function resolvedPath(p: string): string {
  return isNormalizedAbsolute(p) ? p : path.resolve(p);
}

/** Whether `p` is a POSIX absolute path that path.resolve would return unchanged. */
function isNormalizedAbsolute(p: string): boolean {
  return path.sep === "/" && p.startsWith("/") && !UNNORMALIZED.test(p);
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
 * The real location of `absolute`: every symlink on the way resolved, including a dead
 * final link (whose target is where a write would land) and links inside parts that do not
 * exist yet. Components after the first missing one are appended as written.
 */
export function resolveReal(absolute: string, hops = 0): string {
  if (hops > MAX_LINK_HOPS) throw tooManyLinks();
  const normalized = resolvedPath(absolute);
  try {
    return realpathSync.native(normalized);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") {
      if (code === "ELOOP") throw tooManyLinks();
      throw error;
    }
  }
  // Walk down from the filesystem root to the first component that does not resolve.
  return walkDown(path.parse(normalized).root, normalized.split(path.sep).filter(Boolean), hops);
}

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
  // The directory itself is resolved in full: a root swapped for a link is told as such.
  if (normalized === realTop || !isWithin(normalized, realTop)) return resolveReal(normalized);
  // A normalized path ends with a separator only as the file system's root ("/").
  const below = normalized.slice(realTop.endsWith(path.sep) ? realTop.length : realTop.length + 1);
  return walkDown(realTop, below.split(path.sep).filter(Boolean), 0, finalAsNamed);
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
 * Resolves `parts` one by one below the real directory `resolved`. With `finalAsNamed`, the
 * last part is taken as it is, not looked at: for a caller that opens the result without
 * following a final link (O_NOFOLLOW), so that a link there fails the open (ELOOP) rather than
 * being read, and then resolves the path in full (see FileSystemExecutor.read).
 */
function walkDown(resolved: string, parts: string[], hops: number, finalAsNamed = false): string {
  let lookedAgain = 0;
  /** The link last found unreadable, and how many times in a row it was that same link (path and inode). */
  let unread = null as UnreadLink | null;
  for (let i = 0; i < parts.length; i++) {
    const next = childPath(resolved, parts[i]!);
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
      return resolveReal(path.join(path.resolve(resolved, link), ...parts.slice(i + 1)), hops + 1);
    }
    // `resolved` is real and `next` is no link, so `next` is real too. realpath on each
    // prefix instead cost the cube of the depth (every call walks the prefix again): a
    // security review blocked the host for 35 s with one `exists` under 1,500 directories.
    resolved = next;
  }
  return resolved;
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
    return resolveReal(absolute);
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
  return [...new Set(paths.flatMap((each) => [path.resolve(each), resolveRealOrSelf(each)]))];
}
