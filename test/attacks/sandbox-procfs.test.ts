// What the sandbox sees of procfs beyond its own processes (runner/sandbox-procfs.ts): in its PID
// namespace, nothing. Its /proc was a procfs of its own that listed only its processes, but the
// machine-wide entries were all there, and native code in Deno (which no permission binds) read
// the host's kernel command line, disks, processor, memory, load, boot identifier and the rest.
// Tested with Deno's own file APIs (all permissions: the validator and Deno's permissions
// bypassed) in a program started the way a sandbox is, against what the test reads of the host's
// /proc; and, through `tacit run`, by looking into its sandbox's and pure evaluator's own view
// from the host (/proc/<pid>/root: what their native code would open). Where the procfs cannot be
// remounted so (a kernel before 5.8, no PID namespace), the setup covers the entries one by one:
// tested by the same code under those setups. And a mount of the host's below /proc (systemd's
// binfmt_misc automount) no longer fails the PID namespace's setup, which it did.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { release } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { OWN_PROC_FLAG, PID_NAMESPACE_FLAGS } from "../../runner/exec/pid-namespace.js";
import { sandboxNetwork } from "../../runner/network-namespace.js";
import { bootstrapPath, denoExecutable, pureEvaluatorPath } from "../../runner/paths.js";
import { sandboxMountPlan } from "../../runner/sandbox-mounts.js";
import { sandboxEnv, sandboxLaunch } from "../../runner/sandbox-process.js";
import { hasProcSubset } from "../../runner/sandbox-procfs.js";
import { childEnv, runCli, tacitBin, tempDir } from "../helpers.js";
import { denoRunning } from "../processes.js";

/** Whether this host lets the test make the namespaces tacit makes, as a user namespace's root. */
const hostMakesMounts =
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", "/usr/bin/mount -t tmpfs x /mnt"], { stdio: "ignore" }).status === 0;

/** Whether tacit's sandbox gets a PID namespace with a /proc of its own here, on a kernel whose procfs can leave the machine's entries out. */
const network = sandboxNetwork();
const ownProcfs = network.kind === "own-namespace" && network.processesInView === null && hasProcSubset(release());

/**
 * Files of procfs that tell about the machine, not the process: those this host has. Deno reads
 * /proc/meminfo and /proc/sys/kernel/osrelease as it starts, setpriv /proc/sys/kernel/cap_last_cap:
 * they are hidden too, and both still run (see runner/sandbox-procfs.ts).
 */
const MACHINE_FILES = [
  "/proc/cmdline",
  "/proc/partitions",
  "/proc/cpuinfo",
  "/proc/meminfo",
  "/proc/version",
  "/proc/modules",
  "/proc/diskstats",
  "/proc/swaps",
  "/proc/loadavg",
  "/proc/uptime",
  "/proc/interrupts",
  "/proc/stat",
  "/proc/vmstat",
  "/proc/mounts",
  "/proc/sys/kernel/random/boot_id",
  "/proc/sys/kernel/osrelease",
  "/proc/sys/kernel/cap_last_cap",
  "/proc/pressure/cpu",
].filter((file) => existsSync(file));

/** What the sandbox's /proc may still list: its processes' directories, self and thread-self. */
const PROCESS_ENTRY = /^(\d+|self|thread-self)$/;

/** The host's kernel command line, which no view of the sandbox's may show. */
const hostCommandLine = readFileSync("/proc/cmdline", "utf8").trim();

/** Deno code that reads each of MACHINE_FILES and lists /proc, and prints what it got as JSON. */
const readsProc = `const read = (file) => { try { return Deno.readTextFileSync(file); } catch (error) { return "(" + error.name + ")"; } };
const files = Object.fromEntries(${JSON.stringify(MACHINE_FILES)}.map((file) => [file, read(file)]));
const listed = [...Deno.readDirSync("/proc")].map((entry) => entry.name).sort();
console.log(JSON.stringify({ files, listed, ownStatus: read("/proc/self/status").startsWith("Name:") }));`;

interface ProcSeen {
  files: Record<string, string>;
  listed: string[];
  ownStatus: boolean;
}

function denoEval(code: string, confined: boolean): { status: number | null; stdout: string; stderr: string } {
  const { file, args } = confined ? sandboxLaunch(denoExecutable(), ["eval", code]) : { file: denoExecutable(), args: ["eval", code] };
  const run = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8", timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** What `file` is in a view: its text, or why it could not be read. */
function readOrWhy(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    return `(${(error as NodeJS.ErrnoException).code})`;
  }
}

describe.skipIf(!ownProcfs)("the machine's procfs entries, from the sandbox", () => {
  it("native code in a program started the way a sandbox is reads none of them, and lists only its own processes in /proc", () => {
    // The premise: the host's kernel command line is long enough to be looked for.
    expect(hostCommandLine.length).toBeGreaterThan(8);
    // The control: the same code, Deno started plainly, reads each file.
    const plain = denoEval(readsProc, false);
    expect(plain.status, plain.stderr).toBe(0);
    const plainSeen = JSON.parse(plain.stdout) as ProcSeen;
    for (const file of MACHINE_FILES) expect(plainSeen.files[file], file).not.toMatch(/^\(/);
    expect(plainSeen.files["/proc/cmdline"]).toContain(hostCommandLine);

    const confined = denoEval(readsProc, true);
    expect(confined.status, confined.stderr).toBe(0);
    const seen = JSON.parse(confined.stdout) as ProcSeen;
    expect(seen.files).toEqual(Object.fromEntries(MACHINE_FILES.map((file) => [file, "(NotFound)"])));
    expect(confined.stdout + confined.stderr).not.toContain(hostCommandLine);
    expect(seen.listed.filter((name) => !PROCESS_ENTRY.test(name)), "entries of the sandbox's /proc that are not its processes'").toEqual([]);
    // What Deno needs of its own is still there.
    expect(seen.listed).toContain("self");
    expect(seen.ownStatus).toBe(true);
  });

  it("tacit run's sandbox and pure evaluator have none of them in view, and the script runs", async () => {
    const { dir, cleanup } = tempDir("tacit-procfs-run-");
    let tacit: ChildProcess | undefined;
    try {
      writeFileSync(path.join(dir, "waits.ts"), 'const doubled = classify("plain").map((value) => value + value);\nprintln("read", readInput().length);\n');
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "--require-network-namespace", "waits.ts"], {
        cwd: dir,
        env: childEnv(),
        stdio: ["pipe", "pipe", "pipe"],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      tacit.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
      tacit.stderr!.on("data", (chunk: Buffer) => err.push(chunk));
      const ended = new Promise<number | null>((resolve) => tacit!.on("close", resolve));
      for (const entry of [bootstrapPath, pureEvaluatorPath]) {
        // The program's own view, as its native code would open it (the host is root of it).
        const view = path.join("/proc", String(await denoRunning(tacit.pid!, entry)), "root", "proc");
        const seen = Object.fromEntries(MACHINE_FILES.map((file) => [file, readOrWhy(path.join(view, path.relative("/proc", file)))]));
        expect(seen, entry).toEqual(Object.fromEntries(MACHINE_FILES.map((file) => [file, "(ENOENT)"])));
        expect(readdirSync(view).filter((name) => !PROCESS_ENTRY.test(name)), entry).toEqual([]);
        // The namespace's first process, Deno, is still in it.
        expect(readOrWhy(path.join(view, "1", "status"))).toMatch(/^Name:/);
      }
      tacit.stdin!.end("four");
      expect(await ended, Buffer.concat(err).toString()).toBe(0);
      expect(Buffer.concat(out).toString()).toBe("read 4\n");
    } finally {
      tacit?.kill("SIGKILL");
      cleanup();
    }
  });
});

describe("which kernels have procfs's subset=pid", () => {
  it("5.8 and later, by the release uname gives; nothing where the release cannot be read", () => {
    expect(["6.18.44-fc-v1272", "5.8.0", "5.15.0-105-generic", "10.0"].map(hasProcSubset)).toEqual([true, true, true, true]);
    expect(["5.7.19", "4.18.0-553.el8_10.x86_64", "3.10.0", "", "linux"].map(hasProcSubset)).toEqual([false, false, false, false, false]);
  });
});

/**
 * readsProc run in the sandbox's mount setup as a user namespace's root would make it, with the
 * setup a kernel of release `kernelRelease` gets: in a PID namespace with its own /proc, or without
 * one (the host's /proc).
 */
function readsProcUnder(kernelRelease: string, ownProc: boolean): { status: number | null; stdout: string; stderr: string } {
  const plan = sandboxMountPlan([denoExecutable(), bootstrapPath, pureEvaluatorPath], kernelRelease);
  if ("unavailable" in plan) throw new Error(plan.unavailable);
  const setup = ownProc ? plan.argsBeforeInOwnSession : plan.argsBefore;
  if (setup === null) throw new Error("util-linux setsid is missing");
  const namespaces = ["--user", "--map-root-user", "--net", "--mount", "--ipc", ...(ownProc ? [...PID_NAMESPACE_FLAGS, OWN_PROC_FLAG] : [])];
  const run = spawnSync("unshare", [...namespaces, "--", ...setup, denoExecutable(), "eval", readsProc], {
    env: sandboxEnv(),
    cwd: "/",
    encoding: "utf8",
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe.skipIf(!hostMakesMounts)("where the sandbox's procfs cannot be remounted with subset=pid, its machine-wide entries are covered one by one", () => {
  // /proc/mounts leads into /proc/self, as /proc/self/mountinfo: the sandbox's own mounts, left (see runner/sandbox-mounts.ts).
  const covered = MACHINE_FILES.filter((file) => file !== "/proc/mounts");
  for (const [shape, kernelRelease, ownProc] of [
    ["a kernel before 5.8, in a PID namespace with its own /proc", "5.4.0-42-generic", true],
    ["no PID namespace: the host's /proc", release(), false],
  ] as const) {
    it(`${shape}: native code reads each empty or missing, and Deno runs`, () => {
      const confined = readsProcUnder(kernelRelease, ownProc);
      expect(confined.status, confined.stderr).toBe(0);
      const seen = JSON.parse(confined.stdout) as ProcSeen;
      const read = covered.filter((file) => seen.files[file] !== "" && seen.files[file] !== "(NotFound)");
      expect(Object.fromEntries(read.map((file) => [file, seen.files[file]])), "what the sandbox read of the machine's procfs").toEqual({});
      expect(confined.stdout + confined.stderr).not.toContain(hostCommandLine);
      expect(seen.ownStatus).toBe(true);
    });
  }
});

describe.skipIf(!ownProcfs || !hostMakesMounts)("a mount of the host's below /proc (systemd's binfmt_misc automount)", () => {
  it("leaves the sandbox its PID namespace: tacit run --require-network-namespace runs, with no warning", async () => {
    // The setup made every mount listed in its mount table read-only, those of the host's /proc
    // beneath its own among them, which are not in its view: it failed, and tacit ran the sandbox
    // without its PID namespace, with a warning (--require-network-namespace refused to run).
    const { dir, cleanup } = tempDir("tacit-procfs-binfmt-");
    try {
      const inside = path.join(dir, "mount-then-node.sh");
      writeFileSync(inside, `#!/bin/sh\nmount -t tmpfs tacit-test-binfmt /proc/sys/fs/binfmt_misc && exec '${process.execPath}' "$@"\n`, { mode: 0o755 });
      const node = path.join(dir, "node-with-binfmt.sh");
      writeFileSync(node, `#!/bin/sh\nexec unshare --user --map-root-user --mount -- '${inside}' "$@"\n`, { mode: 0o755 });
      writeFileSync(path.join(dir, "hello.ts"), 'println("hello");\n');
      const run = await runCli(["run", "--no-check", "--require-network-namespace", "hello.ts"], { node, cwd: dir });
      expect(run.stderr).toBe("");
      expect(run.stdout).toBe("hello\n");
      expect(run.code).toBe(0);
    } finally {
      cleanup();
    }
  });
});
