// tacit's own memory holds what no script may see: the LLM key, classified plaintext, secret
// headers. A core dump of it (Ctrl-\ on a terminal, a crash) wrote all of it where the kernel's
// core_pattern says, by default a file `core` in tacit's working directory: the project, the
// default allowed root, where the next script (or a permitted `cat`) reads it. Measured before
// the fix: a 100 MB core holding the key and a classified value 19 times. tacit now keeps its
// memory out of its core dumps (bin/tacit.js writes 0 to its /proc/self/coredump_filter).
//
// The crash is SIGABRT sent from here, as a crash or Ctrl-\ (SIGQUIT) would end tacit: no exit
// hook runs. Where core_pattern sends cores elsewhere (a pipe to systemd-coredump or apport, an
// absolute path), or the hard core limit is 0, the dump itself is not looked at, and the filter is.

import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { tacitBin } from "../helpers.js";
import { lit, makeCanary, realTempDir } from "./fixtures.js";

/** The file name a core is written under in the crashing process's working directory, or null where core_pattern puts it elsewhere. */
function coreFileStart(): string | null {
  let pattern: string;
  try {
    pattern = readFileSync("/proc/sys/kernel/core_pattern", "utf8").trim();
  } catch {
    return null;
  }
  if (pattern === "" || pattern.startsWith("|") || pattern.includes("/")) return null;
  return pattern.split("%")[0]!;
}

/** Waits for `file` to exist (the command has started, the script holding its secrets), or for `child` to end. */
async function started(file: string, child: { exitCode: number | null; signalCode: string | null }): Promise<boolean> {
  for (;;) {
    if (existsSync(file)) return true;
    if (child.exitCode !== null || child.signalCode !== null) return false;
    await sleep(50);
  }
}

describe("a core dump of tacit", () => {
  it("holds none of its memory: no LLM key, no classified value, in a core file in the project", async (ctx) => {
    ctx.skip(process.platform !== "linux", "core_pattern and coredump_filter are Linux's");
    const { dir, cleanup } = realTempDir("tacit-exec-core-");
    try {
      const key = `sk-${makeCanary()}`;
      const classified = makeCanary();
      const script = `
const held = classify(${lit(classified)});
requestExecPermission(["sh"], (p) => p.exec("sh", ["-c", "touch started && exec sleep 60"], { timeoutMs: 60000 }));
println(held);
`;
      // Core files on, as far as the hard limit lets them: where they are off, a dump writes nothing to look at.
      const child = spawn(
        "/bin/sh",
        ["-c", 'ulimit -c unlimited 2>/dev/null || ulimit -c "$(ulimit -H -c)"; exec "$@"', "sh", process.execPath, tacitBin, "run", "--no-check",
          "--command-permissions", "sh", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "-"],
        { cwd: dir, env: { ...process.env, TACIT_LLM_API_KEY: key }, stdio: ["pipe", "pipe", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      child.stdout.resume();
      child.stdin.end(script);
      const ended = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
      try {
        expect(await started(path.join(dir, "started"), child), stderr).toBe(true);
        const pid = child.pid!;
        // What the kernel dumps of tacit's memory: nothing (0x33 by default: every private and shared mapping).
        expect(readFileSync(`/proc/${pid}/coredump_filter`, "utf8").trim()).toBe("00000000");
        const coreLimit = /^Max core file size\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))?.[1];
        process.kill(pid, "SIGABRT");
        expect(await ended).toBe("SIGABRT");
        const start = coreFileStart();
        if (start === null || coreLimit === "0") return; // The kernel writes no core here to look at.
        const cores = readdirSync(dir).filter((name) => name.startsWith(start));
        expect(cores.length, `core_pattern names ${start}…: no core was written in ${dir}`).toBeGreaterThan(0);
        for (const name of cores) {
          const core = readFileSync(path.join(dir, name));
          expect(core.includes(key), `${name} holds the LLM key`).toBe(false);
          expect(core.includes(classified), `${name} holds the classified value`).toBe(false);
        }
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }
    } finally {
      cleanup();
    }
  });
});

describe("a Node diagnostic report of tacit", () => {
  it("is not written, whatever NODE_OPTIONS asks: no report, so no LLM key from tacit's command line, in the project", async () => {
    const { dir, cleanup } = realTempDir("tacit-exec-report-");
    try {
      const key = `sk-${makeCanary()}`;
      const script = 'requestExecPermission(["sh"], (p) => p.exec("sh", ["-c", "touch started && exec sleep 60"], { timeoutMs: 60000 }));\n';
      const child = spawn(
        process.execPath,
        [tacitBin, "run", "--no-check", "--command-permissions", "sh", "--llm-api-key", key, "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "-"],
        { cwd: dir, env: { ...process.env, NODE_OPTIONS: "--report-on-signal --report-on-fatalerror" }, stdio: ["pipe", "pipe", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      child.stdout.resume();
      child.stdin.end(script);
      const ended = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      try {
        expect(await started(path.join(dir, "started"), child), stderr).toBe(true);
        // --report-on-signal's signal: Node wrote report.<date>.<pid>….json here, tacit's argv in it.
        process.kill(child.pid!, "SIGUSR2");
        await ended;
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }
      const written = readdirSync(dir).filter((name) => name !== "started");
      expect(written, stderr).toEqual([]);
      expect(stderr).not.toContain("Node.js report");
    } finally {
      cleanup();
    }
  });
});
