// A writer killed before it signed its first head leaves a log with lines and no record of a head
// in tacit's home (a record is made at each head). The next writer continues it, and says on
// stderr why there is no record; it said only "the record was deleted (by hand, or by a clean-up
// of tacit's home)", which sent the operator looking for whoever deleted it, while the writer it
// took over from (its lock left behind) had simply crashed. Through the real CLI, after a real
// SIGKILL of a writer.

import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { auditHome, crashWhileWriting, readLines, verifyJson, workAndLog } from "./fixtures.js";

describe("a log whose first writer was killed before it signed a head", () => {
  it("is continued by the next run, which says the crash may be why there is no record, and then verifies", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      crashWhileWriting(log, ctx.keyFile, "eval-1");
      expect(readLines(log).some((line) => line.event.type === "head")).toBe(false);
      const run = await runCli(unchecked(["run", "--audit-log", log, "-"]), { cwd: work, env: ctx.env, input: 'requestFileSystem(".", (fs) => fs.access("next.txt").write("x"));\n' });
      expect(run.code, run.stderr).toBe(0);
      expect(existsSync(path.join(work, "next.txt"))).toBe(true);
      expect(run.stderr).toContain(`tacit: the audit log ${log} has lines, but this machine has no record of the last head signed in it`);
      expect(run.stderr).toContain(
        "the tacit that wrote it last stopped without closing it (it left its lock: a crash, or SIGKILL), and if it signed no head before that, it made no record; or the record was deleted",
      );
      const { result, report } = await verifyJson(log, ctx.env);
      expect(result.code, result.stdout).toBe(0);
      expect(report.warnings).toEqual([{ line: expect.any(Number), reason: expect.stringMatching(/were not signed by the process that wrote them/) }]);
    } finally {
      ctx.cleanup();
    }
  }, 30_000);
});
