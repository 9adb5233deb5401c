// `tacit audit verify` on a log a tacit run is writing at that moment: its last lines are not
// signed yet, and verify says so, naming the process, rather than blaming a crash or someone
// who appended lines (which sent a person looking for an attack on a running log). The lines
// are still reported: no head vouches for them yet. Once the run has ended, the log verifies.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { childEnv, fileOnce, runCli, tacitBin } from "../helpers.js";
import type { VerifyReport } from "../../runner/audit/verify.js";
import { auditHome, verifyJson, workAndLog } from "./fixtures.js";

let ctx: ReturnType<typeof auditHome>;
beforeAll(() => {
  ctx = auditHome();
});
afterAll(() => ctx.cleanup());

it("a log verified while its run is under way: its unsigned lines are said to be the running writer's, by pid; after the run it verifies", async () => {
  const { work, log } = workAndLog(ctx.dir);
  writeFileSync(path.join(work, "notes.txt"), "notes\n");
  // A command every fifth of a second, until stopped: lines keep coming, and the writer signs
  // them every few seconds, so the log nearly always ends in lines no head signs yet.
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
  await fileOnce(log, (text) => text.includes('"kind":"Exec"'));

  const unsignedYet = new RegExp(
    `^(none of the \\d+ lines is|\\d+ lines? after the last signed head at line \\d+ (is|are)) signed yet: tacit process ${run.pid} is ` +
      `writing this log now \\(it holds the log's writer lock in tacit's home\\), and signs them at its next head or when it ends; ` +
      `verify the log again after that$`,
  );
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
