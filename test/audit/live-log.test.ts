// `tacit audit verify` on a log a tacit run is writing at that moment: its last lines are not
// signed yet, and verify says so, naming the process, rather than blaming a crash or someone
// who appended lines (which sent a person looking for an attack on a running log). The lines
// are still reported: no head vouches for them yet. Once the run has ended, the log verifies.

import { spawn } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { childEnv, fileOnce, runCli, tacitBin } from "../helpers.js";
import type { VerifyReport } from "../../runner/audit/verify.js";
import { auditHome, verifyJson, workAndLog } from "./fixtures.js";

/**
 * What verify says of a live log's unsigned lines, the writer being `pid`; `beingWritten`: the
 * last line, which the file ended in the middle of (the writer's write reaches the file a page at
 * a time, so a reading can end inside it), or, if not given, any such line or none.
 */
function unsignedYetSaid(pid: number, beingWritten?: number): RegExp {
  const line = beingWritten === undefined ? "\\d+" : String(beingWritten);
  const partly = `; line ${line} was still being written when it was read \\(the file ended in the middle of it\\), so it was not checked`;
  return new RegExp(
    `^(none of the \\d+ lines? is|\\d+ lines? after the last signed head at line \\d+ (is|are)) signed yet: tacit process ${pid} is ` +
      `writing this log now \\(it holds the log's writer lock in tacit's home\\), and signs them at its next head or when it ends; ` +
      `verify the log again after that${beingWritten === undefined ? `(${partly})?` : partly}$`,
  );
}

/** `tacit run --audit-log` of a script that runs a command every fifth of a second until stopped: lines keep coming. */
function liveRun(work: string, log: string) {
  writeFileSync(path.join(work, "notes.txt"), "notes\n");
  const script = `
requestFileSystem(".", (fs) => println(fs.access("notes.txt").read().trim()));
requestExecPermission(["sleep"], (p) => { for (;;) p.exec("sleep", ["0.2"]); });
`;
  const run = spawn(process.execPath, [tacitBin, "run", "--audit-log", log, "--command-permissions", "sleep", "-"], {
    cwd: work,
    env: childEnv(ctx.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  onTestFinished(() => {
    if (run.exitCode === null && run.signalCode === null) run.kill("SIGKILL");
  });
  const ended = new Promise<number | null>((resolve) => run.on("close", resolve));
  run.stdout.resume();
  run.stderr.resume();
  run.stdin.end(script);
  return { run, ended };
}

/** Resolves once process `pid` is stopped (state T in /proc), as SIGSTOP leaves it. */
async function stoppedNow(pid: number): Promise<void> {
  for (;;) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (/^\d+ \(.*\) T /s.test(stat)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let ctx: ReturnType<typeof auditHome>;
beforeAll(() => {
  ctx = auditHome();
});
afterAll(() => ctx.cleanup());

it("a log verified while its run is under way: its unsigned lines are said to be the running writer's, by pid; after the run it verifies", async () => {
  const { work, log } = workAndLog(ctx.dir);
  // The writer signs the lines every few seconds, so the log nearly always ends in lines no head signs yet.
  const { run, ended } = liveRun(work, log);
  await fileOnce(log, (text) => text.includes('"kind":"Exec"'));

  const unsignedYet = unsignedYetSaid(run.pid!);
  // Read at the instant a head was written, the log has no unsigned line: read again.
  let report: VerifyReport | null = null;
  for (let attempt = 0; attempt < 10 && (report === null || report.problems.length === 0); attempt++) report = (await verifyJson(log, ctx.env)).report;
  expect(report!.liveWriter).toBe(run.pid);
  expect(report!.problems).toEqual([{ line: expect.any(Number), reason: expect.stringMatching(unsignedYet) }]);
  let text = "";
  for (let attempt = 0; attempt < 10 && !text.includes("next:"); attempt++) text = (await runCli(["audit", "verify", log], { env: ctx.env })).stdout;
  expect(text).toContain(`  next: tacit process ${run.pid} is writing this log now: verify it again once that process has ended.`);

  // Stopped, the run ends its command, signs what it wrote, and the log verifies.
  run.kill("SIGTERM");
  expect(await ended).toBe(143);
  const after = await verifyJson(log, ctx.env);
  expect(after.report.problems).toEqual([]);
  expect(after.report.liveWriter).toBeNull();
  expect(after.result.code).toBe(0);
});

it("a live log whose writer is stopped in the middle of a line: that line is said to be the writer's, being written, not a crash; once the writer is gone, it is a cut", async () => {
  const { work, log } = workAndLog(ctx.dir, "stopped");
  const { run, ended } = liveRun(work, log);
  await fileOnce(log, (text) => text.includes('"kind":"Exec"'));
  // Stopped where a write had put only part of a line in the file (a write of several pages
  // reaches the file a page at a time): the first half of its last line stands for it.
  run.kill("SIGSTOP");
  await stoppedNow(run.pid!);
  const whole = readFileSync(log, "utf8");
  const lastLine = whole.slice(whole.lastIndexOf("\n", whole.length - 2) + 1, -1);
  appendFileSync(log, lastLine.slice(0, Math.floor(lastLine.length / 2)));
  const partLine = whole.split("\n").length;

  const { result, report } = await verifyJson(log, ctx.env);
  expect(result.code).toBe(1);
  expect(report.liveWriter).toBe(run.pid);
  expect(report.lines).toBe(partLine);
  expect(report.problems).toEqual([{ line: expect.any(Number), reason: expect.stringMatching(unsignedYetSaid(run.pid!, partLine)) }]);
  const text = (await runCli(["audit", "verify", log], { env: ctx.env })).stdout;
  expect(text).not.toMatch(/crash|truncated|incomplete/);
  expect(text).toContain(`  next: tacit process ${run.pid} is writing this log now`);
  expect(report.lineBeingWritten).toBe(partLine);
  // show says the same of it under the lines, rather than "unreadable".
  const shown = await runCli(["audit", "show", log], { env: ctx.env });
  expect(shown.code).toBe(1);
  const rows = shown.stdout.trimEnd().split("\n");
  expect(rows.at(-1)).toMatch(
    new RegExp(`^UNVERIFIED +\\.+  line ${partLine} is not shown: it was still being written by tacit process ${run.pid} when the log was checked \\(the file ended in the middle of it\\)$`),
  );
  expect(shown.stdout).not.toContain("unreadable");

  // The writer gone (killed where it stood), the same bytes are a log cut in the middle of a line.
  run.kill("SIGKILL");
  expect(await ended).toBeNull();
  const after = await verifyJson(log, ctx.env);
  expect(after.report.liveWriter).toBeNull();
  expect(after.report.lineBeingWritten).toBeNull();
  expect(after.report.problems).toContainEqual({
    line: partLine,
    reason: expect.stringMatching(/^incomplete last line \(.*\): the file ends in the middle of a line — a write cut off by a crash, or the file was truncated$/),
  });
});
