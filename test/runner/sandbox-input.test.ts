// The sandbox's stdin (runner/sandbox-input.ts): a socket the host makes non-blocking while it
// answers requests at once, so the sandbox spins on its reply instead of sleeping. These watch a
// real `tacit run`'s Deno from /proc: it spins only while the host answers at once, sleeps while
// a request is slow, and the socket's directory is gone once the sandbox has its input.

import { spawn } from "node:child_process";
import { connect } from "node:net";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { availableParallelism } from "node:os";
import { CHANNEL_DIR_PREFIX, sandboxInput } from "../../runner/sandbox-input.js";
import { childEnv, runCli, tacitBin, tempDir } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { commandLineOf, cpuMsOf, descendantsOf } from "../processes.js";

const O_NONBLOCK = 0o4000;
// These watch spinning happen: on a machine as loaded as a test run makes it, tacit would not spin
// by itself (see runner/spin-read.ts spinningPays).
process.env.TACIT_SPIN = "always";
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The flags of the sandbox's fd 0 (from /proc/PID/fdinfo/0), or null once it is gone. */
function stdinFlags(pid: number): number | null {
  try {
    return Number.parseInt(/^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/0`, "utf8"))![1]!, 8);
  } catch {
    return null;
  }
}

interface Watched {
  /** Samples of [ms since start, the sandbox's stdin flags]. */
  flags: Array<[number, number]>;
  exit: Promise<{ code: number | null; stdout: string; stderr: string }>;
  sandboxPid: Promise<number>;
  startedAt: number;
}

/** Starts `tacit run` on `script` in `dir` and samples its sandbox's stdin flags every 10 ms. */
function runWatched(dir: string, script: string, args: string[], spin: "always" | "never" = "always"): Watched {
  const startedAt = Date.now();
  const child = spawn(process.execPath, [tacitBin, "run", "--no-check", ...args, script], { cwd: dir, env: childEnv({ TMPDIR: dir, TACIT_SPIN: spin }) });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const flags: Array<[number, number]> = [];
  let done = false;
  const exit = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => {
      done = true;
      resolve({ code, stdout, stderr });
    }),
  );
  const sandboxPid = (async () => {
    for (;;) {
      const pid = descendantsOf(child.pid!).find((p) => commandLineOf(p).includes("bootstrap"));
      if (pid !== undefined) return pid;
      if (done) throw new Error(`the sandbox was never seen: ${stderr}`);
      await sleep(5);
    }
  })();
  void sandboxPid.then(async (pid) => {
    while (!done) {
      const value = stdinFlags(pid);
      if (value !== null) flags.push([Date.now() - startedAt, value]);
      await sleep(10);
    }
  }, () => undefined);
  return { flags, exit, sandboxPid, startedAt };
}

describe("the sandbox's input", () => {
  it("spins while the host answers at once, sleeps through a slow request, and leaves no socket directory", async () => {
    const { dir, cleanup } = tempDir("tacit-input-");
    cleanups.push(cleanup);
    let requestAt = 0;
    let answer: (() => void) | null = null;
    const server: TestServer = await startServer((_request, response) => {
      requestAt = Date.now();
      // Held for 1.5 s: the sandbox waits for it the whole time.
      answer = () => response.end("late");
      setTimeout(() => answer?.(), 1500);
    });
    cleanups.push(() => server.close());
    for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`);
    writeFileSync(
      path.join(dir, "script.ts"),
      [
        `requestFileSystem(".", (fs) => { let n = 0; for (let i = 0; i < 20; i++) n += fs.access("f" + i + ".txt").read().length; println(n); });`,
        // Computes for a second with no request: the host answered the last at once, so the input is left spinning.
        `const until = Date.now() + 1000; let x = 0; while (Date.now() < until) x++;`,
        `requestNetwork(["127.0.0.1:${server.port}"], (net) => println(net.httpGet("${server.origin}/slow")));`,
      ].join("\n"),
    );
    const watched = runWatched(dir, "script.ts", ["--network-permissions", `127.0.0.1:${server.port}`]);
    const pid = await watched.sandboxPid;
    // While the request is held: CPU time over 800 ms of it, and whether the channel's directory is left.
    for (let i = 0; i < 500 && requestAt === 0; i++) await sleep(10);
    expect(requestAt, "the script's request reached the server").toBeGreaterThan(0);
    await sleep(200);
    const before = cpuMsOf(pid)!;
    await sleep(800);
    const during = cpuMsOf(pid)! - before;
    const leftDirs = readdirSync(dir).filter((name) => name.startsWith(CHANNEL_DIR_PREFIX));
    const result = await watched.exit;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("150\nlate\n");

    // A spinning wait would have used about all of the 800 ms; a sleeping one uses none.
    expect(during, "CPU time (ms) the sandbox used while its request was held").toBeLessThan(200);
    const heldFrom = requestAt - watched.startedAt + 100;
    const held = watched.flags.filter(([at]) => at >= heldFrom && at <= heldFrom + 1200);
    expect(held.length).toBeGreaterThan(10);
    expect(held.every(([, flags]) => (flags & O_NONBLOCK) === 0), "blocking while the request was held").toBe(true);
    // Some sample of the second of computing saw the input left non-blocking after the reads' last
    // reply (where there is a CPU to spare: tacit inherits this process's CPUs).
    const computing = watched.flags.filter(([at]) => at < requestAt - watched.startedAt - 100);
    const spinningSeen = computing.some(([, flags]) => (flags & O_NONBLOCK) !== 0);
    expect(spinningSeen, "non-blocking after a reply given at once").toBe(availableParallelism() > 1);
    expect(leftDirs, "the socket's directory, while the sandbox ran").toEqual([]);
    expect(readdirSync(dir).filter((name) => name.startsWith(CHANNEL_DIR_PREFIX)), "after the run").toEqual([]);
  });

  it("never spins with TACIT_SPIN=never, through a second of reads answered at once", async () => {
    const { dir, cleanup } = tempDir("tacit-input-");
    cleanups.push(cleanup);
    for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`);
    writeFileSync(
      path.join(dir, "script.ts"),
      `requestFileSystem(".", (fs) => { let n = 0; const until = Date.now() + 1000; while (Date.now() < until) for (let i = 0; i < 20; i++) n += fs.access("f" + i + ".txt").read().length; println(n > 0); });`,
    );
    const watched = runWatched(dir, "script.ts", [], "never");
    const result = await watched.exit;
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("true\n");
    expect(watched.flags.length, "samples of the sandbox's stdin").toBeGreaterThan(10);
    expect(watched.flags.every(([, flags]) => (flags & O_NONBLOCK) === 0), "blocking throughout").toBe(true);
  });

  it("lets at most all CPUs but one spin at once (none with one CPU), and another once one stops", async () => {
    // tacit serve's sessions: sandboxes whose requests wait behind another's must not spin through the host's work.
    const limit = availableParallelism() - 1;
    const inputs = Array.from({ length: limit + 1 }, () => sandboxInput());
    const children = inputs.map((input) => {
      const child = spawn("sleep", ["30"], { stdio: [input.stdio, "ignore", "ignore"] });
      input.attach(child, (detail) => {
        throw new Error(detail);
      });
      return child;
    });
    cleanups.push(() => {
      for (const child of children) child.kill("SIGKILL");
      for (const input of inputs) input.close();
    });
    const spinning = (): boolean[] => children.map((child) => ((stdinFlags(child.pid!) ?? 0) & O_NONBLOCK) !== 0);
    expect(spinning().every((on) => !on), "blocking from the start").toBe(true);
    for (const input of inputs) input.spin(true);
    expect(spinning().filter(Boolean)).toHaveLength(limit);
    expect(spinning()[limit], "the one past the limit").toBe(false);
    if (limit === 0) return; // one CPU: nothing spins, so nothing stops
    inputs[0]!.spin(false);
    inputs[limit]!.spin(true);
    expect(spinning()[0]).toBe(false);
    expect(spinning()[limit], "once another stopped").toBe(true);
  });

  for (const [what, sends] of [["the wrong token", Buffer.alloc(16, 7)], ["nothing", Buffer.alloc(0)]] as const) {
    it(`gives another connection to its socket, sending ${what}, nothing of what the host writes`, async () => {
      const input = sandboxInput();
      expect(input.dir, "a socket pair was made").not.toBeNull();
      // Another process of the same user, connecting to the socket before the host has accepted its own.
      const impostor = connect(path.join(input.dir!, "s"));
      const seen: Buffer[] = [];
      impostor.on("data", (chunk: Buffer) => seen.push(chunk));
      impostor.on("error", () => undefined);
      const closed = new Promise<void>((resolve) => impostor.on("close", () => resolve()));
      await new Promise<void>((resolve) => impostor.on("connect", () => resolve()));
      impostor.write(sends);
      const child = spawn("head", ["-c", "6"], { stdio: [input.stdio, "pipe", "ignore"] });
      input.attach(child, (detail) => {
        throw new Error(detail);
      });
      cleanups.push(() => {
        child.kill("SIGKILL");
        input.close();
        impostor.destroy();
      });
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
      input.write("secret", () => undefined);
      await exited;
      await closed;
      expect(output, "the sandbox's end got what the host wrote").toBe("secret");
      expect(Buffer.concat(seen).toString(), "the impostor got").toBe("");
    });
  }

  it("falls back to a pipe where a socket cannot be named (a temporary directory with a long path)", async () => {
    const { dir, cleanup } = tempDir("tacit-input-");
    cleanups.push(cleanup);
    // A Unix socket's name holds at most 107 bytes.
    const longTmp = path.join(dir, "t".repeat(120));
    mkdirSync(longTmp);
    writeFileSync(path.join(dir, "a.txt"), "abc");
    const result = await runCli(["run", "--no-check", "-"], {
      cwd: dir,
      env: { TMPDIR: longTmp },
      input: `requestFileSystem(".", (fs) => println(fs.access("a.txt").read()));`,
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("abc\n");
    expect(result.code).toBe(0);
    expect(readdirSync(longTmp)).toEqual([]);
    // libuv cuts a socket's name to fit: one made anyway would have landed beside them, here.
    expect(readdirSync(dir).sort()).toEqual(["a.txt", "t".repeat(120)]);
  });
});
