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

import { isMainThread } from "node:worker_threads";
import { afterAll } from "vitest";
import { freshTacitHome, startedByConcurrentTests } from "./helpers.js";
import { descendantsOf } from "./processes.js";

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

// Whatever else the file left running in this process's tree ends with it too, after the file's own
// hooks (after hooks run last registered first): what a runner the file used in this process
// started (runBypassed's last sandbox was seen still running at the end of test/runner/smoke and
// test/attacks/spin-window), a spawn of its own. Otherwise the next file found it among this process's children: test/attacks/asked-cpu
// counted the CPU of every child whose command line held "pure", an earlier file's included. Only
// where this process is the file's own (vitest's forks pool): in a worker thread, the process's
// other children are other files'.
const runningBefore = new Set(descendantsOf(process.pid));
afterAll(() => {
  if (!isMainThread) return;
  for (const pid of descendantsOf(process.pid)) {
    if (runningBefore.has(pid)) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
});
