// One writer per log file, whatever its name. The writer's lock is keyed by the log's real path,
// which a hard link does not share: a second tacit given another name of the file a first one
// writes took it for a log someone else had appended to (and said so, sending its operator after a
// forger), or, between two evaluations of the first, wrote its own run into it, and the first then
// failed closed at its next action. Now the second is refused as it opens the file, naming the
// first, and the first goes on; and `tacit audit verify` of the other name, while the first writes,
// says its unsigned lines are that writer's, as it does for the log's own name (before: a crash or
// someone who appended lines). Through a real `tacit serve` and real `tacit run`s.

import { spawn } from "node:child_process";
import { existsSync, linkSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { writerLockFor } from "../../runner/audit/log.js";
import { childEnv, connectServe, fileOnce, runCli, tacitBin, unchecked } from "../helpers.js";
import { auditHome, readLines, verifyJson, workAndLog } from "./fixtures.js";

/** A project directory and an empty audit log in `dir`, with a second name for the log (a hard link, `other`). */
function logUnderTwoNames(dir: string): { work: string; log: string; other: string } {
  const { work, log } = workAndLog(dir);
  const other = path.join(dir, "other-name.jsonl");
  writeFileSync(log, "", { mode: 0o600 });
  linkSync(log, other);
  return { work, log, other };
}

describe.concurrent("another name (a hard link) of the log a tacit writes", () => {
  it("given to a second tacit while a tacit serve writes it: refused, naming the writer, and runs nothing; the serve goes on, and its log verifies", async () => {
    const ctx = auditHome();
    try {
      const { work, log, other } = logUnderTwoNames(ctx.dir);
      const serving = await connectServe(["--no-check", "--audit-log", log], work, { env: ctx.env });
      let servingPid: number;
      try {
        const one = await serving.callTool({ name: "execute_typescript", arguments: { code: 'println("first")' } });
        expect(one.isError).toBeFalsy();
        servingPid = Number(readFileSync(writerLockFor(ctx.keyFile, log), "utf8"));
        const run = await runCli(unchecked(["run", "--audit-log", other, "-"]), {
          cwd: work,
          env: ctx.env,
          input: 'requestFileSystem(".", (fs) => fs.access("marker.txt").write("ran"));\n',
        });
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(`the audit log ${other} is a file process ${servingPid} is writing under another name (a hard link to the same file;`);
        expect(existsSync(path.join(work, "marker.txt"))).toBe(false);
        // The serve's next call is carried out and logged as usual.
        const two = await serving.callTool({ name: "execute_typescript", arguments: { code: 'requestFileSystem(".", (fs) => fs.access("second.txt").write("v"));\nprintln("second");\n' } });
        expect(two.isError).toBeFalsy();
        expect(existsSync(path.join(work, "second.txt"))).toBe(true);
      } finally {
        await serving.close();
      }
      expect(readLines(log).filter((line) => line.event.type === "evaluation-started")).toHaveLength(2);
      const { result } = await verifyJson(log, ctx.env);
      expect(result.code, result.stdout).toBe(0);
    } finally {
      ctx.cleanup();
    }
  }, 60_000);

  it("verified by that name while the writer writes: its unsigned lines are said to be the writer's, by pid", async () => {
    const ctx = auditHome();
    try {
      const { work, log, other } = logUnderTwoNames(ctx.dir);
      // A run that keeps writing lines (a command every fifth of a second) until stopped.
      const run = spawn(process.execPath, [tacitBin, "run", "--audit-log", log, "--command-permissions", "sleep", "-"], { cwd: work, env: childEnv(ctx.env), stdio: ["pipe", "ignore", "ignore"] });
      onTestFinished(() => {
        if (run.exitCode === null && run.signalCode === null) run.kill("SIGKILL");
      });
      const ended = new Promise<number | null>((resolve) => run.on("close", resolve));
      run.stdin.end('requestExecPermission(["sleep"], (p) => { for (;;) p.exec("sleep", ["0.2"]); });\n');
      await fileOnce(log, (text) => text.includes('"kind":"Exec"'));
      const { report } = await verifyJson(other, ctx.env);
      expect(report.liveWriter).toBe(run.pid);
      run.kill("SIGTERM");
      expect(await ended).toBe(143);
      const after = await verifyJson(other, ctx.env);
      expect(after.report.liveWriter).toBeNull();
    } finally {
      ctx.cleanup();
    }
  }, 60_000);
});
