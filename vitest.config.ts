import { defineConfig } from "vitest/config";

// NODE_EXTRA_CA_CERTS (this machine's environment sets it) makes every Node process parse that
// bundle as it starts: about 70-100 ms of CPU per tacit the suite starts, thousands of them. No
// test needs it: those about certificates give their runs their own (test/net/https.test.ts).
// Removed here, before the workers start, so no worker and no tacit a test starts inherits it.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each test file runs tacit with a home of its own, never the real user's ~/.config/tacit
    // (test/suite-homes.ts says why, makes the homes' directory and checks the real homes after).
    globalSetup: ["test/suite-homes.ts"],
    setupFiles: ["test/fresh-modules.ts", "test/file-home.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each test spawns real Deno processes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    // Test files share a worker process instead of each loading vitest afresh: that cost about
    // 0.2 s of CPU a file (100 short files: 46 s of CPU isolated, 24 s shared), over a minute of
    // the suite's CPU on two cores. test/fresh-modules.ts evaluates tacit's and the tests' modules
    // afresh for each file, and test/file-home.ts puts back what a file changed in the process's
    // environment and working directory.
    isolate: false,
  },
});
