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
  plugins: [scopeManagerWithoutLibs],
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
    codeSplitting: { groups: [{ name: "zod", test: /node_modules[\\/]zod[\\/]/ }] },
  },
};

/**
 * The sandbox's main module (tsc's output in dist/library/) as one file: Deno loads a module
 * graph of eight files through its own parser before running any of it, and a warm spare's
 * boot, which back-to-back one-shot calls of tacit serve wait for, paid for each (measured:
 * 21 ms of CPU per boot for the eight files, 17.5 ms for one). Without its comments and
 * whitespace too (30 KB to 22 KB: 16.7 ms of CPU per boot to 15.7 ms, mean of six runs of 40),
 * but not mangled nor rewritten: the library's names (SecurityError, stack frames) and code stay
 * what agent code sees from the unbundled files.
 */
const sandboxBundle = {
  input: { bootstrap: "dist/library/sandbox/bootstrap.js" },
  platform: "neutral",
  output: { dir: "dist/sandbox", cleanDir: true, format: "esm", entryFileNames: "[name].js", minify: { mangle: false, compress: false } },
};

export default defineConfig([cliBundle, sandboxBundle]);
