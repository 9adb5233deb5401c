// One writer per log file, whatever its name. The writer's lock is keyed by the log's real path,
// which a hard link does not share: a second tacit given another name of the file a first one
// writes took it for a log someone else had appended to (and said so, sending its operator after a
// forger), or, between two evaluations of the first, wrote its own run into it, and the first then
// failed closed at its next action. Now the second is refused as it opens the file, naming the
// first, and the first goes on. Through a real `tacit serve` and a real `tacit run`.

import { existsSync, linkSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { writerLockFor } from "../../runner/audit/log.js";
import { connectServe, runCli, unchecked } from "../helpers.js";
import { auditHome, readLines, verifyJson, workAndLog } from "./fixtures.js";

describe("a second tacit given another name (a hard link) of the log a tacit serve writes", () => {
  it("is refused, naming the writer, and runs nothing; the serve goes on writing its log, which verifies", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      const other = path.join(ctx.dir, "other-name.jsonl");
      writeFileSync(log, "", { mode: 0o600 });
      linkSync(log, other);
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
});
