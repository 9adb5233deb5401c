// The audit log writer's lock: one writer per log, across processes, kept in tacit's home. It lay
// beside the log (FILE.lock), where it is missing whenever no tacit writes the log, so a script of
// another run (or a confined command, test/exec/confinement.test.ts) could plant one: with a live
// pid (1) every later writer refused to start; with a dead pid beside a log it wrote itself, the
// next writer took its forged lines for a crashed writer's unsigned tail and signed them. Through
// the real CLI, a real Deno and real `tacit serve` processes.

import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../runner/audit/digest.js";
import { chainOf, eventHashOfJson, lineText, ZERO_CHAIN } from "../../runner/audit/line.js";
import { writerLockFor } from "../../runner/audit/log.js";
import { connectServe, runCli, runScript, tempDirWithTwoHomes, unchecked } from "../helpers.js";
import { readLines, verifyJson } from "./fixtures.js";

describe("the audit log writer's lock", () => {
  let dir: string;
  let home: string;
  let env: Record<string, string>;
  /** A run with a tacit home of its own (another machine, a container, another TACIT_HOME): this home's logs are ordinary files to it. */
  let elsewhere: Record<string, string>;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, home, env, elsewhere, cleanup } = tempDirWithTwoHomes("tacit-writer-lock-"));
  });
  afterEach(() => cleanup());

  it("is not kept off its log by a lock a script of another run planted beside it with a live pid", async () => {
    const log = path.join(dir, "audit.jsonl");
    const first = await runScript('println("first");', ["--audit-log", "audit.jsonl"], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    // pid 1 is always alive: beside the log, this made every later writer refuse to start.
    const plant = await runScript('requestFileSystem(".", (fs) => fs.access("audit.jsonl.lock").write("1\\n"));', [], { cwd: dir, env: elsewhere });
    expect(plant.code, plant.stderr).toBe(0);
    expect(readFileSync(`${log}.lock`, "utf8")).toBe("1\n");

    const next = await runScript('requestFileSystem(".", (fs) => fs.access("marker.txt").write("ran"));', ["--audit-log", "audit.jsonl"], { cwd: dir, env });
    expect(next.stderr).not.toContain("is being written by process 1");
    expect(next.code, next.stderr).toBe(0);
    expect(readFileSync(path.join(dir, "marker.txt"), "utf8")).toBe("ran");
    const { result, report } = await verifyJson(log, env);
    expect(result.code, result.stdout).toBe(0);
    expect(report.warnings).toEqual([]);
  });

  it("is not taken for a crashed writer's from a dead pid planted beside a log of forged lines: the writer refuses them, unsigned", async () => {
    // A log this home never wrote (named, say, in an MCP client's settings, not made yet), made by
    // a script of a run with another home: one line chained from the start (no key is needed for
    // that), and FILE.lock with a pid no process has. Before, the writer marked the line as a
    // crashed writer's unsigned tail, ran the script and signed the line, and `tacit audit verify`
    // passed the log with a warning.
    const log = path.join(dir, "audit.jsonl");
    const time = new Date().toISOString();
    const eventJson = canonicalJson({ type: "evaluation-started", evaluation: "FORGED", session: null, displayName: "never-ran.ts", codeDigest: `sha256:${"0".repeat(64)}`, policyDigest: `sha256:${"0".repeat(64)}` });
    const hash = eventHashOfJson(1, time, eventJson);
    const forged = lineText(1, time, eventJson, ZERO_CHAIN, hash, chainOf(ZERO_CHAIN, hash));
    const plant = await runScript(
      `requestFileSystem(".", (fs) => {
  fs.access("audit.jsonl").write(${JSON.stringify(`${forged}\n`)});
  fs.access("audit.jsonl.lock").write("999999999\\n");
});`,
      [],
      { cwd: dir, env: elsewhere },
    );
    expect(plant.code, plant.stderr).toBe(0);
    const planted = readFileSync(log, "utf8");

    const next = await runScript('requestFileSystem(".", (fs) => fs.access("marker.txt").write("ran"));', ["--audit-log", "audit.jsonl"], { cwd: dir, env });
    expect(next.code, next.stderr).toBe(2);
    expect(next.stderr).toContain("ends in lines no signed head covers (its last line, seq 1, is not a head), but no tacit stopped while writing it");
    expect(next.stderr).toContain(`a writer that crashes leaves its lock ${writerLockFor(path.join(home, "audit-key.json"), log)} (in tacit's home) behind`);
    expect(next.stderr).toContain("give tacit a new audit log file");
    expect(existsSync(path.join(dir, "marker.txt"))).toBe(false);
    expect(readFileSync(log, "utf8")).toBe(planted);
    const verify = await runCli(["audit", "verify", log], { cwd: dir, env });
    expect(verify.code, verify.stdout).toBe(1);
  });

  it("refuses the actions of a tacit with another home once the log it opened has lines it did not write, and leaves the other's chain whole", async () => {
    // Each home's lock is its own: two tacit serve with two homes opened one empty log, and each
    // wrote a chain of its own into it (verify: "seq 1 repeated"), every call answered as usual.
    const log = path.join(dir, "audit.jsonl");
    writeFileSync(log, "", { mode: 0o600 });
    const first = await connectServe(["--no-check", "--audit-log", log], dir, { env });
    try {
      let secondStderr = "";
      const second = await connectServe(["--no-check", "--audit-log", log], dir, { env: elsewhere, onStderr: (text) => (secondStderr += text) });
      try {
        const one = await first.callTool({ name: "execute_typescript", arguments: { code: 'requestFileSystem(".", (fs) => fs.access("first.txt").write("1"));' } });
        expect(one.isError, JSON.stringify(one)).toBeFalsy();
        const size = statSync(log).size;
        expect(size).toBeGreaterThan(0);

        const two = await second.callTool({ name: "execute_typescript", arguments: { code: 'requestFileSystem(".", (fs) => fs.access("second.txt").write("2"));' } });
        const text = JSON.stringify(two.content);
        expect(two.isError).toBe(true);
        // The agent is told the log failed and to tell the operator (test/mcp/audit-log-failure.test.ts), not the log's path;
        // the operator is told what happened, on the server's stderr.
        expect(text).toContain("tacit could not write its audit log");
        expect(text).not.toContain(log);
        expect(secondStderr).toContain(`the audit log ${log} grew by ${size} bytes that this tacit did not write while this tacit was writing it`);
        expect(secondStderr).toContain("such as a tacit with another tacit home (TACIT_HOME)");
        expect(secondStderr).toContain("give each tacit home an audit log file of its own");
        expect(existsSync(path.join(dir, "second.txt"))).toBe(false);
        // It wrote nothing: the log is the first server's alone.
        expect(statSync(log).size).toBe(size);

        const again = await second.callTool({ name: "execute_typescript", arguments: { code: 'println("anything")' } });
        expect(again.isError).toBe(true);
        expect(JSON.stringify(again.content)).toContain("tacit could not write its audit log");
        expect(statSync(log).size).toBe(size);

        const three = await first.callTool({ name: "execute_typescript", arguments: { code: 'requestFileSystem(".", (fs) => fs.access("third.txt").write("3"));' } });
        expect(three.isError, JSON.stringify(three)).toBeFalsy();
        expect(readFileSync(path.join(dir, "third.txt"), "utf8")).toBe("3");
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
    const { result, report } = await verifyJson(log, env);
    expect(result.code, result.stdout).toBe(0);
    expect(report.warnings).toEqual([]);
    expect(readLines(log).filter((line) => line.event.type === "evaluation-started")).toHaveLength(2);
  }, 60_000);

  it("keeps a second tacit serve, and a tacit run, off a log a tacit serve writes, and lets the next writer on once it ends", async () => {
    const log = path.join(dir, "audit.jsonl");
    const lock = writerLockFor(path.join(home, "audit-key.json"), log);
    const serving = await connectServe(["--no-check", "--audit-log", log], dir, { env });
    let servingPid: number;
    try {
      const one = await serving.callTool({ name: "execute_typescript", arguments: { code: 'println("from the first server")' } });
      expect(one.isError).toBeFalsy();
      servingPid = Number(readFileSync(lock, "utf8"));
      expect(servingPid).not.toBe(process.pid);

      const secondServe = await runCli(unchecked(["serve", "--audit-log", log]), { cwd: dir, env, input: "" });
      expect(secondServe.code, secondServe.stderr).toBe(2);
      expect(secondServe.stderr).toContain(`the audit log ${log} is being written by process ${servingPid} (its lock is ${lock}, in tacit's home); two writers would break its chain`);
      const run = await runScript('requestFileSystem(".", (fs) => fs.access("marker.txt").write("ran"));', ["--audit-log", log], { cwd: dir, env });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`is being written by process ${servingPid}`);
      expect(existsSync(path.join(dir, "marker.txt"))).toBe(false);
    } finally {
      await serving.close();
    }
    expect(existsSync(lock)).toBe(false);

    const next = await connectServe(["--no-check", "--audit-log", log], dir, { env });
    try {
      const two = await next.callTool({ name: "execute_typescript", arguments: { code: 'println("from the second server")' } });
      expect(two.isError).toBeFalsy();
    } finally {
      await next.close();
    }
    const started = readLines(log).filter((line) => line.event.type === "evaluation-started");
    expect(started).toHaveLength(2);
    const { result, report } = await verifyJson(log, env);
    expect(result.code, result.stdout).toBe(0);
    expect(report.warnings).toEqual([]);
  }, 60_000);
});
