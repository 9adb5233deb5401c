// A V8 code cache for tacit's own bundle. Node 20 compiles every module from source at each
// start (module.enableCompileCache arrived in Node 22); for a short `tacit run` that compile
// is a large part of the time. CommonJS modules under dist/bundle are compiled here instead,
// with the cache V8 produced on an earlier run, and a missing or stale cache is written when
// the command ends. Anything that goes wrong falls back to Node's own compile.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import path from "node:path";
import vm from "node:vm";

interface CompilableModule {
  exports: unknown;
  _compile(content: string, filename: string): unknown;
}

const moduleProto = (Module as unknown as { prototype: CompilableModule }).prototype;
const wrap = (Module as unknown as { wrap(content: string): string }).wrap;

/** Scripts compiled without a usable cache: their caches are written by `saveCodeCache`. */
const fresh: Array<{ script: vm.Script; cacheFile: string }> = [];
let cacheDir = "";

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
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // First run, or the cache was cleaned: compiled from source and cached at the end.
    }
    const script = new vm.Script(wrap(content), {
      filename,
      ...(cachedData ? { cachedData } : {}),
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    if (!cachedData || script.cachedDataRejected) fresh.push({ script, cacheFile });
    const compiled = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return compiled.call(this.exports, this.exports, createRequire(filename), this, filename, path.dirname(filename));
  };
}

/** Writes the caches that were missing; silently skipped where dist/ is not writable. */
export function saveCodeCache(): void {
  if (fresh.length === 0) return;
  try {
    mkdirSync(cacheDir, { recursive: true });
    for (const { script, cacheFile } of fresh.splice(0)) {
      // Written whole, then renamed: a concurrent run never reads half a cache.
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(temporary, script.createCachedData());
      renameSync(temporary, cacheFile);
    }
  } catch {
    // A read-only install runs without a cache.
  }
}
