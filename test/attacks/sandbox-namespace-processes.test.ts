// Deno may start no process, but native code in it (which no permission binds) can fork, and,
// with the sandbox in a PID namespace of its own, whatever it forks is the namespace's: re-parented
// to Deno (its first process) whatever it does. The host's watchdogs read Deno's own /proc alone:
// memory a forked child held was not counted against the memory limit (nor tacit serve's sessions
// budget), and a child that ran between a session's snippets, where no time limit applies, was
// not seen. The host now counts every process in the namespace (runner/namespaced-program.ts
// processDirs), and ends a sandbox that has one beside Deno between snippets.
//
// Native code cannot run in tacit's own sandbox here, so its fork is made from outside: the test
// enters the sandbox's user and PID namespaces (nsenter, as the user who owns them; as root, the
// sandbox has no user namespace of its own, runner/sandbox-user.ts: its PID namespace alone) and leaves a
// process there whose parent exits at once, so that the kernel re-parents it to Deno, exactly
// where a process native code in Deno forks would be. Each is looked at from outside: its parent
// and namespace, its memory, and whether it still runs.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../runner/config.js";
import { bootstrapPath } from "../../runner/paths.js";
import { residentKb } from "../../runner/resident-memory.js";
import { ReplSession } from "../../runner/session.js";
import { childEnv, tacitBin, tempDir } from "../helpers.js";
import { commandLineOf, descendantsOf, isRunning, runsDeno } from "../processes.js";

const NSENTER = "/usr/bin/nsenter";

/** Whether this host lets the test make the namespaces tacit makes, and enter them. */
const hostMakesPidNamespace =
  existsSync(NSENTER) &&
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc", "--", "/bin/sh", "-c", "exit 0"], { stdio: "ignore" }).status === 0;

/** Deno running tacit's sandbox among `root`'s descendants, once there is one. */
async function sandboxDeno(root: number): Promise<number> {
  for (let tries = 0; tries < 400; tries++) {
    const found = descendantsOf(root).find((pid) => runsDeno(pid) && commandLineOf(pid).split("\0").includes(bootstrapPath));
    if (found !== undefined) return found;
    await sleep(50);
  }
  throw new Error(`no sandbox under ${root}`);
}

function parentOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1]);
}

/**
 * Leaves `command` (a shell command) running in `deno`'s PID namespace as Deno's child (see
 * above); resolves with its pid, in this process's namespace, once it has written a line.
 */
async function forkedInto(deno: number, command: string): Promise<{ pid: number; entered: ChildProcess }> {
  // The shell inside starts the command and exits: the command's parent is gone, and the kernel
  // gives it to the namespace's first process, Deno.
  // A process cannot enter the user namespace it is in (nsenter fails): the sandbox of a root tacit is in the test's.
  const user = readlinkSync(`/proc/${deno}/ns/user`) === readlinkSync("/proc/self/ns/user") ? [] : ["--user"];
  const entered = spawn(NSENTER, ["--target", String(deno), ...user, "--pid", "--preserve-credentials", "--", "/bin/sh", "-c", `${command} & exit 0`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    entered.stdout!.once("data", () => resolve());
    entered.stdout!.once("end", () => reject(new Error(`${command} ended before it wrote a line`)));
    entered.once("error", reject);
  });
  const hostNamespace = readlinkSync("/proc/self/ns/pid");
  for (let tries = 0; tries < 200; tries++) {
    const forked = descendantsOf(deno).filter((pid) => !runsDeno(pid));
    if (forked.length === 1 && parentOf(forked[0]!) === deno) {
      // The premise: Deno's child, in Deno's namespace, not the test's.
      expect(readlinkSync(`/proc/${forked[0]!}/ns/pid`)).toBe(readlinkSync(`/proc/${deno}/ns/pid`));
      expect(readlinkSync(`/proc/${forked[0]!}/ns/pid`)).not.toBe(hostNamespace);
      return { pid: forked[0]!, entered };
    }
    await sleep(50);
  }
  throw new Error(`no process of the test's became ${deno}'s child`);
}

/** Whether `pid` ends before the test is given up (`testEnds`: aborted when the test times out); the host promises no time. */
async function endedBeforeTestEnds(pid: number, testEnds: AbortSignal): Promise<boolean> {
  while (isRunning(pid) && !testEnds.aborted) await sleep(100);
  return !isRunning(pid);
}

const HOLD_MIB = 600;
/**
 * Python that says it is ready, waits for SIGUSR1, then takes HOLD_MIB MiB (written, so
 * resident) and sleeps: the test sees it in place before it grows (the host may end it at once).
 */
const HOLDER =
  "/usr/bin/python3 -c 'import signal, time; signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1]); print(\"ready\", flush=True); " +
  `signal.sigwait([signal.SIGUSR1]); held = b\"x\" * (${HOLD_MIB} << 20); time.sleep(600)'`;

describe.skipIf(!hostMakesPidNamespace)("a process forked beside Deno in the sandbox's PID namespace", () => {
  const forked: number[] = [];
  let session: ReplSession | null = null;
  afterEach(async () => {
    await session?.close();
    session = null;
    for (const pid of forked.splice(0)) if (isRunning(pid)) process.kill(pid, "SIGKILL");
  });

  it.skipIf(!existsSync("/usr/bin/python3"))("holding memory: counted against the run's memory limit, and the run is ended", async ({ signal }) => {
    const { dir, cleanup } = tempDir("tacit-ns-memory-");
    let tacit: ChildProcess | undefined;
    try {
      // A script that waits for its input: the sandbox holds little, and ends only when the test says.
      writeFileSync(path.join(dir, "waits.ts"), "println(readInput().length);\n");
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "--memory-limit-mb", "64", "waits.ts"], { cwd: dir, env: childEnv(), stdio: ["pipe", "pipe", "pipe"] });
      let stderr = "";
      tacit.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => tacit!.on("close", (code) => resolve(code)));
      const deno = await sandboxDeno(tacit.pid!);
      const { pid } = await forkedInto(deno, HOLDER);
      forked.push(pid);
      // The premise: Deno holds far less than the limit (64 MiB of heap and 256 of allowance); the child alone will hold more (HOLD_MIB).
      expect(residentKb(deno)! / 1024).toBeLessThan(64 + 256);
      process.kill(pid, "SIGUSR1");

      const ended = await Promise.race([exited.then(() => true), new Promise<false>((resolve) => signal.addEventListener("abort", () => resolve(false)))]);
      expect(ended, "the run went on, its sandbox's namespace holding more than its memory limit").toBe(true);
      expect(await exited).not.toBe(0);
      expect(stderr).toMatch(/more than 320 MiB of memory \(resident\)/);
      // The child ended with the sandbox (the kernel kills a namespace's processes with its first).
      expect(await endedBeforeTestEnds(pid, signal)).toBe(true);
    } finally {
      tacit?.kill("SIGKILL");
      cleanup();
    }
  });

  for (const [name, command] of [
    ["spinning", "/bin/sh -c 'echo started; while :; do :; done'"],
    // Its CPU time would be counted once it ran, but not if its parent (native code) had it reaped unwaited for.
    ["sleeping", "/bin/sh -c 'echo started; exec sleep 600'"],
  ] as const) {
    it(`${name} between a session's snippets: the session's sandbox is ended, and the session says why`, async ({ signal }) => {
      session = new ReplSession({ ...defaultConfig, typeCheck: false, memoryLimitMb: 128, executionTimeoutMs: 30_000 });
      const first = await session.execute("1 + 1");
      expect(first.outcome, first.error ?? "").toBe("ok");
      const deno = await sandboxDeno(process.pid);
      const { pid } = await forkedInto(deno, command);
      forked.push(pid);

      expect(await endedBeforeTestEnds(deno, signal), "the sandbox went on with a process beside Deno between snippets").toBe(true);
      expect(await endedBeforeTestEnds(pid, signal), "the forked process outlived the sandbox").toBe(true);
      const next = await session.execute("1 + 1");
      expect(next.outcome).toBe("protocol-error");
      expect(next.error).toMatch(/1 process other than Deno ran in its PID namespace while it waited for the next snippet/);
      expect(next.error).toMatch(/create a new session/i);
    });
  }
});
