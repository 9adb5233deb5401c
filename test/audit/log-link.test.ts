// A link at the audit log's path (runner/audit/log.ts, AuditLog.open). One that led nowhere had
// tacit create its target, wherever it was, and append the log's lines there: they quote what a
// script asked for, so a command argument like `$(…)` landed in a file of the link's maker's
// choosing (a ~/.bash_aliases that a shell runs). A link that leads to a log tacit may write
// still works: an operator may keep the log elsewhere and link it.

import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { auditHome, readLines, verifyJson } from "./fixtures.js";

const SCRIPT = 'requestExecPermission(["echo"], (proc) => println(proc.exec("echo", ["$(touch planted-ran)"]).stdout));\n';

describe("the audit log's path as a link", () => {
  let ctx: ReturnType<typeof auditHome>;
  let work: string;
  beforeEach(() => {
    ctx = auditHome();
    work = path.join(ctx.dir, "work");
    mkdirSync(work);
  });
  afterEach(() => ctx.cleanup());

  it("that leads to no file: refused before the script runs, the link's target not made", async () => {
    // What another program left: a link where the log will be, to a file a shell would run.
    const target = path.join(ctx.dir, "victim", ".bash_aliases");
    mkdirSync(path.dirname(target));
    const log = path.join(ctx.dir, "audit.jsonl");
    symlinkSync(target, log);
    const run = await runCli(unchecked(["run", "--command-permissions", "echo", "--audit-log", log, "-"]), { cwd: work, env: ctx.env, input: SCRIPT });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `tacit: the audit log ${log} is a link to ${target}, which does not exist; tacit does not create its log through a link`,
    );
    expect(run.stderr).toContain("Give --audit-log the path of the file itself, or create the file the link leads to first.");
    expect(existsSync(target), "the link's target was made").toBe(false);
    expect(run.stdout, "the script ran").toBe("");
  });

  it("that leads to a log: written there, and it verifies", async () => {
    const real = path.join(ctx.dir, "elsewhere", "audit.jsonl");
    mkdirSync(path.dirname(real));
    writeFileSync(real, "", { mode: 0o600 });
    const log = path.join(ctx.dir, "audit.jsonl");
    symlinkSync(real, log);
    const run = await runCli(unchecked(["run", "--command-permissions", "echo", "--audit-log", log, "-"]), { cwd: work, env: ctx.env, input: SCRIPT });
    expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({ code: 0, stdout: "$(touch planted-ran)\n\n" });
    const exec = readLines(real).find((line) => line.event.type === "action-requested" && line.event.kind === "Exec");
    expect(exec, readFileSync(real, "utf8")).toBeDefined();
    expect((await verifyJson(real, ctx.env)).report.ok).toBe(true);
  });
});
