// The sandbox and the pure evaluator have a PID namespace of their own, with a /proc of their own
// (runner/network-namespace.ts PID_FLAGS). In the host's, native code in Deno (which no permission
// binds) listed every process of the user in /proc, read their command lines and environments (an
// API key passed to tacit in its environment), and could stop or kill them: tacit itself, the
// person's shell and editor, other sandboxes. Tested with Deno's own file and signal APIs (all
// permissions: the validator and Deno's permissions bypassed) in a program started the way a
// sandbox is, against a canary process and a running `tacit run`, and through `tacit run`'s and
// `tacit serve`'s own sandboxes, whose /proc the test reads through /proc/<pid>/root.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { bootstrapPath, denoExecutable, pureEvaluatorPath } from "../../runner/paths.js";
import { sandboxEnv, sandboxLaunch } from "../../runner/sandbox-process.js";
import { childEnv, connectServe, createSession, runCli, tacitBin, tempDir } from "../helpers.js";
import { commandLineOf, denoRunning, descendantsOf, isRunning } from "../processes.js";

/** Whether this host lets the test make the namespaces tacit makes (else the sandbox has none, and tacit warns). */
const hostMakesPidNamespace =
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc", "--", "/bin/sh", "-c", "exit 0"], { stdio: "ignore" }).status === 0;

const CANARY_PREFIX = "tacit-pid-canary-";

/** Its state (R, S, T: stopped, Z…), from /proc/<pid>/stat; "" once it is gone. */
function stateOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "")[0]!;
  } catch {
    return "";
  }
}

/**
 * Deno code that looks for processes whose command line or environment holds `prefix`, reads what
 * /proc shows of every process it sees, and stops and kills those it found and those it was told
 * of (`stop`, `kill`: pids as the host numbers them). Prints what it saw and did, as JSON.
 */
function attacker(prefix: string, stop: readonly number[], kill: readonly number[]): string {
  return `const seen = [];
for (const entry of Deno.readDirSync("/proc")) {
  if (!/^\\d+$/.test(entry.name)) continue;
  const read = (file) => { try { return Deno.readTextFileSync("/proc/" + entry.name + "/" + file).replaceAll("\\0", " "); } catch (error) { return "(" + error.name + ")"; } };
  seen.push({ pid: Number(entry.name), cmdline: read("cmdline"), environ: read("environ") });
}
// The prefix is put together here: the attacker's own command line holds only its halves.
const prefix = ${JSON.stringify(prefix.slice(0, 4))} + ${JSON.stringify(prefix.slice(4))};
const found = seen.filter((p) => (p.cmdline + p.environ).includes(prefix)).map((p) => p.pid);
const signalled = [];
const send = (pid, signal) => { try { Deno.kill(pid, signal); signalled.push(pid + " " + signal + ": sent"); } catch (error) { signalled.push(pid + " " + signal + ": " + error.name); } };
for (const pid of [...found, ...${JSON.stringify(stop)}]) send(pid, "SIGSTOP");
for (const pid of [...found, ...${JSON.stringify(kill)}]) send(pid, "SIGKILL");
console.log(JSON.stringify({ pids: seen.map((p) => p.pid), found, signalled, seen }));`;
}

describe.skipIf(!hostMakesPidNamespace)("the host's processes, from the sandbox", () => {
  it("native code in a program started the way a sandbox is finds neither a canary process nor tacit, reads neither, and stops or kills neither", async () => {
    const { dir, cleanup } = tempDir("tacit-pids-");
    const canary = `${CANARY_PREFIX}${randomBytes(8).toString("hex")}`;
    let canaryProcess: ChildProcess | undefined;
    let tacit: ChildProcess | undefined;
    try {
      // The canary: a process of the user's with the canary in its command line and environment (not
      // exec'd into sleep: `; exit 0` keeps the shell, and its argv, alive).
      canaryProcess = spawn("/bin/sh", ["-c", "sleep 300; exit 0", canary], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TACIT_PID_CANARY: canary }, stdio: "ignore" });
      // And tacit, running a script that waits for its input, with its sandbox up.
      writeFileSync(path.join(dir, "waits.ts"), 'const doubled = classify("plain").map((value) => value + value);\nprintln("read", readInput().length);\n');
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "waits.ts"], { cwd: dir, env: childEnv(), stdio: ["pipe", "pipe", "pipe"] });
      let tacitOut = "";
      tacit.stdout!.on("data", (chunk: Buffer) => (tacitOut += chunk.toString()));
      const tacitEnded = new Promise<number | null>((resolve) => tacit!.on("close", (code) => resolve(code)));
      await denoRunning(tacit.pid!, bootstrapPath);
      const canaryPid = canaryProcess.pid!;
      const tacitPid = tacit.pid!;
      // The premise: both run, unstopped, and the canary is where /proc shows it.
      expect(stateOf(canaryPid)).not.toBe("T");
      expect(commandLineOf(canaryPid)).toContain(canary);

      const { file, args } = sandboxLaunch(denoExecutable(), ["eval", attacker(CANARY_PREFIX, [tacitPid, canaryPid], [canaryPid])]);
      const attack = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8", timeout: 60_000 });
      expect(attack.status, attack.stderr).toBe(0);
      const report = JSON.parse(attack.stdout) as { pids: number[]; found: number[]; signalled: string[] };
      expect(attack.stdout + attack.stderr).not.toContain(canary);
      expect(report.found).toEqual([]);
      // It sees its own namespace's processes alone: itself, its first (pid 1).
      expect(report.pids).toEqual([1]);
      // Each signal went nowhere: no such process, in its namespace.
      for (const line of report.signalled) expect(line).toMatch(/: NotFound$/);

      expect(isRunning(canaryPid)).toBe(true);
      expect(stateOf(canaryPid)).not.toBe("T");
      expect(stateOf(tacitPid)).not.toBe("T");
      // tacit, not stopped, runs its script to its end.
      tacit.stdin!.end("four");
      expect(await tacitEnded).toBe(0);
      expect(tacitOut).toBe("read 4\n");
    } finally {
      canaryProcess?.kill("SIGKILL");
      tacit?.kill("SIGKILL");
      cleanup();
    }
  });

  it("a process native code starts in a program started the way a sandbox is ends with it, though it left the sandbox's process group", async () => {
    // A unique command line to find it by: sleep's argument, a number of seconds no one else sleeps.
    const seconds = `${300 + Math.floor(Math.random() * 1000)}.${randomBytes(2).readUInt16BE(0)}`;
    const code = `new Deno.Command("/usr/bin/setsid", { args: ["/bin/sh", "-c", "exec sleep ${seconds}"], stdin: "null", stdout: "null", stderr: "null" }).spawn();
console.log("started");
await new Promise(() => {});`;
    const sleeping = (): number[] => allProcesses().filter((pid) => commandLineOf(pid) === `sleep\0${seconds}\0` && isRunning(pid));
    const { file, args } = sandboxLaunch(denoExecutable(), ["eval", code]);
    const launched = spawn(file, args, { env: sandboxEnv(), cwd: "/", stdio: ["ignore", "pipe", "ignore"], detached: true });
    try {
      await new Promise<void>((resolve, reject) => {
        launched.stdout!.once("data", () => resolve());
        launched.once("close", () => reject(new Error("the program ended before it started its process")));
      });
      for (let tries = 0; tries < 100 && sleeping().length === 0; tries++) await sleep(50);
      // The premise: its process runs, in a session of its own.
      const started = sleeping();
      expect(started).toHaveLength(1);
      // As tacit ends a sandbox: SIGKILL to the process it spawned.
      launched.kill("SIGKILL");
      for (let tries = 0; tries < 40 && started.some(isRunning); tries++) await sleep(50);
      expect(started.filter(isRunning), "a process the sandbox started outlived it").toEqual([]);
    } finally {
      launched.kill("SIGKILL");
      for (const pid of sleeping()) process.kill(pid, "SIGKILL");
    }
  });

  it("native code in a program started the way a sandbox is can neither stop nor kill the process outside its namespace through their process group", async () => {
    // Its parent-death signal cleared first (nothing refuses that), so that it would outlive the
    // process outside, which tacit reaches it through; then SIGSTOP and SIGKILL to its own process
    // group (kill(0, …)), the one name a process outside its namespace could have for it.
    const code = `const libc = Deno.dlopen("libc.so.6", {
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  kill: { parameters: ["i32", "i32"], result: "i32" },
}).symbols;
const PR_SET_PDEATHSIG = 1, SIGSTOP = 19, SIGKILL = 9;
const cleared = libc.prctl(PR_SET_PDEATHSIG, 0n, 0n, 0n, 0n);
const sent = [SIGSTOP, SIGKILL].map((signal) => libc.kill(0, signal));
console.log(JSON.stringify({ cleared, sent }));
for await (const _ of Deno.stdin.readable) {}
console.log("ended");`;
    const { file, args } = sandboxLaunch(denoExecutable(), ["eval", code]);
    // As tacit spawns a sandbox: in a session, and so a process group, of its own.
    const launched = spawn(file, args, { env: sandboxEnv(), cwd: "/", stdio: ["pipe", "pipe", "pipe"], detached: true });
    let out = "";
    let err = "";
    launched.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    launched.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => launched.on("close", (code, signal) => resolve({ code, signal })));
    const reported = new Promise<void>((resolve) => {
      const look = (): void => {
        if (out.includes("\n")) resolve();
      };
      launched.stdout!.on("data", look);
      void ended.then(() => resolve());
    });
    try {
      await reported;
      // The premise: both calls were made, and the kills went somewhere (Deno's group: itself, which as its namespace's first process ignores them).
      expect(JSON.parse(out.split("\n")[0]!), err).toEqual({ cleared: 0, sent: [0, 0] });
      // Its input closed, it ends by itself; and the process outside ends as it does, neither stopped nor killed.
      launched.stdin!.end();
      expect(await ended, err).toEqual({ code: 0, signal: null });
      expect(out).toContain("ended\n");
    } finally {
      launched.kill("SIGKILL");
    }
  });

  it("tacit run's sandbox and pure evaluator are each the first process of a PID namespace whose /proc shows it alone", async () => {
    const { dir, cleanup } = tempDir("tacit-pids-run-");
    let tacit: ChildProcess | undefined;
    try {
      writeFileSync(path.join(dir, "waits.ts"), 'const doubled = classify("plain").map((value) => value + value);\nprintln(readInput().length);\n');
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "waits.ts"], { cwd: dir, env: childEnv(), stdio: ["pipe", "ignore", "ignore"] });
      const host = readlinkSync("/proc/self/ns/pid");
      for (const pid of [await denoRunning(tacit.pid!, bootstrapPath), await denoRunning(tacit.pid!, pureEvaluatorPath)]) {
        expectAloneInItsNamespace(pid, host);
      }
    } finally {
      tacit?.kill("SIGKILL");
      cleanup();
    }
  });

  it("tacit killed with SIGKILL (no exit hook runs): the sandbox spinning in its namespace ends with it", async () => {
    const { dir, cleanup } = tempDir("tacit-pids-kill-");
    let tacit: ChildProcess | undefined;
    let sandbox: number | undefined;
    try {
      writeFileSync(path.join(dir, "spin.ts"), "while (true) {}\n");
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "spin.ts"], { cwd: dir, env: childEnv(), stdio: "ignore" });
      const exited = new Promise<void>((resolve) => tacit!.on("exit", () => resolve()));
      sandbox = await denoRunning(tacit.pid!, bootstrapPath);
      // The premise: Deno runs the loop, in a namespace of its own, not as tacit's child (unshare's).
      expectAloneInItsNamespace(sandbox, readlinkSync("/proc/self/ns/pid"));
      tacit.kill("SIGKILL");
      await exited;
      for (let tries = 0; tries < 40 && isRunning(sandbox); tries++) await sleep(50);
      expect(isRunning(sandbox), "the sandbox ran on after tacit was killed").toBe(false);
    } finally {
      tacit?.kill("SIGKILL");
      if (sandbox !== undefined && isRunning(sandbox)) process.kill(sandbox, "SIGKILL");
      cleanup();
    }
  });

  it("tacit serve's session sandbox is the first process of a PID namespace whose /proc shows it alone", async () => {
    const { dir, cleanup } = tempDir("tacit-pids-serve-");
    const client = await connectServe(["--no-check"], dir);
    try {
      await createSession(client);
      const serve = descendantsOf(process.pid).find((pid) => {
        const argv = commandLineOf(pid).split("\0");
        return argv.includes(tacitBin) && argv.includes("serve");
      });
      expect(serve).toBeDefined();
      const host = readlinkSync("/proc/self/ns/pid");
      expectAloneInItsNamespace(await denoRunning(serve!, bootstrapPath), host);
    } finally {
      await client.close();
      cleanup();
    }
  });
});

/** Every process /proc shows this test (its own PID namespace's). */
function allProcesses(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** `pid` is in a PID namespace other than `hostNamespace`, as its first process, and the /proc it sees lists it alone. */
function expectAloneInItsNamespace(pid: number, hostNamespace: string): void {
  expect(readlinkSync(`/proc/${pid}/ns/pid`), commandLineOf(pid)).not.toBe(hostNamespace);
  // NSpid: its pid in each namespace, the host's first.
  expect(/^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]?.split(/\s+/)).toEqual([String(pid), "1"]);
  // Its /proc, read through its own root (its mount namespace): its processes, none of the host's.
  const listed = readdirSync(`/proc/${pid}/root/proc`).filter((name) => /^\d+$/.test(name));
  expect(listed).toEqual(["1"]);
  // It leads a session and process group of its own, not those of the process outside that waits
  // for it: in that group, it could stop or kill that process (kill(0, …)), see runner/sandbox-mounts.ts SETSID_CANDIDATES.
  const [pgrp, session] = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ").slice(2, 4).map(Number);
  expect({ pgrp, session }).toEqual({ pgrp: pid, session: pid });
}

describe.skipIf(!hostMakesPidNamespace || !existsSync("/usr/bin/unshare"))("a host that refuses the PID namespace", () => {
  /**
   * tacit started in a mount namespace of the test's, where /usr/bin/unshare refuses a PID
   * namespace as in a container whose /proc has parts masked (in unshare's words: the kernel
   * refuses the new /proc there), and makes the others with the real unshare.
   */
  function withPidNamespaceRefused(dir: string): string {
    const real = path.join(dir, "real-unshare");
    copyFileSync("/usr/bin/unshare", real);
    const refusing = path.join(dir, "refusing-unshare");
    writeFileSync(
      refusing,
      `#!/bin/sh\nfor arg in "$@"; do [ "$arg" = -- ] && break; [ "$arg" = --pid ] && { echo 'unshare: mount /proc failed: Operation not permitted' >&2; exit 1; }; done\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
    const inside = path.join(dir, "bind-then-node.sh");
    writeFileSync(inside, `#!/bin/sh\nmount --bind '${refusing}' /usr/bin/unshare && exec '${process.execPath}' "$@"\n`, { mode: 0o755 });
    const node = path.join(dir, "node-without-pid-namespace.sh");
    writeFileSync(node, `#!/bin/sh\nexec '${real}' --user --map-root-user --mount -- '${inside}' "$@"\n`, { mode: 0o755 });
    return node;
  }

  it("tacit run warns that the sandbox sees the host's processes, and runs; --require-network-namespace refuses", async () => {
    const { dir, cleanup } = tempDir("tacit-pids-refused-");
    try {
      const node = withPidNamespaceRefused(dir);
      writeFileSync(path.join(dir, "hello.ts"), 'println("ran");');
      const warned = await runCli(["run", "--no-check", "hello.ts"], { cwd: dir, node });
      expect(warned.code, warned.stderr).toBe(0);
      expect(warned.stdout).toBe("ran\n");
      expect(warned.stderr).toContain("the sandbox sees the host's processes: its PID namespace could not be made here");
      expect(warned.stderr).toContain("mount /proc failed: Operation not permitted (a proc file system cannot be mounted here");
      expect(warned.stderr).toContain("--require-network-namespace refuses to run without it");
      // Its files are still hidden, and its network its own: neither is warned about.
      expect(warned.stderr).not.toContain("sees the host's files");
      expect(warned.stderr).not.toContain("the sandbox runs in the host's network namespace");

      const refused = await runCli(["run", "--no-check", "--require-network-namespace", "hello.ts"], { cwd: dir, node });
      expect(refused.code).toBe(2);
      expect(refused.stdout).not.toContain("ran");
      expect(refused.stderr).toContain("refused, nothing was run: --require-network-namespace");
      expect(refused.stderr).toContain("the PID namespace that hides the host's processes from it could not be made here");

      const declined = await runCli(["run", "--no-check", "--no-network-namespace", "hello.ts"], { cwd: dir, node });
      expect(declined.code, declined.stderr).toBe(0);
      expect(declined.stderr).not.toContain("sees the host's processes");
    } finally {
      cleanup();
    }
  });
});
