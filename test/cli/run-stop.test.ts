// `tacit run` sent SIGINT (Ctrl-C) or SIGTERM while its script runs an allowed command: it exited
// at once, and its audit log held the command's request and allow, then a signed head: no result,
// no end of the evaluation, as if the command might still be running. It now ends the script as
// a cancellation does (the command killed) and logs how it ended before it exits.

import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, expectNoneLeft, tacitBin, tempDirWithHome, watchProcesses } from "../helpers.js";
import { commandRunsBelow, expectEveryStepEnded, loggedEvents } from "../audit/ended-steps.js";

describe("tacit run stopped by a signal while its script runs a command", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal}: the command is ended, its result and the evaluation's end are logged, exit ${signal === "SIGTERM" ? 143 : 130}`, async () => {
      const { dir, env, cleanup } = tempDirWithHome("tacit-run-stop-");
      try {
        const work = path.join(dir, "work");
        mkdirSync(work);
        const log = path.join(dir, "audit.jsonl");
        const { result: code, seen } = await watchProcesses(async (watched) => {
          const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--command-permissions", "sleep", "--audit-log", log, "-"], {
            cwd: work,
            env: childEnv(env),
            stdio: ["pipe", "ignore", "ignore"],
          });
          const exited = new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
          child.stdin.end('requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["86"]));\n');
          await commandRunsBelow(child.pid!, "sleep 86", () => child.exitCode !== null, watched);
          child.kill(signal);
          return exited;
        });
        expect(code).toBe(signal === "SIGTERM" ? 143 : 130);
        expectNoneLeft(seen, "sleep 86");
        const logged = loggedEvents(log);
        expectEveryStepEnded(logged);
        expect(logged.filter((event) => event.type === "evaluation-ended")).toHaveLength(1);
      } finally {
        cleanup();
      }
    });
  }
});
