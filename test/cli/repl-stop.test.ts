// `tacit repl` sent SIGTERM or SIGINT while a snippet runs an allowed command: it exited at once,
// and its audit log held the command's request and allow, then a signed head: no result, no end
// of the evaluation, no end of the session, as if the command might still be running. The repl
// now ends the snippet (its command killed) and logs how it ended before it exits.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, expectNoneLeft, tacitBin, tempDirWithHome, watchProcesses } from "../helpers.js";
import { commandLineOf, descendantsOf } from "../processes.js";

interface Logged {
  type: string;
  evaluation?: string;
  action?: number;
  kind?: string;
  decision?: string;
}

const events = (log: string): Logged[] =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => (JSON.parse(line) as { event: Logged }).event)
    : [];

describe("tacit repl stopped by a signal while a snippet runs a command", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`${signal}: the command is ended, its result and the evaluation's and session's ends are logged, exit ${signal === "SIGTERM" ? 143 : 130}`, async () => {
      const { dir, env, cleanup } = tempDirWithHome("tacit-repl-stop-");
      try {
        const work = path.join(dir, "work");
        mkdirSync(work);
        const log = path.join(dir, "audit.jsonl");
        const { result: code, seen } = await watchProcesses(async () => {
          const child = spawn(process.execPath, [tacitBin, "repl", "--no-check", "--command-permissions", "sleep", "--audit-log", log], {
            cwd: work,
            env: childEnv(env),
            stdio: ["pipe", "ignore", "ignore"],
          });
          const exited = new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));
          // stdin stays open: the repl waits on the snippet, not on the end of its input.
          child.stdin.write('requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["89"]))\n');
          // The signal comes once the command runs.
          const commandRuns = (): boolean => descendantsOf(child.pid!).some((pid) => /^(\S*\/)?sleep 89$/.test(commandLineOf(pid).replace(/\0/g, " ").trim()));
          while (!commandRuns() && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
          child.kill(signal);
          const exitCode = await exited;
          child.stdin.destroy();
          return exitCode;
        });
        expect(code).toBe(signal === "SIGTERM" ? 143 : 130);
        expectNoneLeft(seen, "sleep 89");
        const logged = events(log);
        const key = (event: Logged): string => `${event.evaluation}#${event.action}`;
        const requested = logged.filter((event) => event.type === "action-requested").map(key);
        expect(requested.length).toBeGreaterThan(1);
        expect(logged.filter((event) => event.type === "decision").map(key)).toEqual(expect.arrayContaining(requested));
        expect(logged.filter((event) => event.type === "action-result").map(key)).toEqual(expect.arrayContaining(requested));
        expect(logged.filter((event) => event.type === "evaluation-ended")).toHaveLength(1);
        expect(logged.filter((event) => event.type === "session-ended")).toHaveLength(1);
      } finally {
        cleanup();
      }
    });
  }
});
