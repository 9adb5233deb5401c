// tacit's own files named only on an earlier run's command line: the --config file (what
// scripts may do) and the --secure-output file (plaintext). A security review's script, in a
// `tacit run` started without --config in the same project, rewrote tacit.json to permit
// `touch`, and the person's next `tacit run --config tacit.json` ran it; a script could read an
// earlier run's sink the same way. tacit now remembers each run's files in its home
// (runner/remembered-files.ts) and refuses them to the scripts of every later run. Through the
// real CLI, a real Deno and real files, each run with a tacit home of the test's own.

import { existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../runner/audit/digest.js";
import { chainOf, eventHashOfJson, lineText } from "../../runner/audit/line.js";
import { runCli, runScript, tempDirWithHome, tempDirWithTwoHomes } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, makeCanary, realTempDir } from "../files/fixtures.js";

describe("files an earlier run was given on its command line", () => {
  let dir: string;
  let home: string;
  let cleanup: () => void;
  let env: Record<string, string>;
  beforeEach(() => {
    ({ dir, home, env, cleanup } = tempDirWithHome("tacit-remembered-"));
  });
  afterEach(() => cleanup());

  it("the config file: a script of a run without --config cannot widen the policy the next --config run takes from it", async () => {
    const config = path.join(dir, "tacit.json");
    const policy = JSON.stringify({ libraryConfig: { networkPermissions: ["127.0.0.1:1"] } });
    writeFileSync(config, policy);
    writeFileSync(path.join(dir, "task.ts"), 'requestExecPermission(["touch"], (proc) => proc.exec("touch", ["PWNED"]));\n');
    const first = await runCli(["run", "--config", "tacit.json", "task.ts"], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toContain("no command may run");
    // The file is remembered owner-only in tacit's home.
    expect(statSync(path.join(home, "own-files.json")).mode & 0o777).toBe(0o600);

    // A run started without --config, the default root being the project.
    const widen = JSON.stringify({ libraryConfig: { commandPermissions: ["touch"] } });
    const agent = await runScript(
      `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("rewrite", () => fs.access("tacit.json").write(${lit(widen)}));
  attempt("delete", () => fs.access("tacit.json").delete());
  attempt("read", () => fs.access("tacit.json").read());
});
`,
      [],
      { cwd: dir, env },
    );
    expect(agent.code, agent.stderr).toBe(0);
    const found = attempts(agent.stdout);
    for (const label of ["rewrite", "delete", "read"]) {
      expect(attemptOf(found, label).status, label).toBe("SecurityError");
      expect(String(attemptOf(found, label).value), label).toContain("tacit's config file (--config), given to an earlier tacit run on this machine");
    }
    expect(readFileSync(config, "utf8")).toBe(policy);

    const again = await runCli(["run", "--config", "tacit.json", "task.ts"], { cwd: dir, env });
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toContain("no command may run");
    expect(existsSync(path.join(dir, "PWNED"))).toBe(false);
  });

  it("the secure output file: a script of a run without --secure-output cannot read the plaintext an earlier run wrote there", async () => {
    const canary = makeCanary();
    const first = await runScript(`println(classify(${lit(canary)}));`, ["--secure-output", "secure.log"], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(path.join(dir, "secure.log"), "utf8")).toContain(canary);

    const agent = await runScript(
      `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("secure.log").read());
  attempt("search", () => fs.grepRecursive(".", ${lit(canary.slice(0, 16))}));
});
`,
      [],
      { cwd: dir, env },
    );
    expect(agent.code, agent.stderr).toBe(0);
    expect(agent.stdout + agent.stderr).not.toContain(canary);
    const found = attempts(agent.stdout);
    expect(attemptOf(found, "read").status).toBe("SecurityError");
    expect(String(attemptOf(found, "read").value)).toContain("the secure output file (--secure-output, which holds plaintext) of an earlier tacit run");
    expect(attemptOf(found, "search")).toEqual({ status: "ok", value: [] });
  });

  it("the audit log: a script of a run without --audit-log cannot append a forged line and a stale lock that the next writer signs", async () => {
    // Not remembered before: a script with nothing but requestFileSystem(".") appended a line
    // chained from the last head (no key is needed for that) and wrote audit.jsonl.lock with a dead
    // pid; the next `tacit run --audit-log` took the lock as a crashed writer's, signed the forged
    // line as that writer's unsigned tail, and `tacit audit verify` called the log verified.
    const log = path.join(dir, "audit.jsonl");
    const first = await runScript('println("logged");', ["--audit-log", "audit.jsonl"], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    const before = readFileSync(log, "utf8");
    const last = JSON.parse(before.trimEnd().split("\n").at(-1)!) as { seq: number; chain: string };
    const seq = last.seq + 1;
    const time = new Date().toISOString();
    const eventJson = canonicalJson({ type: "evaluation-started", evaluation: "FORGED", session: null, displayName: "someone-else.ts", codeDigest: `sha256:${"0".repeat(64)}`, policyDigest: `sha256:${"0".repeat(64)}` });
    const hash = eventHashOfJson(seq, time, eventJson);
    const forged = lineText(seq, time, eventJson, last.chain, hash, chainOf(last.chain, hash));
    const agent = await runScript(
      `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("audit.jsonl").read());
  attempt("append", () => fs.access("audit.jsonl").append(${lit(`${forged}
`)}));
  attempt("lock", () => fs.access("audit.jsonl.lock").write("999999999\\n"));
});
`,
      [],
      { cwd: dir, env },
    );
    expect(agent.code, agent.stderr).toBe(0);
    const found = attempts(agent.stdout);
    for (const label of ["read", "append", "lock"]) expect(attemptOf(found, label).status, label).toBe("SecurityError");
    expect(String(attemptOf(found, "read").value)).toContain("the audit log (--audit-log) of an earlier tacit run on this machine");
    expect(String(attemptOf(found, "lock").value)).toContain("the lock of the audit log (--audit-log) of an earlier tacit run on this machine");
    expect(readFileSync(log, "utf8")).toBe(before);
    expect(existsSync(`${log}.lock`)).toBe(false);
    // Kept in a list of its own: a tacit that knows no audit logs among its own files still reads own-files.json.
    expect(readFileSync(path.join(home, "own-audit-logs.json"), "utf8")).toContain(log);
    expect(existsSync(path.join(home, "own-files.json"))).toBe(false);

    const next = await runScript('println("again");', ["--audit-log", "audit.jsonl"], { cwd: dir, env });
    expect(next.code, next.stderr).toBe(0);
    const verify = await runCli(["audit", "verify", log], { cwd: dir, env });
    expect(verify.code, verify.stdout).toBe(0);
    expect(readFileSync(log, "utf8")).not.toContain("FORGED");
  });
});

describe("the record directory an earlier run made, deleted since", () => {
  let dir: string;
  let home: string;
  let cleanup: () => void;
  let env: Record<string, string>;
  let elsewhere: Record<string, string>;
  beforeEach(() => {
    ({ dir, home, env, elsewhere, cleanup } = tempDirWithTwoHomes("tacit-remembered-record-"));
  });
  afterEach(() => cleanup());

  it("is not continued when a script of another run made it again with a record of its own; removed, tacit makes it anew", async () => {
    // Once deleted, nothing of tacit's is there: a script of a run with another tacit home (or a
    // confined command, test/exec/confinement.test.ts) made rec/ again with a tacit-record.jsonl
    // holding a run that never happened, and the next `tacit run --record rec` appended after it.
    const rec = path.join(dir, "rec");
    const first = await runScript('println("first");', ["--record", "rec"], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    rmSync(rec, { recursive: true });
    const forged = JSON.stringify({ at: "2026-01-01T00:00:00.000Z", kind: "run", code: "// forged", outcome: "ok", exitCode: 0, stdout: "", error: null, durationMs: 1, truncated: false });
    const plant = await runScript(
      `requestFileSystem(".", (fs) => { fs.access("rec").mkdir(); fs.access("rec/tacit-record.jsonl").write(${lit(`${forged}\n`)}); });`,
      [],
      { cwd: dir, env: elsewhere },
    );
    expect(plant.code, plant.stderr).toBe(0);

    const next = await runScript('println("next");', ["--record", "rec"], { cwd: dir, env });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(`tacit: --record: the record directory ${rec} is not the one tacit made there`);
    expect(next.stderr).toContain("nothing was recorded");
    expect(next.stderr).toContain(`delete ${path.join(home, "record-dirs")}`);
    expect(readFileSync(path.join(rec, "tacit-record.jsonl"), "utf8")).toBe(`${forged}\n`);

    rmSync(rec, { recursive: true });
    const anew = await runScript('println("anew");', ["--record", "rec"], { cwd: dir, env });
    expect(anew.code, anew.stderr).toBe(0);
    expect(anew.stderr).not.toContain("--record:");
    expect(statSync(rec).mode & 0o777).toBe(0o700);
    const lines = readFileSync(path.join(rec, "tacit-record.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((line) => (JSON.parse(line) as { code: string }).code)).toEqual(['println("anew");']);
  });

  it("is not followed when a link was put in its place", async () => {
    const rec = path.join(dir, "rec");
    const outside = realTempDir("tacit-record-outside-");
    try {
      const first = await runScript('println("first");', ["--record", "rec"], { cwd: dir, env });
      expect(first.code, first.stderr).toBe(0);
      rmSync(rec, { recursive: true });
      symlinkSync(outside.dir, rec);
      const next = await runScript('println("next");', ["--record", "rec"], { cwd: dir, env });
      expect(next.code, next.stderr).toBe(0);
      expect(next.stderr).toContain(`tacit: --record: the record directory ${rec} is a symbolic link, which tacit does not follow`);
      expect(readdirSync(outside.dir)).toEqual([]);
    } finally {
      outside.cleanup();
    }
  });
});
