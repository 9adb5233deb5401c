// Bundles the CLI (from tsc's output in dist/) into a few files, so that `tacit run` loads
// one module graph instead of hundreds of files: start-up time is most of a short run.
import { defineConfig } from "rolldown";

export default defineConfig({
  input: { tacit: "dist/cli/main.js" },
  platform: "node",
  // oxc-parser loads a native binding relative to its own files.
  external: ["oxc-parser"],
  output: { dir: "dist/bundle", format: "esm", minify: true, sourcemap: true, entryFileNames: "[name].js", chunkFileNames: "[name]-[hash].js" },
});
