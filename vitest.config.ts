import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each test file runs tacit with a home of its own, never the real user's ~/.config/tacit
    // (test/suite-homes.ts says why, makes the homes' directory and checks the real homes after).
    globalSetup: ["test/suite-homes.ts"],
    setupFiles: ["test/file-home.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each test spawns real Deno processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
