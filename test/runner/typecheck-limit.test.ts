// Type-checking is held to the evaluation's time limit: types can be written so that checking
// them takes minutes (here, about a second per copy of a template literal type of 10,000
// members inferred apart). In tacit serve the check ran on the server's thread, so every other
// session waited with it; in tacit run and tacit check nothing limited it.

import { spawn } from "node:child_process";
import { expectToDieWith } from "../processes.js";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, createSession, runCli, slowToCheck, tacitBin, type ToolResult } from "../helpers.js";

const LIMIT_MS = 2000;
// No wall-clock bounds: these 30 copies type-check (fine) in about 30 s when nothing limits the
// check, so a refusal for check-time-limit that names LIMIT_MS is itself the evidence that the
// limit, and no other, stopped it; a check that is not stopped ends in success.

let dir: string;
beforeAll(() => {
  // Not "tacit-check-…", the name of tacit's own check directories, whose scripts tacit refuses to run.
  dir = mkdtempSync(path.join(tmpdir(), "typecheck-limit-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a script whose types take too long to check", () => {
  it("is refused by tacit check once the limit passes", async () => {
    writeFileSync(path.join(dir, "slow.ts"), slowToCheck(30));
    const r = await runCli(["check", "--exec-timeout-ms", String(LIMIT_MS), "slow.ts"], { cwd: dir, env: { TACIT_TYPECHECK_CACHE: "off" } });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`check-time-limit: type-checking took longer than ${LIMIT_MS} ms`);
  }, 60_000);

  it("is held by tacit run to the limit its config file sets, though the check starts before the file is read", async () => {
    // tacit run's early check took the flag's limit or the default (15 s): with a config file
    // saying 2 s, these types were checked for 14 s, and the script then ran.
    writeFileSync(path.join(dir, "slow-run.ts"), slowToCheck(30));
    writeFileSync(path.join(dir, "limit.json"), JSON.stringify({ executionTimeoutMs: LIMIT_MS }));
    const r = await runCli(["run", "--config", "limit.json", "slow-run.ts"], { cwd: dir, env: { TACIT_TYPECHECK_CACHE: "off" } });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`check-time-limit: type-checking took longer than ${LIMIT_MS} ms`);
    expect(r.stdout).toBe("");
  }, 60_000);

  it("holds tacit serve no longer than the limit, leaves no checker behind, and the server goes on checking", async () => {
    const client = await connectServe(["--quiet", "--exec-timeout-ms", String(LIMIT_MS)], dir);
    try {
      const warm = (await client.callTool({ name: "execute_typescript", arguments: { code: 'const n: number = 1;\nprintln("warm", n)' } })).structuredContent as unknown as ToolResult;
      expect(warm.stdout).toBe("warm 1\n");
      const serverPid = (client.transport as unknown as { pid: number | null }).pid!;
      const [checker] = checkersOf(serverPid);
      expect(checker).toBeDefined();
      const slow = client.callTool({ name: "execute_typescript", arguments: { code: slowToCheck(30) } }, undefined, { timeout: 120_000 });
      // Another client's call, sent while the slow one is being checked.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const other = await client.callTool({ name: "execute_typescript", arguments: { code: 'const n: number = 2;\nprintln("other", n)' } }, undefined, { timeout: 120_000 });
      const refused = (await slow).structuredContent as unknown as ToolResult;
      expect(refused.exitCode, refused.error ?? "").toBe(3);
      expect(refused.error).toContain(`check-time-limit: type-checking took longer than ${LIMIT_MS} ms`);
      // Answered, and the slow check was stopped at the limit: the server was held no longer.
      expect((other.structuredContent as unknown as ToolResult).stdout).toBe("other 2\n");
      // The checker stopped at the limit was killed, and reaped: gone from /proc altogether, not
      // left there as a zombie. Its thread was terminated right after the kill, before it had
      // reaped it: each check stopped at the limit left a zombie for the server's life. Without
      // the fix this wait never ends (the test times out on it).
      while (existsSync(`/proc/${checker}`)) await new Promise((resolve) => setTimeout(resolve, 50));
      // A type error is still found by the checker started after the stopped one, the only one.
      const bad = (await client.callTool({ name: "execute_typescript", arguments: { code: 'const s: string = 1;\nprintln(s)' } })).structuredContent as unknown as ToolResult;
      expect(bad.exitCode).toBe(3);
      expect(bad.error).toContain("TS2322");
      expect(checkersOf(serverPid)).toHaveLength(1);
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe("a type checker whose process dies", () => {
  it("is replaced for the next check in tacit serve, which neither fails nor waits for the limit", async () => {
    // Kept after its process died (a crash, the OOM killer), the checker failed the next check
    // and held the one after it (and every call behind it) until the time limit.
    const client = await connectServe(["--quiet", "--exec-timeout-ms", String(LIMIT_MS * 4)], dir);
    try {
      const call = async (code: string) =>
        (await client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 120_000 })).structuredContent as unknown as ToolResult | undefined;
      expect((await call('const n: number = 1;\nprintln("one", n)'))?.stdout).toBe("one 1\n");
      const serverPid = (client.transport as unknown as { pid: number | null }).pid!;
      const checkers = checkersOf(serverPid);
      expect(checkers.length).toBe(1);
      process.kill(checkers[0]!, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The check that finds it dead may fail; the next one gets a new checker.
      await call('const n: number = 2;\nprintln("two", n)').catch(() => undefined);
      // Held by a dead checker, this call would end in check-time-limit at the 8 s limit: no
      // error at all is the evidence that it did not wait for the limit (no clock needed).
      const third = await call('const n: number = 3;\nprintln("three", n)');
      expect(third?.error ?? null, JSON.stringify(third)).toBeNull();
      expect(third?.stdout).toBe("three 3\n");
      const bad = await call('const s: string = 1;\nprintln(s)');
      expect(bad?.error).toContain("TS2322");
    } finally {
      await client.close();
    }
  }, 120_000);
});

/** The type checker processes (tsc) `serverPid` started. */
function checkersOf(serverPid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) === "tsc" && Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === serverPid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("a type checker whose process dies while idle", () => {
  it("is never spoken to again through its pipes, whose numbers a session's sandbox then gets", async () => {
    // The checker's thread spoke to it by raw descriptor numbers (TypeScript's sync channel),
    // which Node closes when the process ends. A SIGKILLed checker's numbers went, lowest free
    // first, to the pipes of the next sandbox the server started; the next check wrote its request
    // into that sandbox and waited on its output: the check ran into the time limit, the session
    // was broken, and the server, reading a sandbox that had died with unread input, crashed on
    // an unhandled ECONNRESET (the client saw "Not connected"), all seen under load.
    const client = await connectServe(["--quiet", "--exec-timeout-ms", String(LIMIT_MS * 4)], dir);
    try {
      const oneShot = (await client.callTool({ name: "execute_typescript", arguments: { code: 'const n: number = 1;\nprintln("one", n)' } })).structuredContent as unknown as ToolResult;
      expect(oneShot.stdout).toBe("one 1\n");
      const serverPid = (client.transport as unknown as { pid: number | null }).pid!;
      const [checker] = checkersOf(serverPid);
      expect(checker).toBeDefined();
      process.kill(checker!, "SIGKILL");
      // Reaped by the checker's thread, which then closed its pipes: their numbers are free.
      while (existsSync(`/proc/${checker}`)) await new Promise((resolve) => setTimeout(resolve, 20));
      // Sessions' sandboxes, whose pipes take the lowest free descriptor numbers.
      const sessions = [await createSession(client), await createSession(client), await createSession(client), await createSession(client)];
      // What the call answered: its result, or the text of the error it ended in.
      const inSession = async (code: string, session = sessions[0]): Promise<Partial<ToolResult>> => {
        const response = await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code } }, undefined, { timeout: 120_000 });
        return (response.structuredContent as unknown as ToolResult | undefined) ?? { error: JSON.stringify(response.content) };
      };
      const first = await inSession('const a: number = 2;\nprintln("two", a)');
      // The check that finds the checker dead may fail, but only as a failed check: never in the session's pipes.
      if (first.stdout !== "two 2\n") expect(first.error ?? "", JSON.stringify(first)).toContain("tacit: the type checker failed");
      const second = await inSession('const b: number = 3;\nprintln("three", b)');
      expect(second.error ?? null, JSON.stringify(second)).toBeNull();
      expect(second.stdout).toBe("three 3\n");
      const bad = await inSession('const s: string = 1;\nprintln(s)');
      expect(bad.error).toContain("TS2322");
      // And every session's sandbox is whole: none was sent the checker's requests.
      for (const session of sessions) expect(await inSession("println(40 + 2)", session), session).toMatchObject({ stdout: "42\n", error: null });
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe("tacit killed with SIGKILL while it type-checks", () => {
  it("tacit run leaves no type checker running", async () => {
    // A fourth review SIGKILLed `tacit run` (as the OOM killer or a supervisor does) during the
    // check of a script written to take minutes: the checker ran on to the end, its time limit
    // gone with the process that held the timer.
    writeFileSync(path.join(dir, "slow-run.ts"), slowToCheck(200));
    const child = spawn(process.execPath, [tacitBin, "run", "--exec-timeout-ms", "600000", "slow-run.ts"], {
      cwd: dir,
      env: { ...process.env, TACIT_TYPECHECK_CACHE: "off" },
      stdio: "ignore",
    });
    await expectToDieWith(child, "tsconfig.json", "type checkers", 500);
  }, 30_000);

  it("tacit serve leaves no type checker running", async () => {
    // The server's incremental checker was started by TypeScript's API, unwrapped: SIGKILLed
    // during the check of a script written to take minutes, the server left its checker
    // running to the end of that check, with the time limit gone with the server's timer.
    const child = spawn(process.execPath, [tacitBin, "serve", "--quiet", "--exec-timeout-ms", "600000"], { cwd: dir, stdio: ["pipe", "pipe", "ignore"] });
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "execute_typescript", arguments: { code: slowToCheck(200) } } });
    await expectToDieWith(child, "--api", "type checkers", 500);
  }, 30_000);
});

/**
 * A script whose check grows the checker by thousands of properties at a time: a mapped type over
 * 9,000 keys (a template literal type), instantiated anew for each copy (`M<0>`, `M<1>`, …), whose
 * members are all made when one of them is read. It passes the limit below for less CPU than
 * mismatched nested types did (whose each error spelled out a long path): a tacit run refused
 * with it took 5.9 s of CPU against 7.6 s, back to back through this CLI at load 8. It grows as
 * far: 1,000 copies took the checker past 1.6 GB, still checking, when a 120 s time limit stopped
 * it (--memory-limit-mb 8000); 50 copies are checked within the limit below.
 */
function growsTheChecker(copies: number): string {
  let source = 'type E = "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9";\ntype D = "0" | E;\ntype K = `${D}${D}${D}${E}`;\ntype M<T> = { [P in K]: [P, T] };\n';
  for (let copy = 0; copy < copies; copy++) source += `const m${copy} = null as unknown as M<${copy}>;\nm${copy}["0001"];\n`;
  return `${source}println("checked");\n`;
}

/** The checker's memory limit with --memory-limit-mb 64: the sandbox's heap limit and its 256 MiB allowance. */
const SMALL_HEAP_MB = 64;
const CHECKER_LIMIT_MB = SMALL_HEAP_MB + 256;

describe("a script whose types grow the checker's memory", () => {
  // No wall-clock bounds: unlimited, the checker grows past 1.6 GB before a time limit of 120 s
  // stops it (check-time-limit): a refusal for check-memory-limit that names the limit is the
  // evidence that the memory limit, and no other, stopped it.
  it("is refused by tacit run once the checker passes its memory limit", async () => {
    writeFileSync(path.join(dir, "grows.ts"), growsTheChecker(1000));
    const r = await runCli(["run", "--memory-limit-mb", String(SMALL_HEAP_MB), "--exec-timeout-ms", "60000", "grows.ts"], {
      cwd: dir,
      env: { TACIT_TYPECHECK_CACHE: "off" },
    });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`check-memory-limit: type-checking took the checker past ${CHECKER_LIMIT_MB} MiB of memory`);
    expect(r.stdout).toBe("");
  }, 120_000);

  it("is refused by tacit serve, whose next checker checks the calls and snippets after it", async () => {
    const client = await connectServe(["--quiet", "--memory-limit-mb", String(SMALL_HEAP_MB), "--exec-timeout-ms", "60000"], dir);
    try {
      const call = async (code: string) =>
        (await client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 120_000 })).structuredContent as unknown as ToolResult;
      expect((await call('const n: number = 1;\nprintln("warm", n)')).stdout).toBe("warm 1\n");
      const refused = await call(growsTheChecker(1000));
      expect(refused.exitCode, refused.error ?? "").toBe(3);
      expect(refused.error).toContain(`check-memory-limit: type-checking took the checker past ${CHECKER_LIMIT_MB} MiB of memory`);
      expect(refused.stdout).toBe("");
      expect((await call('const s: string = 1;\nprintln(s)')).error).toContain("TS2322");
      const session = await createSession(client);
      const snippet = (await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code: "const n: number = 2;\nn * 21" } })).structuredContent as unknown as ToolResult;
      expect(snippet).toMatchObject({ stdout: "42\n", error: null });
    } finally {
      await client.close();
    }
  }, 120_000);
});
