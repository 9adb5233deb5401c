// SIGQUIT (Ctrl-\) ends a process with a core dump by default. Where dumps are on (ulimit -c, a
// core_pattern of "core"), tacit's memory went to a file "core" in its working directory, the
// default allowed root: the classified plaintext it held (and the LLM key) lay there for the next
// script to read back, and the command under way was neither ended by tacit nor logged. tacit now
// stops on SIGQUIT as on SIGTERM: what is under way is ended and logged, and it exits 131.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, expectNoneLeft, tacitBin, tempDirWithHome, watchProcesses } from "../helpers.js";
import { commandRunsBelow, expectEveryStepEnded, loggedEvents } from "../audit/ended-steps.js";

describe("tacit run sent SIGQUIT while its script runs a command", () => {
  it("ends the command, logs the evaluation's end, leaves no core dump with the plaintext; exit 131", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-quit-signal-");
    try {
      const work = path.join(dir, "work");
      mkdirSync(work);
      writeFileSync(path.join(work, ".env"), "TOKEN=canary-5e1b7c\n");
      const log = path.join(dir, "audit.jsonl");
      const script = 'const token = requestFileSystem(".", (fs) => fs.readClassified(".env"));\nprintln(token);\nrequestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["87"]));\n';
      let stderr = "";
      const { result: exit, seen } = await watchProcesses(async (watched) => {
        // Core dumps on, as on a machine where they are (the shell's exec keeps the pid tacit's).
        const child = spawn("sh", ["-c", 'ulimit -c unlimited 2>/dev/null; exec "$@"', "sh", process.execPath, tacitBin, "run", "--no-check", "--command-permissions", "sleep", "--audit-log", log, "-"], {
          cwd: work,
          env: childEnv(env),
          stdio: ["pipe", "ignore", "pipe"],
        });
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
        const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
        child.stdin.end(script);
        await commandRunsBelow(child.pid!, "sleep 87", () => child.exitCode !== null, watched);
        child.kill("SIGQUIT");
        return exited;
      });
      expect(exit).toEqual({ code: 131, signal: null });
      expect(stderr).toContain("tacit was stopped by SIGQUIT");
      expectNoneLeft(seen, "sleep 87");
      expect(readdirSync(work).filter((name) => name.startsWith("core"))).toEqual([]);
      expect(existsSync(path.join(work, "core"))).toBe(false);
      const logged = loggedEvents(log);
      expectEveryStepEnded(logged);
      expect(logged.filter((event) => event.type === "evaluation-ended")).toHaveLength(1);
    } finally {
      cleanup();
    }
  });
});
