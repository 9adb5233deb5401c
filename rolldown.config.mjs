// Bundles the CLI (from tsc's output in dist/) into a few files, so that `tacit run` loads
// one module graph instead of hundreds of files: start-up time is most of a short run. The
// bundle is CommonJS so that bin/tacit.js can compile it through a V8 code cache (Node 20
// has none for ES modules); oxc-parser, an ES module, is loaded with require(esm).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "rolldown";

const here = path.dirname(fileURLToPath(import.meta.url));

/** Replaces scope-manager's TypeScript lib tables, which tacit never reads, with an empty one. */
const scopeManagerWithoutLibs = {
  name: "scope-manager-without-libs",
  resolveId(source, importer) {
    if (source === "../lib" && importer?.includes(`${path.sep}@typescript-eslint${path.sep}scope-manager${path.sep}dist${path.sep}referencer${path.sep}`)) {
      return path.join(here, "build", "scope-manager-no-lib.cjs");
    }
    return null;
  },
};

/**
 * node:crypto as tacit's own modules import it: each function loads the builtin when first
 * called. Every `tacit run` loads modules that import it (the lock of the remembered files and
 * approvals, the audit log's hashes, the confinement's), yet a run that writes no audit log nor
 * lock file calls none of them, and loading node:crypto (some fifteen internal modules) was
 * about 2 ms of CPU of each start-up. A name imported but not listed here fails the build (the
 * module below does not export it). The libraries bundled import it as they are.
 */
const LAZY_BUILTINS = {
  "node:crypto": ["createHash", "createPrivateKey", "createPublicKey", "randomBytes", "randomInt", "sign"],
};
const LAZY_PREFIX = "\0tacit-lazy-builtin:";

const lazyBuiltins = {
  name: "lazy-builtins",
  resolveId(source, importer) {
    if (!Object.hasOwn(LAZY_BUILTINS, source) || importer === undefined) return null;
    const own = path.relative(path.join(here, "dist"), importer);
    if (own.startsWith("..") || path.isAbsolute(own) || own.split(path.sep).includes("node_modules")) return null;
    return `${LAZY_PREFIX}${source}`;
  },
  load(id) {
    if (!id.startsWith(LAZY_PREFIX)) return null;
    const builtin = id.slice(LAZY_PREFIX.length);
    return [
      "let loaded;",
      `const builtin = () => (loaded ??= process.getBuiltinModule(${JSON.stringify(builtin)}));`,
      ...LAZY_BUILTINS[builtin].map((name) => `export const ${name} = (...args) => builtin().${name}(...args);`),
    ].join("\n");
  },
};

const cliBundle = {
  // The search worker is a separate entry: a thread loads it on first search. The code cache
  // is one too: bin/tacit.js loads it (compiled as usual) before anything it caches.
  input: {
    tacit: "dist/cli/main.js",
    prestart: "dist/cli/prestart.js",
    "grep-worker": "dist/runner/fs/grep-worker.js",
    // tacit serve's type checker runs in a thread (runner/typecheck-thread.ts).
    "typecheck-worker": "dist/runner/typecheck-worker.js",
    // Parses a large or bracket-heavy script in a child process first (runner/nesting.ts).
    "parse-probe": "dist/runner/parse-probe.js",
    "code-cache": "dist/cli/code-cache.js",
  },
  platform: "node",
  // oxc-parser loads a native binding, and TypeScript's API finds its checker binary,
  // relative to their own files: both stay in node_modules.
  external: ["oxc-parser", /^typescript(\/|$)/],
  plugins: [scopeManagerWithoutLibs, lazyBuiltins],
  output: {
    dir: "dist/bundle",
    cleanDir: true,
    format: "cjs",
    minify: true,
    sourcemap: true,
    entryFileNames: "[name].cjs",
    chunkFileNames: "[name]-[hash].cjs",
    // zod in a chunk of its own: otherwise it shares one with whatever small module every zod
    // user also imports (tacit-home, say), and loads on start-up paths that need only that.
    // Not its v3 API nor zod/mini, which only the MCP SDK imports (its zod-compat): in the
    // shared chunk they were evaluated at every `tacit run` that validates anything.
    codeSplitting: { groups: [{ name: "zod", test: /node_modules[\\/]zod[\\/](?!v3[\\/]|v4[\\/]mini[\\/])/ }] },
  },
};

/**
 * A main module Deno runs with no permissions (tsc's output in dist/library/), as one file:
 * Deno loads a module graph of several files through its own parser before running any of
 * it, and every sandbox boot (the warm spare that back-to-back one-shot calls of tacit serve
 * wait for) and every pure evaluator's (a one-shot call's first map) paid for each. Measured
 * for the sandbox: 21 ms of CPU per boot for its eight files, 17.5 ms for one; for the pure
 * evaluator (two files), 12.0-17.0 ms to 10.3-11.9 ms. Without comments and whitespace too
 * (the sandbox's 30 KB to 22 KB: 16.7 ms of CPU per boot to 15.7 ms, mean of six runs of 40),
 * but not mangled nor rewritten: the library's names (SecurityError, stack frames) and code
 * stay what agent code sees from the unbundled files.
 */
function denoMainModule(input, dir) {
  return {
    input,
    platform: "neutral",
    // Deno's own Node built-ins (the pure evaluator's node:vm): Deno provides them, nothing to bundle.
    external: [/^node:/],
    output: { dir, cleanDir: true, format: "esm", entryFileNames: "[name].js", minify: { mangle: false, compress: false } },
  };
}

/**
 * tacit serve's thread that holds its sandboxes' memory and time limits (runner/sandbox-backstop.ts),
 * a build of its own: as an entry of the CLI's, the modules it shares with the sandbox's (/proc
 * readers) went into chunks of their own, files every `tacit run` loaded one more of, for a thread
 * only tacit serve starts.
 */
const sandboxBackstopWorker = {
  input: { worker: "dist/runner/sandbox-backstop-worker.js" },
  platform: "node",
  output: { dir: "dist/sandbox-backstop", cleanDir: true, format: "cjs", minify: true, sourcemap: true, entryFileNames: "[name].cjs" },
};

export default defineConfig([
  cliBundle,
  sandboxBackstopWorker,
  denoMainModule({ bootstrap: "dist/library/sandbox/bootstrap.js" }, "dist/sandbox"),
  denoMainModule({ evaluator: "dist/library/pure/evaluator.js" }, "dist/pure"),
]);
