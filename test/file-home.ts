// Each test file's own tacit home (vitest setupFiles): TACIT_HOME is set, for this file, to a
// fresh directory in the suite's homes directory (test/suite-homes.ts), removed after the file.
// Every tacit the file starts with this process's environment takes it (runCli, runScript,
// connectServe, a spawn that inherits process.env), and so does the runner in this process
// (runBypassed). A test that gives a run TACIT_HOME, XDG_CONFIG_HOME or HOME of its own keeps
// it: those of test/cli/tacit-homes and test/exec/confinement are about the default home.
//
// Test files share their worker process (vitest.config.ts: isolate false), so what a file
// changes in the process's environment or working directory is put back after it, and the next
// file starts as this one did (a file that sets TACIT_SPIN=always for its runs leaves it set for
// nobody else).

import { afterAll } from "vitest";
import { freshTacitHome, startedByConcurrentTests } from "./helpers.js";

const environmentBefore = { ...process.env };
const directoryBefore = process.cwd();
afterAll(() => {
  for (const name of Object.keys(process.env)) if (!Object.hasOwn(environmentBefore, name)) delete process.env[name];
  Object.assign(process.env, environmentBefore);
  if (process.cwd() !== directoryBefore) process.chdir(directoryBefore);
});

const { home, cleanup } = freshTacitHome();
process.env.TACIT_HOME = home;
afterAll(cleanup);
// What concurrent tests started and left running (see helpers.ts endedWithItsTest) ends with the file.
afterAll(() => {
  for (const child of startedByConcurrentTests) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
