// `tacit repl` sent SIGTERM or SIGINT while a snippet runs an allowed command: it exited at once,
// and its audit log held the command's request and allow, then a signed head: no result, no end
// of the evaluation, no end of the session, as if the command might still be running. The repl
// now ends the snippet (its command killed) and logs how it ended before it exits.

import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, expectNoneLeft, tacitBin, tempDirWithHome, watchProcesses } from "../helpers.js";
import { commandRunsBelow, expectEveryStepEnded, loggedEvents } from "../audit/ended-steps.js";

describe("tacit repl stopped by a signal while a snippet runs a command", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal}: the command is ended, its result and the evaluation's and session's ends are logged, exit ${signal === "SIGTERM" ? 143 : 130}`, async () => {
      const { dir, env, cleanup } = tempDirWithHome("tacit-repl-stop-");
      try {
        const work = path.join(dir, "work");
        mkdirSync(work);
        const log = path.join(dir, "audit.jsonl");
        const { result: code, seen } = await watchProcesses(async (watched) => {
          const child = spawn(process.execPath, [tacitBin, "repl", "--no-check", "--command-permissions", "sleep", "--audit-log", log], {
            cwd: work,
            env: childEnv(env),
            stdio: ["pipe", "ignore", "ignore"],
          });
          const exited = new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
          // stdin stays open: the repl waits on the snippet, not on the end of its input.
          child.stdin.write('requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["89"]))\n');
          // The signal comes once the command runs.
          await commandRunsBelow(child.pid!, "sleep 89", () => child.exitCode !== null, watched);
          child.kill(signal);
          const exitCode = await exited;
          child.stdin.destroy();
          return exitCode;
        });
        expect(code).toBe(signal === "SIGTERM" ? 143 : 130);
        expectNoneLeft(seen, "sleep 89");
        const logged = loggedEvents(log);
        expectEveryStepEnded(logged);
        expect(logged.filter((event) => event.type === "evaluation-ended")).toHaveLength(1);
        expect(logged.filter((event) => event.type === "session-ended")).toHaveLength(1);
      } finally {
        cleanup();
      }
    });
  }
});
