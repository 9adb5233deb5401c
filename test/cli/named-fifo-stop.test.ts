// A script or --config file that is a FIFO nobody writes (a permitted `mkfifo task.ts` of an
// earlier run's script, say) held `tacit run` in open() for ever, and neither Ctrl-C nor SIGTERM
// (a CI job's timeout, `timeout 60 tacit run …`) ended it: tacit's stop handlers run only when
// the event loop does, and the read of a named file is synchronous. Only SIGKILL did. A stop
// signal now ends tacit while it waits there, as it would `cat fifo`.

import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { childEnv, expectNoneLeft, tacitBin, tempDirWithHome, watchProcesses } from "../helpers.js";
import { isRunning } from "../processes.js";

/** Whether the process's main thread waits in the kernel for a FIFO's other end (Linux's wchan). */
function waitsForFifoPartner(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/wchan`, "utf8") === "wait_for_partner";
  } catch {
    return false;
  }
}

describe("tacit run reading a named FIFO nobody writes", () => {
  for (const [what, args] of [
    ["the script", ["run", "--no-check", "task.ts"]],
    ["--config", ["run", "--no-check", "--config", "tacit.json", "plain.ts"]],
  ] as const) {
    it(`${what}: SIGTERM ends tacit while it waits for a writer`, async () => {
      const { dir, env, cleanup } = tempDirWithHome("tacit-named-fifo-");
      try {
        execFileSync("mkfifo", [path.join(dir, "task.ts"), path.join(dir, "tacit.json")]);
        writeFileSync(path.join(dir, "plain.ts"), 'println("ran");\n');
        const { result, seen } = await watchProcesses(async () => {
          const child = spawn(process.execPath, [tacitBin, ...args], { cwd: dir, env: childEnv(env), stdio: ["ignore", "ignore", "pipe"] });
          const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
            child.once("exit", (code, signal) => resolve({ code, signal })),
          );
          for (let i = 0; i < 500 && !waitsForFifoPartner(child.pid!) && child.exitCode === null; i++) await sleep(20);
          expect(waitsForFifoPartner(child.pid!), "tacit never waited on the FIFO").toBe(true);
          child.kill("SIGTERM");
          const ended = await Promise.race([exited, sleep(3000).then(() => null)]);
          if (ended === null) child.kill("SIGKILL");
          await exited;
          return ended;
        });
        expect(result, "tacit was still waiting on the FIFO 3 s after SIGTERM").not.toBeNull();
        expect(result!.code === 143 || result!.signal === "SIGTERM").toBe(true);
        // A sandbox bin/tacit.js prestarted gets its SIGKILL from the kernel as tacit ends (its
        // parent-death signal), and takes a moment to go.
        for (let i = 0; i < 100 && [...seen.keys()].some(isRunning); i++) await sleep(20);
        expectNoneLeft(seen, tacitBin);
      } finally {
        cleanup();
      }
    });
  }
});
