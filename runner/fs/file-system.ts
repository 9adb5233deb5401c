// The file-system executor: carries out FileSystem/FileEntry requests for one evaluation,
// after deciding each against the policy. Every path is resolved here, by the host: relative
// to the scope's root, `..` collapsed, symlinks followed (dead ones too), and then required
// to lie inside the scope by whole path components.

import { isUtf8 } from "node:buffer";
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, readSync, rmdirSync, type Stats, statSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import type { FileInfo, GrepMatch } from "../../library/protocol.js";
import type { CapabilityTable, FileSystemScope } from "../capabilities.js";
import { isLaunchManifestAt, type ManifestText, readManifest, tacitBinChange, textAfter, TOO_LONG } from "../launch-files.js";
import { confinedCommandOver } from "../exec/confinement.js";
import { EffectFailure, PolicyDenial } from "../refusals.js";
import { type BeforeEffect, NOTHING_TO_LOG } from "../before-effect.js";
import { automaticTaskChange, devContainerInitializeChange, isDevContainerConfigAt, isTaskFileAt } from "./automatic-tasks.js";
import { cargoProgramChange, isCargoConfigAt } from "./cargo-config.js";
import { editorProgramChange, isEditorSettingsAt } from "./editor-settings.js";
import { pythonStartupChange, pythonStartupFileAt, pythonZipArchiveChange } from "./python-startup.js";
import { envrcRecordChange, envrcRecordsAt } from "./direnv-trust.js";
import { husky4RunnerFor } from "./git-repository.js";
import { fileOperation, operationUnderWay } from "./operation-memo.js";
import { husky4KeyOf } from "./hook-managers.js";
import type { ClassifiedPaths } from "./classified-paths.js";
import { homeConfigChangeOf } from "./home-config.js";
import { hostFreeErrorText, inVerifiedDirectory, NotRegularFileError, openForReading, opensWithEffect, statInVerifiedDirectory, UncheckablePlaceError } from "./checked-open.js";
import { existsAsDirectory, insideOf, isInProcfs, isWithin, isWithinInAnyCase, LeadsIntoProcfs, LeadsOutside, PathResolutionError, realPathInScope, resolvedPath, resolveReal, resolveRealOrSelf } from "./containment.js";
import type { GrepRunner } from "./grep-runner.js";
import type { GrepReply } from "./grep-worker.js";
import { asSearchExclusions, type PathUse, PROCFS_REFUSAL, type ProtectedPath, protectedPathBelow, protectedPathOf, readOnlyProtectedPaths } from "./protected-paths.js";
import { ERRNO_TEXT, type LeftOut, shortened } from "./left-out.js";
import { DirectoryChanged, directoryChangedText, listEntries, PathChanged, TooManyEntries } from "./walk.js";
import { printable } from "../printable.js";
import { allowedRootsBounds, nowLeadsText, type PlaceBounds, scopeBounds } from "./moved-place.js";
import { HostSecrets } from "../host-secrets.js";

/** Entries children() and walk() list on the host's main thread; a larger listing is done in the search worker. */
const MAIN_THREAD_LIST_ENTRIES = 5000;

/** read()/readBytes() refuse files larger than this; forEachLine streams any size. */
export const READ_LIMIT_BYTES = 32 * 1024 * 1024;
/** forEachLine fetches files in pieces of this size. */
export const CHUNK_BYTES = 1024 * 1024;
/** Classified reads and writes waiting for the store that keep their descriptor open, at most. */
export const HELD_DESCRIPTORS_LIMIT = 256;

export interface FileSystemPolicy {
  /** Real paths; a scope's root must lie inside one. */
  allowedRoots: readonly string[];
  /** Roots a person allowed for this run beyond allowedRoots (a live list: see RunGrants). */
  grantedRoots: readonly string[];
  classified: ClassifiedPaths;
  classifiedWrite: boolean;
  /** tacit's own files: refused to every operation, skipped by searches (see protected-paths.ts). */
  protectedPaths: readonly ProtectedPath[];
  /**
   * The host's own secrets (see host-secrets.ts): masked in every line before a grep pattern
   * is tried on it, so whether a pattern matches cannot spell one out character by character.
   */
  hostSecrets: readonly string[];
  /** Absolute globs a recursive search does not follow a link into (see askedReadGlobs). */
  searchSkips: readonly string[];
}

interface Resolved {
  /** Absolute, as the agent named it (under the scope root). */
  named: string;
  /** Every symlink resolved. */
  real: string;
  classified: boolean;
  /** The approval gate judged the action by `real` (see judged()): it is carried out there or not at all. */
  judged?: boolean;
  /** The approval gate watches where the action is carried out (see watch()). */
  watched?: boolean;
  /** What resolve() checked it for: a change's checks are a read's and more. */
  use: PathUse;
  /** The file operation resolve() checked it in (see operationUnderWay), null outside one. */
  operation: number | null;
}

/**
 * Whether a protected path at `place` can hold a path inside `scope` (under its root, or its real
 * root): it lies in one of the two, or one of them in it (two places a path lies in lie one in
 * the other). In any case too: protectedPathOf compares so (a case-insensitive file system's `SECURE.LOG`).
 */
function relatedToScope(scope: FileSystemScope, place: string): boolean {
  return [scope.root, scope.realRoot].some((root) => isWithinInAnyCase(place, root) || isWithinInAnyCase(root, place));
}

/**
 * A classified file that is not UTF-8 text (a key store, a DER key): readClassified() carries
 * text, and decoded it lossily (each invalid sequence became U+FFFD), so a copy made with
 * writeClassified held other bytes and one written back to the same path destroyed the file,
 * without a word. Its message says nothing else of the content: no offset, byte or length.
 */
class NotUtf8Text extends EffectFailure {
  constructor(requested: string) {
    super(
      `${requested}: is not UTF-8 text (a binary file, such as a key store?); readClassified() reads a classified file as text and ` +
        "would have changed its bytes, so nothing was read. tacit cannot carry a binary classified file's bytes as a Classified value: " +
        "copy or move it with a command outside tacit.",
    );
  }
}

/**
 * The files (device and inode) that classified writes still pending will fill, with how many
 * such writes each: a classified read of one of them is read once they have landed (after the
 * evaluation's pending writes, see the monitor), a read of any other file at once, so that one
 * that is not UTF-8 is refused to the script then (see openClassifiedRead). Of the whole
 * process: a session's later snippets and a server's later calls read what earlier ones write.
 */
const pendingClassifiedWrites = new Map<string, number>();

/**
 * A file, told apart from every other: its device and inode number, and its birth time. The number
 * alone is not: a file system gives a freed number to the next file made (ext4 does, at once), so
 * a script deleted the files its pending writes had made, a confined command made files at their
 * names that got the same numbers, and the secrets landed there, in files the command read. A
 * file made later is born later. (Where the file system keeps no birth time, Node gives 0: the
 * number alone, as before.)
 */
function fileIdentity(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.birthtimeMs}`;
}

/** Counts a classified write pending on the file of `identity`; the function returned takes it back, once. */
function notePendingClassifiedWrite(identity: string): () => void {
  pendingClassifiedWrites.set(identity, (pendingClassifiedWrites.get(identity) ?? 0) + 1);
  let landed = false;
  return () => {
    if (landed) return;
    landed = true;
    const left = (pendingClassifiedWrites.get(identity) ?? 1) - 1;
    if (left === 0) pendingClassifiedWrites.delete(identity);
    else pendingClassifiedWrites.set(identity, left);
  };
}

/** Half of a UTF-16 surrogate pair standing alone (with the u flag, a pair is one character and does not match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Refuses a classified value holding a lone surrogate, which has no UTF-8 form: encoded, it
 * became U+FFFD, so the file held other text than the value, without a word. Thrown when the
 * value lands, so the write fails out of sight (its reason in the secure output), the file left
 * empty, as for a value that could not be computed.
 */
function refuseLoneSurrogates(content: string | null, requested: string): void {
  if (content === null || !LONE_SURROGATE.test(content)) return;
  throw new EffectFailure(
    `${requested}: writeClassified() wrote nothing: the value holds a lone surrogate (half of a UTF-16 pair), which has no UTF-8 form; ` +
      "written, it would have become U+FFFD, other text than the value. Return well-formed text from the map function " +
      "(String.prototype.toWellFormed() replaces lone surrogates with U+FFFD, where that is what you want).",
  );
}

/**
 * Refuses to fill a classified file with a value holding a zip archive's end record: a .pth file may
 * list the file, and Python imports sitecustomize from a zip there (see pythonZipArchiveChange); a
 * script wrote classify(<a zip that is text>) to .env.zip, listed in a .pth, and the next start ran
 * it. Told where every failure of a fill goes (the secure output), out of the script's sight.
 */
function refuseZipArchive(content: string | null, requested: string): void {
  if (content === null || pythonZipArchiveChange(content, false) === null) return;
  throw new EffectFailure(
    `${requested}: writeClassified() wrote nothing: the value holds a zip archive's end record (PK\\x05\\x06), and Python imports ` +
      "modules from a zip archive a .pth file lists, a sitecustomize in it at every start. Write the value in another form (base64, say).",
  );
}

/** A write tried with its final name as it is must resolve it first (see FileSystemExecutor.writeNow); never leaves the executor. */
class FinalNeedsResolving extends Error {
  override name = "FinalNeedsResolving";
}

function failure(requested: string, error: unknown): EffectFailure | PolicyDenial {
  if (error instanceof PolicyDenial || error instanceof EffectFailure) return error;
  if (error instanceof LeadsIntoProcfs) {
    return new PolicyDenial(
      `${requested}: refused: ${error.message}, and it was not followed; ${PROCFS_REFUSAL}.`,
    );
  }
  if (error instanceof UncheckablePlaceError) return new PolicyDenial(`${requested}: refused: ${error.message}; nothing was done. Try again once nothing is changing the tree.`);
  if (error instanceof NotRegularFileError || error instanceof PathResolutionError) return new EffectFailure(`${requested}: ${hostFreeErrorText(error, requested)}`);
  const code = (error as NodeJS.ErrnoException).code ?? "";
  return new EffectFailure(`${requested}: ${ERRNO_TEXT[code] ?? hostFreeErrorText(error, requested)}`);
}

export class FileSystemExecutor {
  constructor(
    private readonly policy: FileSystemPolicy,
    private readonly capabilities: CapabilityTable,
    private readonly grep: GrepRunner,
    private readonly cwd: string,
    /** Adds a warning to the run's output (see warnLeftOut). */
    private readonly warn: (warning: string) => void,
  ) {}

  /**
   * The allowlists' checks on opening a scope at `root` (procfs, the allowed roots and those granted
   * this run); throws their refusal. The approval gate asks about an fs.open only after these pass:
   * asked before, a person answered (and a yes was remembered) for an open they then refused.
   */
  authorizeOpen(root: string): void {
    this.allowedRootOf(root);
  }

  /** Checks `root` as authorizeOpen does; returns it as named (absolute) and where it really leads. */
  private allowedRootOf(root: string): { named: string; realRoot: string } {
    const named = path.resolve(this.cwd, root);
    // A root named in procfs is refused before it is resolved, as any path there (see resolve()):
    // resolved, /proc/<pid>/cwd opened a scope where that process worked, or failed with an error
    // that told whether the process was there and whose it was.
    const procfs = isInProcfs(named) ? protectedPathOf(this.policy.protectedPaths, named, named, "read") : null;
    if (procfs) throw protectedRefusal(`requestFileSystem("${root}")`, procfs);
    const insideRoots = (place: string): boolean => this.roots().some((allowed) => isWithin(place, allowed));
    /**
     * Null: resolving it failed outside the allowed roots (past a link that leads out of them, or on
     * the way to a root named outside them), refused below as any root outside them, whatever is there.
     */
    let realRoot: string | null;
    try {
      realRoot = resolveReal(named, "refuse", insideRoots);
    } catch (error) {
      if (!(error instanceof LeadsOutside) && insideRoots(named)) throw failure(root, error);
      realRoot = null;
    }
    // A scope the gate judged (a rule on fs.open) opens where it was judged (see judged(): token "").
    const judged = this.judgedRealOf("", root);
    if (judged !== null && realRoot !== null && realRoot !== judged) throw changedSinceJudged(`requestFileSystem("${root}")`, realRoot, allowedRootsBounds(this.roots()));
    if (realRoot === null || !insideRoots(realRoot)) {
      throw new PolicyDenial(
        `requestFileSystem("${root}"): ${named} is outside the allowed roots (${this.policy.allowedRoots.join(", ")}). ` +
          "Ask for a directory inside one of them, or have the operator add it with --allowed-roots (config libraryConfig.allowedRoots).",
      );
    }
    return { named, realRoot };
  }

  openScope(root: string): { scope: string; root: string } {
    const { named, realRoot } = this.allowedRootOf(root);
    let isDirectory = false;
    try {
      isDirectory = statSync(realRoot).isDirectory();
    } catch {
      // Reported below.
    }
    if (!isDirectory) {
      // "~" is a shell's, not the file system's: taken as a name, "~/work" was a directory "~" in the working directory.
      const tilde = root === "~" || root.startsWith("~/") ? ` (tacit does not expand "~": it is taken as a directory named "~" there; give the home directory's path)` : "";
      throw new EffectFailure(
        `requestFileSystem("${root}"): ${named} is not an existing directory${tilde}. Ask for a directory that exists (a relative root is taken from ` +
          `the working directory, ${this.cwd}), or make it first with mkdir() in a scope on a directory above it`,
      );
    }
    const scope: FileSystemScope = { kind: "fs", root: named, realRoot };
    return { scope: this.capabilities.issue(scope), root: named };
  }

  closeScope(token: string): void {
    this.capabilities.revoke(token);
  }

  /**
   * The containment checks every operation starts with; throws the refusal. The approval gate
   * asks only after these pass. `use`: whether the operation only reads (tacit's own code may be read).
   */
  authorize(token: string, requested: string, use: PathUse): void {
    this.resolve(token, requested, use);
  }

  /** Where the approval gate found the path of the action it has carried out now (see judged()). */
  private judgedPath: { token: string; requested: string; real: string } | null = null;

  /**
   * The approval gate applied the policy's rules to the next action on `requested` (in scope
   * `token`; "" for opening a scope at the root `requested`) where its path led then, `real`
   * (null once that action is over). The action is
   * carried out there or not at all: resolve() refuses a path that leads elsewhere now, and the
   * checks after opening one that led elsewhere by the time it was opened. Resolved again here,
   * a path the agent's concurrent call swapped for a link meanwhile had the action land where no
   * rule was applied: a security review's writes judged as going to scratch/x.txt landed in
   * deploy/x.txt, under an always-ask rule on deploy/**, with no question.
   */
  judged(token: string, requested: string, real: string | null): void {
    this.judgedPath = real === null ? null : { token, requested, real };
  }

  /** Where the gate judged `requested` (in scope `token`) to lead, if this is the action it judged; else null. */
  private judgedRealOf(token: string, requested: string): string | null {
    const judged = this.judgedPath;
    return judged !== null && judged.token === token && judged.requested === requested ? judged.real : null;
  }

  /** The action whose path the approval gate watches (see watch()), and where it was found to lead so far. */
  private watchedPath: { token: string; requested: string; real: string | null } | null = null;

  /**
   * The approval gate logs where the next action on `requested` (in scope `token`) is carried out
   * as this executor finds it, instead of resolving the path itself beforehand: each resolution
   * of the path for it, and each check of a descriptor opened for it (afterOpen), records where it
   * leads, the last one (the file as opened) winning. watched() ends the watch.
   */
  watch(token: string, requested: string): void {
    this.watchedPath = { token, requested, real: null };
  }

  /** Where the watched action's path was last found to lead, or null when it never got that far (refused before); ends the watch. */
  watched(): string | null {
    const real = this.watchedPath?.real ?? null;
    this.watchedPath = null;
    return real;
  }

  private resolve(token: string, requested: string, use: PathUse = "change", finalAsNamed = false): Resolved & { scope: FileSystemScope } {
    const scope = this.capabilities.get(token, "fs");
    // The stub sends absolute paths: path.resolve(root, p) is then path.resolve(p), which resolvedPath skips when p is normalized already.
    const named = path.sep === "/" && requested.startsWith("/") ? resolvedPath(requested) : path.resolve(scope.root, requested);
    if (!isWithin(named, scope.root) && !isWithin(named, scope.realRoot)) {
      throw new PolicyDenial(
        `${requested}: outside this file system scope (${scope.root}). Use a path under the root, or request a scope for the other directory.`,
      );
    }
    // A path named in procfs is refused before it is resolved: resolving reads its links
    // (/proc/<pid>/exe, cwd, root), whose errors ("no such file or directory" of a zombie's or a
    // kernel thread's, "permission denied" of another user's process) told a script about
    // processes, where every other path there got the same refusal.
    if (isInProcfs(named)) {
      const procfs = protectedPathOf(this.policy.protectedPaths, named, named, use);
      if (procfs) throw protectedRefusal(requested, procfs);
    }
    let real: string;
    try {
      // The root was resolved when the scope opened: only what is below it needs resolving.
      real = realPathInScope(scope.root, scope.realRoot, named, finalAsNamed);
    } catch (error) {
      // Past a link out of the scope, whatever failed there is refused as any path that leads out of it.
      throw error instanceof LeadsOutside ? leadsOutOfScope(requested, scope) : failure(requested, error);
    }
    const watch = this.watchedPath;
    const watched = watch !== null && watch.token === token && watch.requested === requested;
    if (watched) watch.real = real;
    if (!isWithin(real, scope.realRoot)) throw leadsOutOfScope(requested, scope);
    const judged = this.judgedRealOf(token, requested);
    if (judged !== null && real !== judged) throw changedSinceJudged(requested, real, scopeBounds(scope));
    const own =
      protectedPathOf(this.protectedAround(scope), named, real, use, () => this.readOnlyAround(scope)) ??
      (use === "change" ? (homeConfigChangeOf(real, this.roots()) ?? homeConfigChangeOf(named, this.roots())) : null);
    if (own) throw protectedRefusal(requested, own);
    return { scope, named, real, classified: this.policy.classified.isClassified(named, real), judged: judged !== null, watched, use, operation: operationUnderWay() };
  }

  /** Each scope's protected paths that a path inside it can lie in (see protectedAround). */
  private readonly scopesProtected = new WeakMap<FileSystemScope, readonly ProtectedPath[]>();

  /**
   * The protected paths that a path inside `scope` (under its root, or its real root) can be or
   * lie in: those inside one of the two, and those they are inside. Two places a path lies in lie
   * one in the other, so any other protected path is none of that path's, and is not tried on
   * every path the scope names (resolve() asked each of a dozen of every read). Strings alone
   * decide it, fixed for the scope's life.
   */
  private protectedAround(scope: FileSystemScope): readonly ProtectedPath[] {
    let around = this.scopesProtected.get(scope);
    if (around === undefined) {
      around = this.policy.protectedPaths.filter((own) => relatedToScope(scope, own.path));
      this.scopesProtected.set(scope, around);
    }
    return around;
  }

  /** Each scope's read-only protected paths that a path inside it can lie in (see readOnlyAround). */
  private readonly scopesReadOnly = new WeakMap<FileSystemScope, readonly ProtectedPath[]>();

  /**
   * The read-only protected paths (tacit's code, its launch files, the kernel's control mounts:
   * some ninety) that a path inside `scope` can be or lie in, as protectedAround: each change's
   * checks, before and after opening, tried every one of them on the path, in any case too, a
   * third of a small write's host time. Found when a change first needs them (a script that only
   * reads never looks them up), fixed for the scope's life.
   */
  private readOnlyAround(scope: FileSystemScope): readonly ProtectedPath[] {
    let around = this.scopesReadOnly.get(scope);
    if (around === undefined) {
      around = readOnlyProtectedPaths().filter((own) => relatedToScope(scope, own.path));
      this.scopesReadOnly.set(scope, around);
    }
    return around;
  }

  /** The allowed roots, and those a person allowed for this run. */
  private roots(): string[] {
    return [...this.policy.allowedRoots, ...this.policy.grantedRoots];
  }

  private denyClassified(target: Resolved, requested: string, operation: string): void {
    if (target.classified) {
      throw new PolicyDenial(
        `${requested}: ${operation} refused: the path is classified (it holds secrets). ` +
          "Use readClassified() to get a Classified value whose plaintext stays in the host.",
      );
    }
  }

  private denyClassifiedWrite(target: Resolved, requested: string, operation: string): void {
    if (target.classified && !this.policy.classifiedWrite) {
      throw new PolicyDenial(
        `${requested}: ${operation} refused: the path is classified and classifiedWrite is off (config libraryConfig.classifiedWrite).`,
      );
    }
  }

  stat(token: string, requested: string): FileInfo {
    const target = this.resolve(token, requested, "read");
    let exists = false;
    let isDirectory = false;
    try {
      const stats = this.statResolved(target, requested, true);
      exists = stats !== null;
      isDirectory = stats?.isDirectory() ?? false;
    } catch (error) {
      // Missing (or a dead link): exists stays false. A path swapped to lead elsewhere is refused.
      if (error instanceof PolicyDenial) throw error;
    }
    return { path: target.named, name: path.basename(target.named), exists, isDirectory, isClassified: target.classified };
  }

  size(token: string, requested: string): number {
    const target = this.resolve(token, requested, "read");
    this.denyClassified(target, requested, "size");
    try {
      return this.existingResolved(target, requested, false).size;
    } catch (error) {
      throw failure(requested, error);
    }
  }

  /**
   * What a resolved path is, looked up through its verified parent (see
   * statInVerifiedDirectory): it must still be inside the scope, not one of tacit's files,
   * and (unless `mayBeClassified`) not classified. statSync on the path followed a directory
   * swapped for a link after the check, and told the size of a classified file or one
   * outside the scope.
   */
  private statResolved(target: Resolved & { scope: FileSystemScope }, requested: string, mayBeClassified: boolean): Stats | null {
    const stats = statInVerifiedDirectory(target.real, target.scope.realRoot, this.afterOpen(target, requested, mayBeClassified));
    if (stats?.isSymbolicLink()) {
      throw new PolicyDenial(`${requested}: the path changed while it was being looked at (a link was swapped in); nothing was reported.`);
    }
    return stats;
  }

  /** statResolved, with a missing entry refused as no such file or directory. */
  private existingResolved(target: Resolved & { scope: FileSystemScope }, requested: string, mayBeClassified: boolean): Stats {
    const stats = this.statResolved(target, requested, mayBeClassified);
    if (stats === null) throw new EffectFailure(`${requested}: ${ERRNO_TEXT.ENOENT}`);
    return stats;
  }

  read(token: string, requested: string, as: "text" | "bytes"): string {
    const encoding = as === "text" ? "utf8" : "base64";
    const read = this.readIfFinalIsNoLink(token, requested, encoding);
    if (read !== null) return read;
    const target = this.resolve(token, requested, "read");
    this.denyClassified(target, requested, as === "text" ? "read" : "readBytes");
    return this.readContent(target, requested, encoding, false);
  }

  /**
   * A read that does not look at the path's final component before opening it: it resolves the
   * directories on the way as any read does, takes the final name as it is, applies every check
   * to that path, and opens it without following a link (O_NOFOLLOW), then checks where the
   * descriptor leads, as any read does. Null, and nothing read, wherever that is not a plain
   * success (the final component is a link, so the open failed; a check refused; the file is
   * missing or no regular file; the gate judged the path): read() then does what it always did,
   * which gives the answer and its words. Where it succeeds, the final component was no link
   * when it was opened, so the full resolution would have found the same path, passed the same
   * checks and opened the same file: the result is the same, one lstat (of ten system calls a
   * read) fewer, the costliest of them in a CPU profile of 10,000 small reads.
   */
  private readIfFinalIsNoLink(token: string, requested: string, encoding: "utf8" | "base64"): string | null {
    if (this.judgedRealOf(token, requested) !== null) return null;
    let target: Resolved & { scope: FileSystemScope };
    try {
      target = this.resolve(token, requested, "read", true);
    } catch {
      return null;
    }
    if (target.classified || target.real === target.scope.realRoot) return null;
    let opened: { fd: number; stats: Stats };
    try {
      opened = openForReading(target.real, this.afterOpen(target, requested, false));
    } catch {
      return null;
    }
    try {
      return readWhole(opened.fd, opened.stats.size, requested, encoding);
    } catch (error) {
      throw failure(requested, error);
    } finally {
      closeSync(opened.fd);
    }
  }

  /**
   * The check after opening: the descriptor must lead inside the scope, and (for ordinary
   * reads) not to a classified file. A directory swapped for a link is caught here.
   */
  private afterOpen(target: Resolved & { scope: FileSystemScope }, requested: string, mayBeClassified: boolean): (actual: string) => void {
    return (actual) => {
      // Where the descriptor leads is where the action is carried out, if the checks pass.
      if (target.watched && this.watchedPath !== null) this.watchedPath.real = actual;
      if (target.judged && actual !== target.real) throw changedSinceJudged(requested, actual, scopeBounds(target.scope));
      // The descriptor leads to the very path resolve() checked, and each check below is a
      // function of that string alone (fixed roots, patterns and protected paths): resolve()
      // found it inside the scope and none of tacit's (with at least a read's checks), and
      // classified or not. Asked again, each would answer the same, at a third of a small
      // read's host time; any other path (a link swapped in on the way) is checked in full.
      if (actual === target.real && (mayBeClassified || !target.classified)) return;
      if (!isWithin(actual, target.scope.realRoot)) {
        throw new PolicyDenial(`${requested}: the path changed while it was being opened and now leads outside this file system scope; nothing was read.`);
      }
      if (!mayBeClassified && this.policy.classified.matches(actual)) {
        throw new PolicyDenial(`${requested}: the path changed while it was being opened and now leads to a classified file; nothing was read.`);
      }
      this.denyOwnAfterOpen(actual, requested, "read", target.scope);
    };
  }

  /**
   * tacit's own files, checked where a descriptor really leads: a name swapped for a link
   * between the check and the open could otherwise lead into them (a security review read the
   * secure output and wrote into tacit's home that way).
   */
  private denyOwnAfterOpen(actual: string, requested: string, what: "read" | "changed" | "written", scope: FileSystemScope): void {
    // `actual` lies inside the scope (each caller checks that first): only the protected paths around it can hold it.
    const own = protectedPathOf(this.protectedAround(scope), actual, actual, what === "read" ? "read" : "change", () => this.readOnlyAround(scope));
    if (own) {
      throw new PolicyDenial(`${requested}: the path changed while it was being opened and now leads to ${own.what}; nothing was ${what}.`);
    }
  }

  /** Opens a resolved file for reading, checked again after opening; runs `use` with it. */
  private withFileForReading<T>(
    target: Resolved & { scope: FileSystemScope },
    requested: string,
    mayBeClassified: boolean,
    use: (fd: number, size: number) => T,
  ): T {
    let fd: number;
    let stats: Stats;
    try {
      ({ fd, stats } = openForReading(target.real, this.afterOpen(target, requested, mayBeClassified)));
    } catch (error) {
      throw failure(requested, error);
    }
    try {
      return use(fd, stats.size);
    } catch (error) {
      throw failure(requested, error);
    } finally {
      closeSync(fd);
    }
  }

  private readContent(target: Resolved & { scope: FileSystemScope }, requested: string, encoding: "utf8" | "base64", mayBeClassified: boolean): string {
    return this.withFileForReading(target, requested, mayBeClassified, (fd, size) => readWhole(fd, size, requested, encoding));
  }

  /**
   * One piece of a file for forEachLine. With `margin`, the bytes just before and after the
   * piece come too (host-side only, never sent): a host secret split across two pieces is
   * still found (see host-secrets.ts).
   */
  readChunk(token: string, requested: string, offset: number, margin = 0): { chunk: Buffer; eof: boolean; before: Buffer; after: Buffer } {
    const target = this.resolve(token, requested, "read");
    this.denyClassified(target, requested, "forEachLine");
    return this.withFileForReading(target, requested, false, (fd) => {
      const start = Math.max(0, offset - margin);
      const buffer = Buffer.allocUnsafe(offset - start + CHUNK_BYTES + margin);
      let n = 0;
      for (let read = -1; read !== 0 && n < buffer.length; n += read) read = readSync(fd, buffer, n, buffer.length - n, start + n);
      const chunkEnd = Math.min(n, offset - start + CHUNK_BYTES);
      return {
        before: buffer.subarray(0, offset - start),
        chunk: buffer.subarray(Math.min(n, offset - start), chunkEnd),
        after: buffer.subarray(chunkEnd, n),
        eof: chunkEnd - (offset - start) < CHUNK_BYTES,
      };
    });
  }

  /**
   * Opens a classified file now (every check, and its errors, now) and returns what reads its
   * plaintext, for the classified store only, when the store wants it: after classified
   * writes still pending, which must not make this call wait (see the monitor).
   */
  openClassifiedRead(token: string, requested: string): () => string {
    const target = this.resolve(token, requested, "read");
    if (!target.classified) {
      throw new EffectFailure(`${requested}: readClassified() is for classified paths, and this one is not; use read().`);
    }
    const open = (): { fd: number; stats: Stats } => {
      try {
        return openForReading(target.real, this.afterOpen(target, requested, true));
      } catch (error) {
        throw failure(requested, error);
      }
    };
    // `stats` as of the open, if just opened: a descriptor held while writes land is looked at again.
    const read = (fd: number, stats?: Stats): string => {
      try {
        return readWhole(fd, (stats ?? fstatSync(fd)).size, requested, "utf8", true);
      } catch (error) {
        throw failure(requested, error);
      } finally {
        closeSync(fd);
      }
    };
    const { fd, stats } = open();
    // No classified write pending on this file: what it holds now is what a read after the
    // pending writes would find, so it is read now, and one that is not UTF-8 is refused now,
    // visibly (only tacit's writes, always UTF-8, could make that depend on a secret). Any
    // other failure of the read (the file too large, an I/O error) stays out of sight, as it
    // was: it tells of the content (its size).
    if (!pendingClassifiedWrites.has(fileIdentity(stats))) {
      let text: string;
      try {
        text = read(fd, stats);
      } catch (error) {
        if (error instanceof NotUtf8Text) throw error;
        return () => {
          throw error;
        };
      }
      return () => text;
    }
    // A write pending on it: read once the writes before this read have landed, as any read
    // was; a content that is not UTF-8 then (only a writer outside tacit could put it there)
    // fails the value out of sight, never decoded lossily.
    const held = this.holdDescriptor(fd);
    // Past the limit it is opened again, with every check, when the store reads it; a failure
    // then is the store's, out of sight, as for any value.
    return held
      ? () => read(held.release())
      : () => {
          const reopened = open();
          return read(reopened.fd, reopened.stats);
        };
  }

  /** Descriptors kept open for classified work still pending (see holdDescriptor). */
  private heldDescriptors = 0;

  /**
   * Keeps `fd` open for a classified read or write done later, within HELD_DESCRIPTORS_LIMIT;
   * past it, closes `fd` and returns null (the caller opens the file again when the value is
   * there). A security review held one per call while a slow value was pending, 20,000 in 6 s,
   * and every open in the host (other sessions' included) failed with EMFILE. Which way a
   * call went shows nowhere: the file was checked (and created) now either way.
   */
  private holdDescriptor(fd: number): { release: () => number } | null {
    if (this.heldDescriptors >= HELD_DESCRIPTORS_LIMIT) {
      closeSync(fd);
      return null;
    }
    this.heldDescriptors++;
    return {
      release: () => {
        this.heldDescriptors--;
        return fd;
      },
    };
  }

  /**
   * Creates or empties a classified file now (every check, and its errors, now) and returns
   * what fills it, through the descriptor opened now, once the value is known; null leaves it
   * empty. So whether a value could be computed, and when, changes nothing a script can see:
   * the file exists at once either way, and a later rename, delete or link swap cannot
   * redirect the plaintext. `beforeEffect`: told once the checks have passed, before the file is
   * created or emptied (see BeforeEffect).
   */
  openClassifiedWrite(token: string, requested: string, beforeEffect: BeforeEffect = NOTHING_TO_LOG): (content: string | null) => void {
    // Its checks share what they find of the places above (operation-memo.ts); the value is written later, outside.
    return fileOperation(() => this.openClassifiedWriteNow(token, requested, beforeEffect));
  }

  private openClassifiedWriteNow(token: string, requested: string, beforeEffect: BeforeEffect): (content: string | null) => void {
    const target = this.resolve(token, requested);
    // Where the bytes land must be classified: a classified name linking to an ordinary
    // file would copy the secret out.
    if (!this.policy.classified.matches(target.real)) {
      throw new PolicyDenial(
        `${requested}: writeClassified() refused: the path is not classified (or links to one that is not), so the secret would become readable. ` +
          "Write it under a classified path (--classified-paths, config libraryConfig.classifiedPaths).",
      );
    }
    this.denyClassifiedWrite(target, requested, "writeClassified");
    // A confined command's view covers the classified files there were when it started: one made
    // now it could read (a confined `sh` in one session printed the .env another session's
    // writeClassified copied to src/.env.copy meanwhile), and so one made, renamed or linked there
    // since (by the command itself: it made src/.env.copy, and another session's copy filled it).
    const existing = lstatSync(target.real, { throwIfNoEntry: false });
    const confined = confinedCommandOver(target.real, existing);
    if (confined !== null && existing === undefined) {
      throw new PolicyDenial(
        `${requested}: writeClassified() refused: it would make a new classified file while a confined command (exec("${confined}"), ` +
          "--confine-commands) runs in this allowed root, and that command's view, made when it started, does not cover a file made since: " +
          "it could read the secret. Write it once that command has ended, or to a classified file that exists already.",
      );
    }
    if (confined !== null) {
      throw new PolicyDenial(
        `${requested}: writeClassified() refused: the file (or a directory it is in) was made, renamed or changed there since a confined command (exec("${confined}"), ` +
          "--confine-commands) that runs in this allowed root started, and that command's view, made when it started, covers only the " +
          "classified files there were then, unchanged (the command may have made this one): it could read the secret. Write it once that " +
          "command has ended, or to a classified file that has not changed since it started.",
      );
    }
    // Files whose writes are judged by what they would hold: a secret's could not be judged unseen.
    const judged = contentJudgedFileAt([target.named, target.real]);
    if (judged !== null) {
      throw new PolicyDenial(
        `${requested}: writeClassified() refused: this is ${judged} and a secret written there could not be checked for that without ` +
          "telling you something about it. Write the secret to another classified path.",
      );
    }
    const fd = this.openForWriting(target, requested, false, true, beforeEffect);
    let identity: string;
    try {
      identity = fileIdentity(fstatSync(fd));
    } catch (error) {
      closeSync(fd);
      throw failure(requested, error);
    }
    const landed = notePendingClassifiedWrite(identity);
    const held = this.holdDescriptor(fd);
    if (held) {
      return (content) => {
        try {
          const heldFd = held.release();
          try {
            refuseLoneSurrogates(content, requested);
            refuseZipArchive(content, requested);
          } catch (error) {
            closeSync(heldFd);
            throw error;
          }
          writeAndClose(heldFd, content, requested, true);
        } finally {
          landed();
        }
      };
    }
    // Created (or emptied) now; filled through a descriptor opened, with every check, then,
    // and never created again: a file the script deleted meanwhile stays deleted whether or
    // not the value could be computed (its coming back would tell). Nor is another file put at
    // its name meanwhile filled (see openForWriting's sameFileAs).
    return (content) => {
      try {
        refuseLoneSurrogates(content, requested);
        refuseZipArchive(content, requested);
        // Filled as part of the write decided (and logged) when the file was created.
        if (content !== null) writeAndClose(this.openForWriting(target, requested, false, true, NOTHING_TO_LOG, false, false, identity), content, requested, true);
      } finally {
        landed();
      }
    };
  }

  /** `beforeEffect`: told once the checks have passed, before the file is opened to be written (see BeforeEffect). */
  write(token: string, requested: string, content: string, append: boolean, beforeEffect: BeforeEffect = NOTHING_TO_LOG): void {
    // Its checks (before and after opening) share what they find of the places above (operation-memo.ts).
    fileOperation(() => {
      // First with the final name taken as it is (see writeNow), unless the gate judged where the
      // path leads or watches where it is found to lead (a refusal then must say the full way).
      const watch = this.watchedPath;
      if (this.judgedRealOf(token, requested) === null && (watch === null || watch.token !== token || watch.requested !== requested)) {
        try {
          return this.writeNow(token, requested, content, append, beforeEffect, true);
        } catch (error) {
          if (!(error instanceof FinalNeedsResolving)) throw error;
        }
      }
      this.writeNow(token, requested, content, append, beforeEffect, false);
    });
  }

  /**
   * write(), its path resolved in full, or (`finalAsNamed`) with every directory on the way
   * resolved as always and the final name taken as it is, not looked at: the look at it in its
   * verified directory just before the open (openForWriting) tells whether it is a link. Where
   * it is, or where the checks would read the file's content (contentJudgedFileAt), this throws
   * FinalNeedsResolving before anything is read, decided or changed, and write() starts again
   * in full. Otherwise the final name was no link, so the full resolution would have found the
   * same path and passed the same checks: one lstat fewer of a write's two of its final name
   * (the same lookup, by name and then in the verified directory).
   */
  private writeNow(token: string, requested: string, content: string, append: boolean, beforeEffect: BeforeEffect, finalAsNamed: boolean): void {
    const target = this.resolve(token, requested, "change", finalAsNamed);
    if (finalAsNamed && contentJudgedFileAt([target.named, target.real]) !== null) throw new FinalNeedsResolving();
    this.denyClassifiedWrite(target, requested, append ? "append" : "write");
    // What the file holds now, read once for the checks that judge a write by what it leaves.
    // Not that of a classified file: a refusal judged on it told a script about the secret (an
    // append past 1 MiB its size to the byte, an append refused for "folderOpen" a word in it),
    // so a write a check would judge on it is refused unread, as writeClassified is there.
    let held: ManifestText | undefined;
    const before = (): ManifestText => {
      if (target.classified) {
        throw new PolicyDenial(
          `${requested}: ${append ? "append" : "write"} refused: the path is classified, and tacit judges a write here by what the file ` +
            "holds now, which would tell you something about the secret; nothing was written. Ask the user to change it.",
        );
      }
      return held === undefined ? (held = readManifest(target.real)) : held;
    };
    this.denyTacitBin(target, requested, before, content, append);
    this.denyAutomaticTask(target, requested, before, content, append);
    this.denyHusky4Hooks(target, requested, before, content, append);
    this.denyAllowedEnvrc(target, requested, before, content, append);
    this.writeResolved(target, requested, content, append, beforeEffect, finalAsNamed);
  }

  /** A package.json whose `"husky"` key an installed husky 4 runner reads may change in every way but that key (see hook-managers.ts). */
  private denyHusky4Hooks(target: Resolved, requested: string, held: () => ManifestText, content: string, append: boolean): void {
    const runner = husky4RunnerFor([target.real, target.named]);
    if (runner === null) return;
    const before = held();
    const after = textAfter(before, content, append);
    if (before !== TOO_LONG && after !== TOO_LONG && husky4KeyOf(before) === husky4KeyOf(after)) return;
    throw new PolicyDenial(
      `${requested}: ${append ? "append" : "write"} refused: this would change the "husky" key of a package.json whose hooks husky 4's runner, ` +
        `installed as ${runner}, reads at every git commit or push and runs with the user's full authority, outside the sandbox ` +
        "(a package.json too long to judge is refused too). The rest of the file may change. Ask the user to change the hooks; nothing was written.",
    );
  }

  /** An .envrc direnv has records of may not come to hold a content it allowed before (see direnv-trust.ts). */
  private denyAllowedEnvrc(target: Resolved, requested: string, held: () => ManifestText, content: string, append: boolean): void {
    const recorded = envrcRecordsAt([target.named, target.real]);
    if (recorded.length === 0) return;
    // A whole write is judged by its content alone, but its refusal would tell whether a guess is a content the user allowed, the one it holds now included.
    if (target.classified) held();
    const refusal = envrcRecordChange(recorded, textAfter(append ? held() : null, content, append));
    if (refusal) throw new PolicyDenial(`${requested}: ${append ? "append" : "write"} refused: ${refusal}; nothing was written.`);
  }

  /**
   * A file VS Code reads tasks from may not come to hold a task run when the folder opens, nor a
   * Dev Container configuration a command run on the host when the container is (see automatic-tasks.ts),
   * nor a cargo configuration a program cargo runs at every command (see cargo-config.ts), nor VS
   * Code's settings (a workspace file's too) another program an editor starts (see editor-settings.ts), nor a
   * Python start file in site-packages code Python runs at every start (see python-startup.ts).
   */
  private denyAutomaticTask(target: Resolved, requested: string, held: () => ManifestText, content: string, append: boolean): void {
    const files = [target.named, target.real];
    const after = (): string | typeof TOO_LONG => textAfter(append ? held() : null, content, append);
    const pythonStart = pythonStartupFileAt(files);
    const refusal =
      (isTaskFileAt(files) ? automaticTaskChange(after()) : null) ??
      (isDevContainerConfigAt(files) ? devContainerInitializeChange(after()) : null) ??
      (isCargoConfigAt(files) ? cargoProgramChange(after()) : null) ??
      (isEditorSettingsAt(files) ? editorProgramChange(held(), textAfter(held(), content, append)) : null) ??
      (pythonStart !== null ? pythonStartupChange(pythonStart, after()) : null) ??
      // Any file: a .pth line may name it (see pythonZipArchiveChange).
      pythonZipArchiveChange(content, append);
    if (refusal) throw new PolicyDenial(`${requested}: ${append ? "append" : "write"} refused: ${refusal}; nothing was written.`);
  }

  /** A project package.json may not come to declare a program npx would run as tacit (see launch-files.ts). */
  private denyTacitBin(target: Resolved, requested: string, held: () => ManifestText, content: string, append: boolean): void {
    // Only a package.json is read before the write.
    if (!isLaunchManifestAt([target.named, target.real])) return;
    const before = held();
    const refusal = tacitBinChange(before, textAfter(before, content, append));
    if (refusal) throw new PolicyDenial(`${requested}: ${append ? "append" : "write"} refused: ${refusal}; nothing was written.`);
  }

  /** A directory an entry is made or removed in must really be inside the scope. */
  private directoryCheck(target: Resolved & { scope: FileSystemScope }, requested: string): (actualDir: string) => void {
    return (actualDir) => {
      if (!isWithin(actualDir, target.scope.realRoot)) {
        throw new PolicyDenial(`${requested}: the path changed while it was being used and now leads outside this file system scope; nothing was changed.`);
      }
      this.denyOwnAfterOpen(actualDir, requested, "changed", target.scope);
    };
  }

  /** What may be where a write really lands (checked after opening). */
  private writeDestinationCheck(target: Resolved & { scope: FileSystemScope }, requested: string, mustBeClassified: boolean): (actual: string) => void {
    return (actual) => {
      if (!isWithin(actual, target.scope.realRoot)) {
        throw new PolicyDenial(`${requested}: the path changed while it was being opened and now leads outside this file system scope; nothing was written.`);
      }
      const classified = this.policy.classified.matches(actual);
      if ((classified && !this.policy.classifiedWrite) || (mustBeClassified && !classified)) {
        throw new PolicyDenial(`${requested}: the path changed while it was being opened and now leads somewhere this write may not go; nothing was written.`);
      }
      // Where the write lands is the very path resolve() checked for a change, in this same file
      // operation: its checks are functions of that string and of what the operation's memos
      // hold of the places around it (operation-memo.ts), so asked again they answer the same,
      // with no system call, at a fifth of a small write's host time. Any other path, and a
      // write carried out in a later operation (a writeClassified filled once its value is
      // computed), is checked in full, as things are now.
      if (actual === target.real && target.use === "change" && target.operation !== null && target.operation === operationUnderWay()) return;
      this.denyOwnAfterOpen(actual, requested, "written", target.scope);
    };
  }

  /** `finalUnresolved`: resolve() took the final name as it is (see writeNow). */
  private writeResolved(target: Resolved & { scope: FileSystemScope }, requested: string, content: string, append: boolean, beforeEffect: BeforeEffect, finalUnresolved: boolean): void {
    writeAndClose(this.openForWriting(target, requested, append, false, beforeEffect, true, finalUnresolved), content, requested, false, append);
  }

  /**
   * Opens the file a write goes to (created if missing and `create`, 0600 at a classified path, emptied unless appending), checked in
   * its verified directory. A file with other hard links is refused before anything changes:
   * writing it would change it under its other names too, which may be outside the scope or
   * not classified; so is a set-user-ID or set-group-ID file (see refuseSetId).
   */
  private openForWriting(
    target: Resolved & { scope: FileSystemScope },
    requested: string,
    append: boolean,
    mustBeClassified: boolean,
    beforeEffect: BeforeEffect,
    create = true,
    finalUnresolved = false,
    /**
     * The file (fileIdentity) a classified write past the held descriptors created or emptied when
     * asked: any other found at its name when the value lands is left as it is. A file a confined
     * command put there got the secret (its 0644 mode, not 0600), and whether it had yet, by the
     * time a secret's map took, showed in a readClassified refused there as not UTF-8.
     */
    sameFileAs: string | null = null,
  ): number {
    // The root is a directory; its parent, where the open below starts, is outside the scope, and
    // a write to "." was refused as a path that "changed while it was being used".
    if (target.real === target.scope.realRoot) throw new EffectFailure(`${requested}: is a directory (the scope's root)`);
    const check = this.writeDestinationCheck(target, requested, mustBeClassified);
    const name = path.basename(target.real);
    // target.classified judges both the name and where it leads (isClassified).
    const classifiedDestination = mustBeClassified || target.classified;
    try {
      return inVerifiedDirectory(path.dirname(target.real), this.directoryCheck(target, requested), (dir, actualDir) => {
        if (target.judged && path.join(actualDir, name) !== target.real) throw changedSinceJudged(requested, path.join(actualDir, name), scopeBounds(target.scope));
        check(path.join(actualDir, name));
        // Where the write lands now, if elsewhere than where its content was judged: a directory on
        // the way swapped for a link led a write judged as going to d/tasks.json into .vscode/.
        if (path.join(actualDir, name) !== target.real && contentJudgedFileAt([path.join(actualDir, name)]) !== null) {
          throw new PolicyDenial(
            `${requested}: the path changed while it was being opened and now leads to a file tacit judges writes to by what they would leave ` +
              "(a task file, a Dev Container configuration, a cargo configuration, VS Code's settings, a Python start file, a package.json npx or husky reads, an .envrc direnv allowed before); nothing was written.",
          );
        }
        // O_NOFOLLOW: a link swapped in as the file itself is not followed either.
        const flags = constants.O_WRONLY | (create ? constants.O_CREAT : 0) | constants.O_NOFOLLOW | constants.O_NONBLOCK | (append ? constants.O_APPEND : 0);
        // Decided before the open (the audit log's decision comes before the effect), and again on what was opened.
        const existing = lstatSync(path.join(dir, name), { throwIfNoEntry: false });
        // A link where resolve() did not look (see writeNow): resolved in full and checked again, nothing done yet.
        if (finalUnresolved && existing?.isSymbolicLink()) throw new FinalNeedsResolving();
        refuseNotRegular(existing, requested);
        refuseHardLinked(existing, requested);
        refuseSetId(existing, requested);
        // Every check before opening has passed; the open may create the file.
        beforeEffect();
        // A file created at a classified path is owner-only from the open() that creates it
        // (writeClassified puts plaintext secrets there); never chmod after, which leaves a
        // moment in which others may open it. An existing file keeps its mode.
        const fd = openSync(path.join(dir, name), flags, classifiedDestination ? 0o600 : 0o666);
        try {
          const stats = fstatSync(fd);
          if (!stats.isFile()) throw new EffectFailure(`${requested}: not a regular file`);
          refuseHardLinked(stats, requested);
          refuseSetId(stats, requested);
          if (sameFileAs !== null && fileIdentity(stats) !== sameFileAs) {
            throw new EffectFailure(
              `${requested}: writeClassified() wrote nothing: the file it created or emptied when asked was replaced (deleted, and another put ` +
                "at its name) before the value was computed, and the value goes to that file alone. Write it again to the file there now.",
            );
          }
          if (!append) ftruncateSync(fd, 0);
          return fd;
        } catch (error) {
          closeSync(fd);
          throw error;
        }
      });
    } catch (error) {
      if (error instanceof FinalNeedsResolving) throw error;
      // The directory to write in is missing (the open of it failed): say which, and how to make it.
      const e = error as NodeJS.ErrnoException;
      if (e.code === "ENOENT" && e.syscall === "open" && e.path === path.dirname(target.real)) {
        // The directory missing is where the path leads, named under the scope's root as the script
        // names it: for a link on the way, not the link's own directory (which exists: told to
        // make that, a script made nothing and failed again). It lies in the scope (resolve()).
        const dir = path.join(target.scope.root, path.relative(target.scope.realRoot, path.dirname(target.real)));
        const through = dir === path.dirname(target.named) ? "" : ` (a symbolic link on the way leads to ${path.join(dir, path.basename(target.real))})`;
        throw new EffectFailure(`${requested}: no such directory ${dir}${through}; make it first: fs.access(${JSON.stringify(dir)}).mkdir() (which makes its parents too)`);
      }
      throw failure(requested, error);
    }
  }

  /**
   * Its checks (before and after opening the directory) share what they find of the places above (operation-memo.ts).
   * `beforeEffect`: told once they have passed, before the entry is removed (see BeforeEffect).
   */
  delete(token: string, requested: string, beforeEffect: BeforeEffect = NOTHING_TO_LOG): void {
    fileOperation(() => this.deleteNow(token, requested, beforeEffect));
  }

  private deleteNow(token: string, requested: string, beforeEffect: BeforeEffect): void {
    const target = this.resolve(token, requested);
    this.denyClassifiedWrite(target, requested, "delete");
    if (target.real === target.scope.realRoot) throw new PolicyDenial(`${requested}: the scope's root itself cannot be deleted`);
    this.denyRemovingOwn(target.named, target.real, requested);
    this.denyDeclassifying(target.named, requested);
    // A link is removed itself, never what it points to: the entry is named inside its
    // parent directory, opened and verified to be inside the scope.
    const name = path.basename(target.named);
    try {
      const parent = resolveReal(path.dirname(target.named), "refuse", insideOf(target.scope.realRoot));
      inVerifiedDirectory(parent, this.directoryCheck(target, requested), (dir, actualDir) => {
        const actual = path.join(actualDir, name);
        // The entry itself is removed: where it leads (itself, or a link's target) is what was judged.
        if (target.judged && resolveRealOrSelf(actual) !== target.real) throw changedSinceJudged(requested, actual, scopeBounds(target.scope));
        this.writeDestinationCheck(target, requested, false)(actual);
        // Again where the entry really is: a directory on the way swapped for a link after the
        // check let a security review remove the link on the way to tacit's home.
        this.denyRemovingOwn(actual, resolveRealOrSelf(actual), requested);
        this.denyDeclassifying(actual, requested);
        const entry = path.join(dir, name);
        const isDirectory = lstatSync(entry).isDirectory();
        beforeEffect();
        if (isDirectory) rmdirSync(entry);
        else unlinkSync(entry);
      });
    } catch (error) {
      throw failure(requested, error);
    }
  }

  /** Refuses to remove a link an absolute classified pattern leads through (see ClassifiedPaths.classifiesThrough). */
  private denyDeclassifying(entry: string, requested: string): void {
    // Only a link: a directory on the way is not empty (the link is in it), and a prefix that is a directory of its own changes nothing.
    if (this.policy.classified.classifiesThrough(entry) && isLink(entry)) {
      throw new PolicyDenial(
        `${requested}: delete refused: a classified pattern (--classified-paths) names the files behind this link through it, and removing it would leave them unclassified. Work with other files.`,
      );
    }
  }

  /** Refuses to remove what tacit's own files lie inside or behind (named or really). */
  private denyRemovingOwn(named: string, real: string, requested: string): void {
    const below = protectedPathBelow(this.policy.protectedPaths, named, real);
    if (below) {
      throw new PolicyDenial(
        `${requested}: refused: ${below.what} lies inside it or behind it, and removing it would let a script put files of its own where tacit looks for its own. Work with other files.`,
      );
    }
  }

  /**
   * Creates the directory and its missing parents one at a time, each inside a verified parent.
   * The checks of every level share what they find of the places above (operation-memo.ts).
   * `beforeEffect`: told before the first directory is made, once its checks have passed (see BeforeEffect).
   */
  mkdir(token: string, requested: string, beforeEffect: BeforeEffect = NOTHING_TO_LOG): void {
    fileOperation(() => this.mkdirNow(token, requested, beforeEffect));
  }

  private mkdirNow(token: string, requested: string, beforeEffect: BeforeEffect): void {
    const target = this.resolve(token, requested);
    this.denyClassifiedWrite(target, requested, "mkdir");
    const check = this.directoryCheck(target, requested);
    const destination = this.writeDestinationCheck(target, requested, false);
    const missing: string[] = [];
    let existing = target.real;
    try {
      while (!existsAsDirectory(existing)) {
        missing.unshift(path.basename(existing));
        existing = path.dirname(existing);
      }
      let parent = existing;
      for (const name of missing) {
        const expected = path.join(parent, name);
        parent = inVerifiedDirectory(parent, check, (dir, actualDir) => {
          const made = path.join(actualDir, name);
          if (target.judged && made !== expected) throw changedSinceJudged(requested, made, scopeBounds(target.scope));
          destination(made);
          // A directory made at a classified path is owner-only from the mkdir() that makes it, as a
          // file made there is (0600): made 0777 less the umask, it was 0777 under umask 000, where
          // any user could rename the secrets writeClassified put there and plant files of their own.
          const classified = this.policy.classified.matches(made) || (target.classified && made === target.real);
          beforeEffect();
          try {
            mkdirSync(path.join(dir, name), classified ? 0o700 : 0o777);
          } catch (error) {
            // Made meanwhile is fine; a file of that name is not, and is named: "already exists" of
            // mkdir("notes.txt/sub") told a script that notes.txt/sub existed.
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
            if (!existsAsDirectory(path.join(dir, name))) {
              const inTheWay = path.join(target.scope.root, path.relative(target.scope.realRoot, made));
              const what = inTheWay === target.named ? "already exists" : `${inTheWay} already exists`;
              throw new EffectFailure(`${requested}: ${what} and is not a directory, so no directory can be made there. Delete it first, or choose another path`);
            }
          }
          return made;
        });
      }
      // The last one made must be a directory inside the scope, however it was reached.
      inVerifiedDirectory(parent, check, () => undefined);
    } catch (error) {
      throw failure(requested, error);
    }
  }

  /**
   * children() and walk(): listed here up to MAIN_THREAD_LIST_ENTRIES entries, and past that
   * again in the search worker, as find() is, so that a directory of many entries holds that
   * thread and not the host's (every session of a tacit serve waited for a walk of 300,000).
   * A small listing does not wait for the worker to start.
   */
  async list(token: string, requested: string, recursive: boolean): Promise<string[]> {
    const target = this.resolve(token, requested, "read");
    const request = { dir: target.named, realDir: target.real, realRoot: target.scope.realRoot, recursive, exact: target.judged === true };
    const call = `${recursive ? "walk" : "children"}() of ${quoted(requested)}`;
    try {
      if (!this.existingResolved(target, requested, true).isDirectory()) throw new EffectFailure(`${requested}: not a directory`);
      const found = listEntries(request, MAIN_THREAD_LIST_ENTRIES);
      this.warnLeftOut(call, found.leftOut);
      return found.paths;
    } catch (error) {
      if (error instanceof EffectFailure || error instanceof PolicyDenial) throw error;
      if (error instanceof PathChanged) throw changedSinceJudged(requested, target.real, scopeBounds(target.scope));
      if (error instanceof DirectoryChanged) throw new PolicyDenial(directoryChangedText(requested));
      if (!(error instanceof TooManyEntries)) throw failure(requested, error);
    }
    const reply = await this.grep.run({ op: "list", pattern: "", ...request });
    if (!(reply.ok && "paths" in reply)) throw searchFailure(requested, recursive ? "walk()" : "children()", reply);
    this.warnLeftOut(call, reply.leftOut);
    return reply.paths;
  }

  /** The host's secrets, made at the first warning (see warnLeftOut). */
  private hostSecrets: HostSecrets | null = null;

  /**
   * One warning for a call that left out entries it could not read (see left-out.ts): how many,
   * the first few and why, so that the script's author does not take the answer for the whole
   * tree. Paths are as the script named them, quoted (a name may hold a line break); nothing the
   * policy leaves out is counted, so none is named.
   */
  private warnLeftOut(call: string, leftOut: LeftOut): void {
    if (leftOut.count === 0) return;
    // Masked before a long path is cut and quoted: the whole warning is masked again as it is
    // given, but a key cut in two, or quoted (a " or \ in it escaped), was no longer the key there.
    this.hostSecrets ??= new HostSecrets(this.policy.hostSecrets);
    const secrets = this.hostSecrets;
    const named = leftOut.first.map(({ path: entry, reason }) => `${quoted(secrets.scrubText(entry))} (${reason})`);
    const more = leftOut.count - leftOut.first.length;
    this.warn(
      `${call}: ${leftOut.count === 1 ? "1 entry" : `${leftOut.count} entries`} could not be read and ${leftOut.count === 1 ? "is" : "are"} left out of its answer: ` +
        `${named.join(", ")}${more > 0 ? `, and ${more} more` : ""}. The answer holds the rest; do not take it for the whole tree. ` +
        "Search or list elsewhere, or ask the user to make these readable",
    );
  }

  /**
   * The search's directory must exist and be one: searched as an unreadable directory, a missing
   * one or a file gave no match, where grep -r names the missing one and searches the file.
   */
  private requireDirectory(target: Resolved & { scope: FileSystemScope }, requested: string, notDirectory: string): void {
    try {
      if (!this.existingResolved(target, requested, true).isDirectory()) throw new EffectFailure(`${requested}: ${notDirectory}`);
    } catch (error) {
      if (error instanceof EffectFailure || error instanceof PolicyDenial) throw error;
      throw failure(requested, error);
    }
  }

  async find(token: string, requested: string, glob: string): Promise<string[]> {
    const target = this.resolve(token, requested, "read");
    this.requireDirectory(target, requested, "not a directory");
    // Globs become regular expressions: matched in the worker, like grep patterns.
    const reply = await this.grep.run({
      op: "find",
      pattern: "",
      dir: target.named,
      realDir: target.real,
      realRoot: target.scope.realRoot,
      exact: target.judged === true,
      glob,
      hostSecrets: this.policy.hostSecrets,
    });
    if (!(reply.ok && "paths" in reply)) throw searchFailure(requested, `find glob ${JSON.stringify(glob)}`, reply);
    this.warnLeftOut(`find(${quoted(requested)}, ${quoted(glob)})`, reply.leftOut);
    return reply.paths;
  }

  async grepFile(token: string, requested: string, pattern: string): Promise<GrepMatch[]> {
    const target = this.resolve(token, requested, "read");
    this.denyClassified(target, requested, "grep");
    return this.search(requested, pattern, `grep(${quoted(requested)})`, {
      op: "grep",
      named: target.named,
      real: target.real,
      realRoot: target.scope.realRoot,
      exact: target.judged === true,
      classifiedPatterns: this.searchExclusions(),
      hostSecrets: this.policy.hostSecrets,
      pattern,
    });
  }

  async grepRecursive(token: string, requested: string, pattern: string, glob: string | null): Promise<GrepMatch[]> {
    const target = this.resolve(token, requested, "read");
    // A classified directory holds nothing grepRecursive may read.
    if (target.classified) return [];
    this.requireDirectory(target, requested, "not a directory; grepRecursive() searches the files under a directory, grep() searches one file");
    const call = `grepRecursive(${quoted(requested)}, ${quoted(pattern)}${glob === null ? "" : `, ${quoted(glob)}`})`;
    return this.search(requested, pattern, call, {
      op: "grepRecursive",
      dir: target.named,
      realDir: target.real,
      realRoot: target.scope.realRoot,
      exact: target.judged === true,
      pattern,
      glob,
      classifiedPatterns: this.searchExclusions(),
      hostSecrets: this.policy.hostSecrets,
      linkSkips: this.policy.searchSkips,
    });
  }

  /** What a search never opens: classified paths and tacit's own files. */
  private searchExclusions(): string[] {
    // As this evaluation matches them (absolute prefixes resolved when it began), not as written.
    return [...this.policy.classified.resolvedPatterns, ...asSearchExclusions(this.policy.protectedPaths)];
  }

  private async search(requested: string, pattern: string, call: string, job: Parameters<GrepRunner["run"]>[0]): Promise<GrepMatch[]> {
    const reply = await this.grep.run(job);
    if (!(reply.ok && "matches" in reply)) throw searchFailure(requested, `grep pattern /${pattern}/`, reply);
    this.warnLeftOut(call, reply.leftOut);
    return reply.matches;
  }
}

/** A path, pattern or glob of the script's as a warning shows it: quoted, cut if long, every invisible character escaped. */
function quoted(text: string): string {
  return printable(JSON.stringify(shortened(text)));
}

/** The error for a search that did not answer as asked; `pattern` names the pattern or glob. */
function searchFailure(requested: string, pattern: string, reply: GrepReply): Error {
  if (reply.ok) return new EffectFailure(`${requested}: unexpected reply from the search worker`);
  if (reply.failure === "invalid-pattern") return new EffectFailure(`${pattern} is not a valid regular expression: ${reply.message}`);
  if (reply.failure === "changed") return new PolicyDenial(directoryChangedText(requested));
  if (reply.failure === "refused") {
    return new PolicyDenial(
      `${requested}: the path changed while it was being opened and now leads outside this file system scope, to a classified file, or elsewhere than where the policy's rules were applied to it; nothing was searched.`,
    );
  }
  return new EffectFailure(`${requested}: ${ERRNO_TEXT[reply.message] ?? hostFreeErrorText(new Error(reply.message), requested)}`);
}

/**
 * The whole content of an open file of `size` bytes (read on if it grows), within READ_LIMIT_BYTES.
 * `classified`: for readClassified(), which has no stream to point to (forEachLine refuses a
 * classified file, so its advice sent the reader of the secure output nowhere), and which takes
 * UTF-8 alone (NotUtf8Text): a Classified value is text, and a lossy decode changed the bytes.
 */
function readWhole(fd: number, size: number, requested: string, encoding: "utf8" | "base64", classified = false): string {
  if (size > READ_LIMIT_BYTES) {
    throw new EffectFailure(
      classified
        ? `${requested}: ${size} bytes is more than readClassified() reads into one value (${READ_LIMIT_BYTES}); a classified file this large cannot be read`
        : `${requested}: ${size} bytes is more than read() returns at once (${READ_LIMIT_BYTES}); use forEachLine() to stream it.`,
    );
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    // One byte more than the size fstat gave: a short read means the end, without a
    // second read to find out; a file that grew meanwhile is read on.
    const buffer = Buffer.allocUnsafe(Math.max(size - total, 0) + (chunks.length === 0 ? 1 : 64 * 1024));
    const n = readSync(fd, buffer, 0, buffer.length, null);
    // The usual case: the first read came back short, with the whole file (at most `size` bytes,
    // within the limit), decoded where it lies, without a piece cut from it or a list to hold it.
    if (chunks.length === 0 && n < buffer.length) {
      if (classified && !isUtf8(buffer.subarray(0, n))) throw new NotUtf8Text(requested);
      return buffer.toString(encoding, 0, n);
    }
    total += n;
    if (total > READ_LIMIT_BYTES) {
      throw new EffectFailure(`${requested}: grew past ${READ_LIMIT_BYTES} bytes while being read${classified ? "" : "; use forEachLine()"}.`);
    }
    chunks.push(buffer.subarray(0, n));
    if (n < buffer.length) break;
  }
  const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  if (classified && !isUtf8(whole)) throw new NotUtf8Text(requested);
  return whole.toString(encoding);
}

/**
 * Refuses to write a FIFO, socket or device before opening it: opening one is an effect of its
 * own (it woke a process blocked on the FIFO's other end, and a device's open can reset a serial
 * board or arm a watchdog), and what the open said told a script about other processes: a FIFO
 * nobody read failed "no such device or address (ENXIO)", one a process read "not a regular file".
 * A directory fails the open as it did (is a directory); one swapped in after this look is refused
 * on what was opened.
 */
function refuseNotRegular(stats: Stats | undefined, requested: string): void {
  if (!opensWithEffect(stats)) return;
  throw new EffectFailure(`${requested}: not a regular file (a FIFO, socket or device); nothing was opened or written. Write to a regular file.`);
}

/**
 * Refuses to write a regular file with other hard links: writing it would change it under its other
 * names too, which may be outside the scope or not classified. Nothing to refuse for no file yet.
 */
function refuseHardLinked(stats: Stats | undefined, requested: string): void {
  if (stats === undefined || !stats.isFile() || stats.nlink <= 1) return;
  throw new PolicyDenial(
    `${requested}: refused: the file has ${stats.nlink} hard links, and writing it would change it under its other names too ` +
      "(which may be outside this scope, or not classified); nothing was written. Delete it first (that removes only this name), then write a new file.",
  );
}

/** The mode bits S_ISUID and S_ISGID (Node's fs.constants has neither). */
const SET_USER_ID = 0o4000;
const SET_GROUP_ID = 0o2000;

/**
 * Refuses to write a file whose mode has the set-user-ID or set-group-ID bit: it runs with its
 * owner's (or group's) authority whoever starts it. The kernel clears those bits when a process
 * without CAP_FSETID writes the file, but tacit run as root (a container's usual user) kept them:
 * a script's rewrite of a set-user-ID root program stayed set-user-ID root, for any user of the
 * machine to run. Nothing to refuse for no file yet (tacit creates none with those bits).
 */
function refuseSetId(stats: Stats | undefined, requested: string): void {
  if (stats === undefined || !stats.isFile() || (stats.mode & (SET_USER_ID | SET_GROUP_ID)) === 0) return;
  const bits = [stats.mode & SET_USER_ID ? "set-user-ID" : "", stats.mode & SET_GROUP_ID ? "set-group-ID" : ""].filter((bit) => bit !== "").join(" and ");
  throw new PolicyDenial(
    `${requested}: refused: the file is ${bits} (mode ${(stats.mode & 0o7777).toString(8)}), so whoever runs it runs it with its owner's ` +
      "(or group's) authority, and a write by tacit could keep that bit over new content; nothing was written. Delete it first, then write a new file " +
      "(tacit makes files without those bits).",
  );
}

/**
 * Writes `content` (null: nothing) to a descriptor from openForWriting, and closes it; `whole`: the
 * file is to hold `content` alone; `append`: the descriptor appends (O_APPEND).
 *
 * A write that fails part way (the disk full, ENOSPC; past the file size limit, EFBIG; a quota,
 * EDQUOT) leaves nothing of what it wrote: an append's bytes are cut off again, and a whole
 * write's file is left empty (it was emptied before writing). The script was told only "no space
 * left on device", while the file held the head of what it wrote: an append it would retry, and a
 * prefix of a content tacit judged whole (a package.json whose unparsable whole declared nothing,
 * whose head, cut where the disk filled, declared a program `npx tacit` runs).
 */
function writeAndClose(fd: number, content: string | null, requested: string, whole = false, append = false): void {
  let written = 0;
  try {
    const bytes = Buffer.from(content ?? "", "utf8");
    while (written < bytes.length) written += writeSync(fd, bytes, written);
    // A classified write's file was emptied when the write was asked for, but one asked for
    // before it may have landed since (they land in the order asked, each once its value is
    // computed): the file holds this value alone, not its head over the longer one's tail.
    if (whole) ftruncateSync(fd, bytes.length);
  } catch (error) {
    const undone = undoPartialWrite(fd, written, append);
    const refusal = failure(requested, error);
    if (undone === null) throw refusal;
    throw new EffectFailure(`${refusal.message}; ${undone}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Takes back what a failed write wrote (see writeAndClose): an append's `written` bytes at the
 * end, or a whole write's file, emptied. What the file holds now, for the error; null where it
 * could not be taken back (the file is as the failure left it).
 */
function undoPartialWrite(fd: number, written: number, append: boolean): string | null {
  try {
    if (append) {
      if (written === 0) return "nothing was appended";
      ftruncateSync(fd, Math.max(0, fstatSync(fd).size - written));
      return "nothing was appended (the part written was taken back)";
    }
    ftruncateSync(fd, 0);
    return "the file was left empty (a write empties it first, so what it held before is gone), with nothing of this write in it";
  } catch {
    return null;
  }
}

/**
 * What one of `files` (a path as named and where it leads) is, if writes to it are judged by
 * what they would leave (see write()): described for a refusal; null for any other file.
 */
function contentJudgedFileAt(files: readonly string[]): string | null {
  if (isLaunchManifestAt(files)) return "the project's package.json, which `npx tacit` reads to find what to run as tacit,";
  if (husky4RunnerFor(files) !== null) return 'a package.json whose "husky" key an installed husky 4 runner reads for the hooks it runs,';
  if (isTaskFileAt(files)) return "a file VS Code reads tasks from, which tacit reads to check that no task there runs when the folder is opened,";
  if (isDevContainerConfigAt(files)) return "a Dev Container configuration, which tacit reads to check that it runs no command on the host (initializeCommand),";
  if (isEditorSettingsAt(files)) return "VS Code's settings (a folder's, or a workspace file's), which tacit reads to check that they start no other program,";
  if (pythonStartupFileAt(files) !== null) return "a Python start file (a .pth file or a sitecustomize module), which tacit reads to check that it holds no code Python runs at every start,";
  if (isCargoConfigAt(files)) return "a cargo configuration, which tacit reads to check that it names no program cargo runs (build.rustc, its wrappers, credential providers),";
  if (envrcRecordsAt(files).length > 0) {
    return "an .envrc the user allowed before, which tacit reads to check that direnv has not allowed that content already (it would run it without asking),";
  }
  return null;
}

/** Whether `entry` is a symbolic link itself (not followed); false when there is none. */
function isLink(entry: string): boolean {
  try {
    return lstatSync(entry).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The refusal of a path that leads out of its scope through a link: the same whatever lies out there. */
function leadsOutOfScope(requested: string, scope: FileSystemScope): PolicyDenial {
  return new PolicyDenial(
    `${requested}: resolves (through a symbolic link) to a place outside this file system scope (${scope.root}); links out of the scope are not followed.`,
  );
}

/** The refusal of a path that is tacit's own, or one it keeps from every script (see protected-paths.ts). */
function protectedRefusal(requested: string, own: ProtectedPath): PolicyDenial {
  return new PolicyDenial(
    own.refusal
      ? `${requested}: refused: this is ${own.what}; ${own.refusal}.`
      : own.readable
        ? `${requested}: refused: this is ${own.what}; scripts may read it but not change it (nor create or delete files there). Work with other files.`
        : `${requested}: refused: this is ${own.what}; it belongs to tacit, and scripts can neither read nor write it. Work with other files.`,
  );
}

/**
 * The refusal of an action whose path leads elsewhere than where the approval gate applied the
 * policy's rules to it (see judged()): where it now leads is named only inside `bounds` (see moved-place.ts).
 */
function changedSinceJudged(requested: string, now: string, bounds: PlaceBounds): PolicyDenial {
  return new PolicyDenial(
    `${requested}: refused: the path changed after the policy's rules were applied to it (${nowLeadsText(now, bounds)}); nothing was done. Do not retry it; ask the user.`,
  );
}
