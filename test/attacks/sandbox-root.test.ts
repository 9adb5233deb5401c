// tacit run as root (a container's entrypoint, CI): the sandbox and the pure evaluator must not be
// root outside their namespaces (runner/sandbox-user.ts). They were: `unshare --map-root-user` run
// by root maps root inside to root outside, and with every capability dropped the kernel's owner
// check still let uid 0 read every root-owned file left in view, so native code in Deno (its
// permissions and the validator bypassed) read /etc/shadow. Tested with Deno's own file API (all
// permissions) in a program started the way a sandbox is, and by reading, from the host, who
// `tacit run`'s sandbox and pure evaluator and `tacit serve`'s session sandbox run as.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bootstrapPath, denoExecutable, pureEvaluatorPath } from "../../runner/paths.js";
import { sandboxEnv, sandboxLaunch } from "../../runner/sandbox-process.js";
import { SANDBOX_GID, SANDBOX_UID } from "../../runner/sandbox-user.js";
import { childEnv, connectServe, createSession, repoRoot, runCli, tacitBin, tempDir } from "../helpers.js";
import { setTimeout as sleep } from "node:timers/promises";
import { commandLineOf, cpuMsOf, denoRunning, descendantsOf, isRunning } from "../processes.js";

const root = process.geteuid?.() === 0;
const SHADOW = "/etc/shadow";
/** Whether the host makes the namespaces tacit's sandbox runs in (else it runs in the host's, and tacit warns). */
const hostMakesNamespaces = spawnSync("unshare", ["--net", "--mount", "--", "/bin/sh", "-c", "exit 0"], { stdio: "ignore" }).status === 0;

/** Who `pid` runs as, from the host's /proc/<pid>/status: its ids, supplementary groups, capabilities and no_new_privs. */
function credentialsOf(pid: number): Record<string, string> {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string): string => new RegExp(`^${name}:[ \\t]*([^\\n]*)$`, "m").exec(status)?.[1]?.trim() ?? `(no ${name})`;
  return Object.fromEntries(["Uid", "Gid", "Groups", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs"].map((name) => [name, field(name)]));
}

/** CPU time a sandbox has used once it is in its script's loop: more than its start takes. */
const SPINNING_CPU_MS = 1000;

const UNPRIVILEGED = {
  Uid: Array(4).fill(SANDBOX_UID).join("\t"),
  Gid: Array(4).fill(SANDBOX_GID).join("\t"),
  Groups: "",
  CapPrm: "0000000000000000",
  CapEff: "0000000000000000",
  CapBnd: "0000000000000000",
  CapAmb: "0000000000000000",
  NoNewPrivs: "1",
};

/** Root, every capability dropped: what a sandbox without namespaces runs as where the unprivileged user cannot reach tacit's files. */
const ROOT_WITHOUT_CAPABILITIES = { ...UNPRIVILEGED, Uid: "0\t0\t0\t0", Gid: "0\t0\t0\t0" };

/** Whether the unprivileged user may read `file` where it is (every directory above it entered). */
function unprivilegedReaches(file: string): boolean {
  const switched = ["--reuid", String(SANDBOX_UID), "--regid", String(SANDBOX_GID), "--clear-groups", "--", "/usr/bin/test", "-r", file];
  return spawnSync("setpriv", switched, { stdio: "ignore" }).status === 0;
}

describe.skipIf(!root)("tacit run as root: the sandbox is not root outside its namespaces", () => {
  it.skipIf(!existsSync(SHADOW) || !hostMakesNamespaces)(
    "native code in a program started the way a sandbox is cannot read /etc/shadow, which root owns and others may not read",
    () => {
      // The premise: root reads it here, and it holds lines to look for.
      const shadowLines = readFileSync(SHADOW, "utf8").split("\n").filter((line) => line.length >= 8);
      expect(shadowLines.length).toBeGreaterThan(0);
      const code = `const tries = {};
try { tries.deno = Deno.readTextFileSync(${JSON.stringify(SHADOW)}); } catch (error) { tries.deno = "(" + error.name + ")"; }
try { tries.node = (await import("node:fs")).readFileSync(${JSON.stringify(SHADOW)}, "utf8"); } catch (error) { tries.node = "(" + error.code + ")"; }
console.log(JSON.stringify(tries));`;
      const { file, args } = sandboxLaunch(denoExecutable(), ["eval", code]);
      const attack = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8", timeout: 60_000 });
      expect(attack.status, attack.stderr).toBe(0);
      expect(JSON.parse(attack.stdout)).toEqual({ deno: "(PermissionDenied)", node: "(EACCES)" });
      for (const line of shadowLines) expect(attack.stdout + attack.stderr).not.toContain(line);
    },
  );

  it.skipIf(!hostMakesNamespaces)("tacit run's sandbox and pure evaluator run as the unprivileged user, with no group, capability or way back to root", async () => {
    const { dir, cleanup } = tempDir("tacit-root-run-");
    let tacit: ChildProcess | undefined;
    try {
      writeFileSync(path.join(dir, "waits.ts"), 'const doubled = classify("plain").map((value) => value + value);\nprintln(readInput().length);\n');
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "--require-network-namespace", "waits.ts"], {
        cwd: dir,
        env: childEnv(),
        stdio: ["pipe", "ignore", "ignore"],
      });
      expect(credentialsOf(await denoRunning(tacit.pid!, bootstrapPath))).toEqual(UNPRIVILEGED);
      expect(credentialsOf(await denoRunning(tacit.pid!, pureEvaluatorPath))).toEqual(UNPRIVILEGED);
    } finally {
      tacit?.kill("SIGKILL");
      cleanup();
    }
  });

  it.skipIf(!hostMakesNamespaces)("as root without CAP_DAC_OVERRIDE (its own mount setup cannot make mount points in a cover of mode 0555), the sandbox still gets its mount namespace, from a user namespace", async () => {
    // Root's own namespaces were tried first at every level of confinement, the network namespace
    // alone among them: it was taken, and the sandbox saw the host's files, with a warning.
    const { dir, cleanup } = tempDir("tacit-root-no-dac-");
    try {
      writeFileSync(path.join(dir, "hello.ts"), 'println("hello");\n');
      // The Node tacit runs with: root, without the two capabilities that pass permission bits.
      const node = path.join(dir, "node-without-dac-override");
      writeFileSync(node, `#!/bin/sh\nexec setpriv --bounding-set -dac_override,-dac_read_search --inh-caps -all ${JSON.stringify(process.execPath)} "$@"\n`, { mode: 0o755 });
      const r = await runCli(["run", "--no-check", "--require-network-namespace", "hello.ts"], { node, cwd: dir });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("hello\n");
      expect(r.code).toBe(0);
    } finally {
      cleanup();
    }
  });

  it("with --no-network-namespace (no namespace at all), tacit run's sandbox and pure evaluator run as the unprivileged user where it can read tacit's files, else as root without a capability", async () => {
    // They ran as root with every capability. Without a mount namespace nothing binds tacit's files
    // back: the unprivileged user reads them where they are, or not at all (a checkout under a 0700 /root).
    const { dir, cleanup } = tempDir("tacit-root-declined-");
    let tacit: ChildProcess | undefined;
    try {
      writeFileSync(path.join(dir, "waits.ts"), 'const doubled = classify("plain").map((value) => value + value);\nprintln(readInput().length);\n');
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "--no-network-namespace", "waits.ts"], {
        cwd: dir,
        env: childEnv(),
        stdio: ["pipe", "ignore", "ignore"],
      });
      const expected = unprivilegedReaches(bootstrapPath) && unprivilegedReaches(pureEvaluatorPath) ? UNPRIVILEGED : ROOT_WITHOUT_CAPABILITIES;
      expect(credentialsOf(await denoRunning(tacit.pid!, bootstrapPath))).toEqual(expected);
      expect(credentialsOf(await denoRunning(tacit.pid!, pureEvaluatorPath))).toEqual(expected);
    } finally {
      tacit?.kill("SIGKILL");
      cleanup();
    }
  });

  it("as root of a user namespace that maps root alone (the unprivileged user cannot be switched to), with --no-network-namespace the sandbox runs without a capability", async () => {
    const { dir, cleanup } = tempDir("tacit-root-alone-");
    let tacit: ChildProcess | undefined;
    try {
      writeFileSync(path.join(dir, "waits.ts"), 'const doubled = classify("plain").map((value) => value + value);\nprintln(readInput().length);\n');
      tacit = spawn("unshare", ["--user", "--map-root-user", "--", process.execPath, tacitBin, "run", "--no-check", "--no-network-namespace", "waits.ts"], {
        cwd: dir,
        env: childEnv(),
        stdio: ["pipe", "ignore", "ignore"],
      });
      // unshare runs tacit in its place: the process spawned is tacit's.
      expect(credentialsOf(await denoRunning(tacit.pid!, bootstrapPath))).toEqual(ROOT_WITHOUT_CAPABILITIES);
      expect(credentialsOf(await denoRunning(tacit.pid!, pureEvaluatorPath))).toEqual(ROOT_WITHOUT_CAPABILITIES);
    } finally {
      tacit?.kill("SIGKILL");
      cleanup();
    }
  });

  it.skipIf(!hostMakesNamespaces)("installed under a directory only root may enter (a checkout in a 0700 /root), tacit run's sandbox starts, with namespaces or without", async () => {
    // tacit's package seen under a root-owned 0700 directory, bound there in a mount namespace of
    // the test's. setpriv still holds root's capabilities as it executes its program: a probe
    // whose nothing-to-run setpriv executed itself found tacit's files reachable by the
    // unprivileged user, and the sandbox, without namespaces, then failed to start (exit 126).
    const { dir, cleanup } = tempDir("tacit-root-locked-");
    try {
      const locked = path.join(dir, "locked");
      const installed = path.join(locked, "pkg");
      mkdirSync(installed, { recursive: true });
      chmodSync(locked, 0o700);
      const node = path.join(dir, "node-seeing-tacit-locked.sh");
      const bind = 'mount --bind "$1" "$2" && shift 2 && exec "$@"';
      writeFileSync(node, `#!/bin/sh\nexec unshare --mount --propagation private -- /bin/sh -c '${bind}' bind '${repoRoot}' '${installed}' '${process.execPath}' "$@"\n`, { mode: 0o755 });
      const project = path.join(dir, "project");
      mkdirSync(project);
      writeFileSync(path.join(project, "hello.ts"), 'const doubled = classify("plain").map((value) => value + value);\nprintln("ran");\n');
      const bin = path.join(installed, path.relative(repoRoot, tacitBin));
      for (const flags of [["--require-network-namespace"], ["--no-network-namespace"]]) {
        const result = await runCli(["run", "--no-check", ...flags, "hello.ts"], { cwd: project, node, bin });
        expect(result.code, `${flags.join(" ")}: ${result.stderr}`).toBe(0);
        expect(result.stdout).toBe("ran\n");
      }
    } finally {
      cleanup();
    }
  });

  it.skipIf(!hostMakesNamespaces)("tacit killed with SIGKILL: the sandbox, spinning as the unprivileged user, ends with it", async () => {
    // The kernel clears a process's parent-death signal when its uid changes: the switch to the
    // unprivileged user must set it again, or a sandbox in a loop runs on after tacit.
    const { dir, cleanup } = tempDir("tacit-root-kill-");
    let tacit: ChildProcess | undefined;
    let sandbox: number | undefined;
    try {
      writeFileSync(path.join(dir, "spin.ts"), "while (true) {}\n");
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "spin.ts"], { cwd: dir, env: childEnv(), stdio: "ignore" });
      const exited = new Promise<void>((resolve) => tacit!.on("exit", () => resolve()));
      sandbox = await denoRunning(tacit.pid!, bootstrapPath);
      expect(credentialsOf(sandbox)).toEqual(UNPRIVILEGED);
      // The premise: the loop runs (Deno waiting for its program would end at its input's end, whatever its signal).
      for (let tries = 0; tries < 400 && (cpuMsOf(sandbox) ?? 0) < SPINNING_CPU_MS; tries++) await sleep(50);
      expect(cpuMsOf(sandbox)).toBeGreaterThanOrEqual(SPINNING_CPU_MS);
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

  it.skipIf(!hostMakesNamespaces)("tacit serve's session sandbox runs as the unprivileged user", async () => {
    const { dir, cleanup } = tempDir("tacit-root-serve-");
    const client = await connectServe(["--no-check", "--require-network-namespace"], dir);
    try {
      await createSession(client);
      const serve = descendantsOf(process.pid).find((pid) => {
        const argv = commandLineOf(pid).split("\0");
        return argv.includes(tacitBin) && argv.includes("serve");
      });
      expect(serve).toBeDefined();
      expect(credentialsOf(await denoRunning(serve!, bootstrapPath))).toEqual(UNPRIVILEGED);
    } finally {
      await client.close();
      cleanup();
    }
  });
});
