// A run takes the protected paths of tacit's list of its own audit logs (own-audit-logs.json)
// from what it read of that list to remember its own log, or wrote to it (runner/remembered-files.ts,
// remember), instead of reading and parsing the list again: with a log rotated daily the list holds
// 256 of them. Through the real CLI, a real Deno and real files: the scripts of that very run, with
// the list as long as it gets, are still refused every log on it (and each log's lock), whether the
// run added its log to the list or found it there.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runScript, tempDirWithHome } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, makeCanary } from "../files/fixtures.js";

const EARLIER_LOG = "the audit log (--audit-log) of an earlier tacit run on this machine";

describe("a long list of remembered audit logs, in the run that reads or rewrites it", () => {
  let dir: string;
  let home: string;
  let cleanup: () => void;
  let env: Record<string, string>;
  beforeEach(() => {
    ({ dir, home, env, cleanup } = tempDirWithHome("tacit-remembered-long-"));
  });
  afterEach(() => cleanup());

  /** own-audit-logs.json with `count` logs in `dir`, one a day back from yesterday, after `first` if given. */
  function writeList(count: number, first: { path: string; usedAt: string } | null): void {
    const day = 24 * 60 * 60 * 1000;
    const files = Array.from({ length: count }, (_, i) => ({
      path: path.join(dir, `old-${i}.jsonl`),
      kind: "audit-log",
      usedAt: new Date(Date.now() - (i + 1) * day).toISOString(),
    }));
    const all = first === null ? files : [{ ...first, kind: "audit-log" }, ...files];
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(path.join(home, "own-audit-logs.json"), JSON.stringify({ version: 1, files: all }, null, 2) + "\n", { mode: 0o600 });
  }

  const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read first", () => fs.access("old-0.jsonl").read());
  attempt("read last", () => fs.access("old-254.jsonl").read());
  attempt("append", () => fs.access("old-100.jsonl").append("forged\\n"));
  attempt("lock", () => fs.access("old-7.jsonl.lock").write("999999999\\n"));
});
`;

  function expectRefused(stdout: string): void {
    const found = attempts(stdout);
    for (const label of ["read first", "read last", "append", "lock"]) expect(attemptOf(found, label).status, label).toBe("SecurityError");
    expect(String(attemptOf(found, "read first").value)).toContain(EARLIER_LOG);
    expect(String(attemptOf(found, "read last").value)).toContain(EARLIER_LOG);
    expect(String(attemptOf(found, "lock").value)).toContain(`the lock of ${EARLIER_LOG}`);
  }

  it("a run that adds its log to 255 others refuses its own script each of them, and keeps 256", async () => {
    const canary = makeCanary();
    for (const i of [0, 100, 254]) writeFileSync(path.join(dir, `old-${i}.jsonl`), `${canary}\n`);
    writeList(255, null);
    const log = path.join(dir, "new.jsonl");

    const run = await runScript(script, ["--audit-log", "new.jsonl"], { cwd: dir, env });
    expect(run.code, run.stderr).toBe(0);
    expectRefused(run.stdout);
    expect(run.stdout).not.toContain(canary);
    expect(readFileSync(path.join(dir, "old-100.jsonl"), "utf8")).toBe(`${canary}\n`);

    // Written: this run's log first, then the 255 (all their directories are there).
    const list = JSON.parse(readFileSync(path.join(home, "own-audit-logs.json"), "utf8")) as { files: Array<{ path: string }> };
    expect(list.files.length).toBe(256);
    expect(list.files[0]!.path).toBe(log);
    expect(list.files.at(-1)!.path).toBe(path.join(dir, "old-254.jsonl"));
  });

  it("a run that finds its log on the list (used today) leaves the list as it was and refuses its script every log on it", async () => {
    const canary = makeCanary();
    for (const i of [0, 100, 254]) writeFileSync(path.join(dir, `old-${i}.jsonl`), `${canary}\n`);
    const log = path.join(dir, "today.jsonl");
    writeList(255, { path: log, usedAt: new Date().toISOString() });
    const before = readFileSync(path.join(home, "own-audit-logs.json"), "utf8");

    const run = await runScript(script, ["--audit-log", "today.jsonl"], { cwd: dir, env });
    expect(run.code, run.stderr).toBe(0);
    expectRefused(run.stdout);
    expect(run.stdout).not.toContain(canary);
    expect(readFileSync(path.join(dir, "old-100.jsonl"), "utf8")).toBe(`${canary}\n`);
    expect(readFileSync(path.join(home, "own-audit-logs.json"), "utf8")).toBe(before);
  });
});
