// As root, tacit's type checker ran as root: it runs no agent code, but it reads the agent's, and
// as root it could read every file root may and held every capability root has. Now it runs as the
// sandbox's unprivileged user (runner/checker-process.ts, runner/sandbox-user.ts), with no
// capability and no way to gain one, its working directory shared with that user's group for
// reading only; where that user cannot reach what the checker reads, it runs as before.
// This machine runs the tests as root; elsewhere there is nothing to switch from.

import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tscExecutable } from "../../runner/paths.js";
import { SANDBOX_GID, SANDBOX_UID } from "../../runner/sandbox-user.js";
import { childEnv, runCli, slowToCheck, tacitBin } from "../helpers.js";
import { childrenOf, commandLineOf, killAndWait } from "../processes.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync("/tmp/tacit-test-checker-user-");
  // Reachable by the unprivileged user a root tacit runs its checker as: each test gives tacit a TMPDIR in it.
  chmodSync(dir, 0o755);
  writeFileSync(path.join(dir, "slow.ts"), slowToCheck(200));
  writeFileSync(path.join(dir, "bad.ts"), 'const s: string = 1;\nprintln("ran", s);\n');
  writeFileSync(path.join(dir, "good.ts"), 'const s: string = "checked";\nprintln("ran", s);\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A temporary directory of its own for one tacit (TMPDIR), with `mode`; the checker's working directory is made in it. */
function ownTmp(mode: number): string {
  const tmp = mkdtempSync(path.join(dir, "tmp-"));
  chmodSync(tmp, mode);
  return tmp;
}

/** The tsc process among `tacitPid`'s children (of any of its threads) whose command line names `needle`, once it runs tsc. */
async function checkerOf(tacitPid: number, needle: string): Promise<number> {
  for (let tries = 0; tries < 600; tries++) {
    const found = childrenOf(tacitPid).find((pid) => {
      const line = commandLineOf(pid);
      return line.split("\0")[0] === tscExecutable() && line.includes(needle);
    });
    if (found !== undefined) return found;
    await sleep(50);
  }
  throw new Error(`no type checker naming ${needle} under ${tacitPid}`);
}

/** The lines of /proc/`pid`/status this test reads: who the process is, and what it may do. */
function identityOf(pid: number): Record<string, string> {
  const wanted = ["Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs"];
  const lines = readFileSync(`/proc/${pid}/status`, "utf8").split("\n");
  return Object.fromEntries(
    lines.map((line) => line.split(":\t")).filter(([name]) => wanted.includes(name!)).map(([name, value]) => [name!, value!.trim().replace(/\s+/g, " ")]),
  );
}

const NO_CAPABILITY = "0000000000000000";
const AS_SANDBOX_USER = {
  Uid: `${SANDBOX_UID} ${SANDBOX_UID} ${SANDBOX_UID} ${SANDBOX_UID}`,
  Gid: `${SANDBOX_GID} ${SANDBOX_GID} ${SANDBOX_GID} ${SANDBOX_GID}`,
  Groups: "",
  CapInh: NO_CAPABILITY,
  CapPrm: NO_CAPABILITY,
  CapEff: NO_CAPABILITY,
  CapBnd: NO_CAPABILITY,
  CapAmb: NO_CAPABILITY,
  NoNewPrivs: "1",
};

/** Every file in the checker's working directory under `tmp` (and the directory): root's, which no one else may change. */
function workingFilesOf(tmp: string, kind: string): Array<{ name: string; uid: number; writableByOthers: boolean }> {
  const work = readdirSync(tmp).find((name) => name.startsWith(kind));
  expect(work, "the checker's working directory").toBeDefined();
  const at = path.join(tmp, work!);
  return [at, ...readdirSync(at).map((name) => path.join(at, name))].map((file) => {
    const { uid, mode } = statSync(file);
    return { name: path.relative(tmp, file), uid, writableByOthers: (mode & 0o022) !== 0 };
  });
}

/** Starts `tacit ...args` with its own TMPDIR, and returns the process and its checker's pid, while that checks slow.ts. */
async function whileChecking(tmp: string, kind: string, start: (env: Record<string, string>) => ChildProcess): Promise<{ tacit: ChildProcess; checker: number }> {
  const tacit = start(childEnv({ TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" }));
  return { tacit, checker: await checkerOf(tacit.pid!, path.join(tmp, kind)) };
}

describe.runIf(process.geteuid?.() === 0)("as root, the type checker", () => {
  it("of tacit run is the sandbox's unprivileged user, without a capability; its files stay root's; and it still checks", async () => {
    const tmp = ownTmp(0o755);
    const { tacit, checker } = await whileChecking(tmp, "tacit-check-", (env) =>
      spawn(process.execPath, [tacitBin, "run", "--exec-timeout-ms", "600000", "slow.ts"], { cwd: dir, env, stdio: "ignore" }),
    );
    try {
      expect(identityOf(checker)).toEqual(AS_SANDBOX_USER);
      for (const file of workingFilesOf(tmp, "tacit-check-")) expect(file, file.name).toMatchObject({ uid: 0, writableByOthers: false });
    } finally {
      await killAndWait(tacit);
    }
    const bad = await runCli(["run", "bad.ts"], { cwd: dir, env: { TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" } });
    expect(bad.code, bad.stderr).toBe(3);
    expect(bad.stderr).toContain("TS2322");
    expect(bad.stdout).toBe("");
    const good = await runCli(["run", "good.ts"], { cwd: dir, env: { TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" } });
    expect(good, good.stderr).toMatchObject({ code: 0, stdout: "ran checked\n" });
  }, 120_000);

  it("of tacit serve is too, and its launcher stays root's alone", async () => {
    const tmp = ownTmp(0o755);
    const { tacit, checker } = await whileChecking(tmp, "tacit-checker-", (env) => {
      const child = spawn(process.execPath, [tacitBin, "serve", "--quiet", "--exec-timeout-ms", "600000"], { cwd: dir, env, stdio: ["pipe", "ignore", "ignore"] });
      const send = (message: object): void => void child.stdin!.write(`${JSON.stringify(message)}\n`);
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "execute_typescript", arguments: { code: readFileSync(path.join(dir, "slow.ts"), "utf8") } } });
      return child;
    });
    try {
      expect(identityOf(checker)).toEqual(AS_SANDBOX_USER);
      const files = workingFilesOf(tmp, "tacit-checker-");
      for (const file of files) expect(file, file.name).toMatchObject({ uid: 0, writableByOthers: false });
      const launcher = files.find((file) => file.name.endsWith("/checker.sh"));
      expect(launcher).toBeDefined();
      expect(statSync(path.join(tmp, launcher!.name)).mode & 0o077, "the launcher's mode for others").toBe(0);
    } finally {
      await killAndWait(tacit);
    }
  }, 120_000);

  it("where that user cannot reach the temporary directory, still checks (as tacit's user, as before)", async () => {
    const tmp = ownTmp(0o700);
    const bad = await runCli(["run", "bad.ts"], { cwd: dir, env: { TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" } });
    expect(bad.code, bad.stderr).toBe(3);
    expect(bad.stderr).toContain("TS2322");
    const good = await runCli(["run", "good.ts"], { cwd: dir, env: { TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" } });
    expect(good, good.stderr).toMatchObject({ code: 0, stdout: "ran checked\n" });
  }, 120_000);
});
