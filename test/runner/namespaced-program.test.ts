// runner/namespaced-program.ts lists the processes of a sandbox's PID namespace for the watchdogs
// through the /proc under the program's root. Until the namespace's first process has mounted a
// /proc of its own (unshare --mount-proc, as it starts), that one is the host's: a watchdog's look
// in that moment took every process of the machine for processes native code had started, and
// ended a pure evaluator as it started (test/attacks/asked-cpu.test.ts failed so on a loaded
// machine). The moment is held open here by leaving --mount-proc out; real unshare processes.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { NamespacedProgram } from "../../runner/namespaced-program.js";

const NAMESPACE = ["--user", "--map-root-user", "--mount", "--pid", "--fork"];
const hostMakesPidNamespace = spawnSync("unshare", [...NAMESPACE, "--mount-proc", "--", "/bin/sh", "-c", "exit 0"], { stdio: "ignore" }).status === 0;

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill("SIGKILL");
});

/** unshare with `flags` running `script` in sh; the NamespacedProgram over it, once its program is found. */
async function launched(flags: string[], script: string): Promise<{ program: NamespacedProgram; pid: number }> {
  const child = spawn("unshare", [...flags, "--kill-child", "--", "/bin/sh", "-c", script], { stdio: "ignore" });
  started.push(child);
  const program = new NamespacedProgram(child, true);
  for (let i = 0; i < 1000; i++) {
    const pid = program.pid();
    if (pid !== null) return { program, pid };
    await sleep(10);
  }
  throw new Error("the namespace's first process was never found");
}

describe.runIf(hostMakesPidNamespace)("the processes of a PID namespace, as the watchdogs count them", () => {
  it("are the program alone while the /proc under its root is still the host's", async () => {
    const { program, pid } = await launched(NAMESPACE, "exec sleep 30");
    const hostProcesses = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
    expect(hostProcesses.length, "the host's /proc lists other processes").toBeGreaterThan(1);
    // Before the fix: every process the host's /proc lists.
    expect(program.processDirs()).toEqual([`/proc/${pid}`]);
  });

  it("are the program and each process it started, once the namespace has its own /proc", async () => {
    const { program, pid } = await launched([...NAMESPACE, "--mount-proc"], "sleep 30 & sleep 30 & wait");
    let dirs: string[] | null = null;
    for (let i = 0; i < 1000 && (dirs?.length ?? 0) < 3; i++) {
      dirs = program.processDirs();
      await sleep(10);
    }
    expect(dirs![0]).toBe(`/proc/${pid}`);
    expect(dirs!.slice(1).sort()).toEqual([`/proc/${pid}/root/proc/2`, `/proc/${pid}/root/proc/3`]);
  });
});
