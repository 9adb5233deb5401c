// A V8 code cache for tacit's own bundle. Node 20 compiles every module from source at each
// start (module.enableCompileCache arrived in Node 22); for a short `tacit run` that compile
// is a large part of the time. CommonJS modules under dist/bundle are compiled here instead,
// with the cache V8 produced on an earlier run, and a missing or stale cache is written when
// the command ends. Anything that goes wrong falls back to Node's own compile.

import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import path from "node:path";
import vm from "node:vm";
import { atStartFlags } from "../runner/jit-warmup.js";

interface CompilableModule {
  exports: unknown;
  _compile(content: string, filename: string): unknown;
}

const moduleProto = (Module as unknown as { prototype: CompilableModule }).prototype;
const wrap = (Module as unknown as { wrap(content: string): string }).wrap;

/** Scripts compiled without a usable cache: their caches are written by `saveCodeCache`. */
const fresh: Array<{ script: vm.Script; cacheFile: string; source: string; sourceChanged: number }> = [];
let cacheDir = "";
/** The uid that owns the bundle's directory, looked up when a cache is not the user's own. */
let bundleOwner: number | undefined;

/**
 * The commands with caches of their own; the rest share one. A cache holds the functions the
 * run that wrote it had compiled, and is written only where missing: made by `tacit --version`
 * (or check, or serve), it lacked half of what `tacit run` runs in its first modules
 * (sandbox-process, paths, the CLI's own), which every run then compiled again.
 */
const OWN_CACHES: ReadonlySet<string> = new Set(["run", "check", "serve", "repl"]);

/** `command`: the command tacit was given (its first argument), which picks the cache. */
export function installCodeCache(bundleDir: string, command: string | undefined = process.argv[2]): void {
  cacheDir = path.join(bundleDir, ".v8-cache", command !== undefined && OWN_CACHES.has(command) ? command : "other");
  const original = moduleProto._compile;
  moduleProto._compile = function (this: CompilableModule, content: string, filename: string): unknown {
    if (path.dirname(filename) !== bundleDir) return original.call(this, content, filename);
    const cacheFile = path.join(cacheDir, `${path.basename(filename)}.bin`);
    const cachedData = trustedCache(cacheFile, bundleDir, filename);
    // V8 checks the cache against its flags as they are now: those tacit started with.
    const script = atStartFlags(
      () =>
        new vm.Script(wrap(content), {
          filename,
          ...(cachedData ? { cachedData } : {}),
          importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
        }),
    );
    if (!cachedData || script.cachedDataRejected) fresh.push({ script, cacheFile, source: filename, sourceChanged: changedAt(filename) });
    const compiled = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return compiled.call(this.exports, this.exports, createRequire(filename), this, filename, path.dirname(filename));
  };
}

/**
 * The cache at `cacheFile`, or undefined where there is none tacit may trust. V8 checks a cache
 * only against the source's length and V8's version and flags, never the bytes of either: it runs
 * what the cache holds as this module's compiled code (a few changed bytes ended every later run
 * with a segmentation fault; bytes someone chose would run as tacit, with your authority). So a
 * cache is used only where its writer could have changed tacit's code anyway: a regular file (not
 * a link to one, nor a FIFO that would block the read) owned by you, root or the bundle's owner, that
 * no one else may write. Any other is compiled over and replaced at the end of the run. And
 * only one written after `source` last changed: V8 took a cache of the bundle as it was before an
 * edit that kept its length, and ran the old code (rolldown's build empties dist/bundle, but a
 * file patched or unpacked in place does not). The source's ctime, not its mtime, which a copy or
 * an unpacked archive may set to any time before the cache.
 */
function trustedCache(cacheFile: string, bundleDir: string, source: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(cacheFile, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    // First run, or the cache was cleaned: compiled from source and cached at the end.
    return undefined;
  }
  try {
    // Checked on the descriptor read from, so that a file swapped in after the check is not read.
    const stat = fstatSync(fd);
    const me = process.geteuid?.();
    const writableByOthers = (stat.mode & 0o022) !== 0;
    // root's caches too: root could change tacit's code as well (a `sudo tacit` run writes them).
    const trustedWriter = stat.uid === me || stat.uid === 0 || stat.uid === (bundleOwner ??= statSync(bundleDir).uid);
    if (!stat.isFile() || writableByOthers || !trustedWriter) return undefined;
    if (statSync(source).ctimeMs > stat.mtimeMs) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** When `file` last changed (its ctime), or NaN where it cannot be found: a NaN equals nothing. */
function changedAt(file: string): number {
  try {
    return statSync(file).ctimeMs;
  } catch {
    return Number.NaN;
  }
}

/** Writes the caches that were missing; silently skipped where dist/ is not writable. */
export function saveCodeCache(): void {
  if (fresh.length === 0) return;
  try {
    // Not writable by others whatever the umask (they could swap a cache of their own in).
    mkdirSync(cacheDir, { recursive: true, mode: 0o755 });
    for (const { script, cacheFile, source, sourceChanged } of fresh.splice(0)) {
      // A bundle rebuilt or patched while this command ran (a long tacit serve, say): its cache
      // would hold the code as it was, written after the change, so taken (see trustedCache).
      if (changedAt(source) !== sourceChanged) continue;
      // Written whole, then renamed: a concurrent run never reads half a cache.
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      // One a run with this pid left behind (or a link put there) is removed, not written through.
      rmSync(temporary, { force: true });
      // "wx": made new, never through a link someone planted at that name (which would have
      // had this run overwrite a file of yours the link names); 0o644: others may read, not write.
      // Made under the flags a run starts with, which the next run checks it against.
      writeFileSync(temporary, atStartFlags(() => script.createCachedData()), { flag: "wx", mode: 0o644 });
      renameSync(temporary, cacheFile);
    }
  } catch {
    // A read-only install runs without a cache.
  }
}
