// Each test file's own tacit home (vitest setupFiles): TACIT_HOME is set, for this file, to a
// fresh directory in the suite's homes directory (test/suite-homes.ts), removed after the file.
// Every tacit the file starts with this process's environment takes it (runCli, runScript,
// connectServe, a spawn that inherits process.env), and so does the runner in this process
// (runBypassed). A test that gives a run TACIT_HOME, XDG_CONFIG_HOME or HOME of its own keeps
// it: those of test/cli/tacit-homes and test/exec/confinement are about the default home.

import { afterAll } from "vitest";
import { freshTacitHome, startedByConcurrentTests } from "./helpers.js";

const { home, cleanup } = freshTacitHome();
process.env.TACIT_HOME = home;
afterAll(cleanup);
// What concurrent tests started and left running (see helpers.ts endedWithItsTest) ends with the file.
afterAll(() => {
  for (const child of startedByConcurrentTests) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
