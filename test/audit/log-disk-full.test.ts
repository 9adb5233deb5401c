// The audit log on a disk that fills up while tacit writes it (a file-size limit, `ulimit -f`,
// which the kernel enforces as it does a full disk: the write that passes it fails with EFBIG, a
// part of it written). tacit fails closed: no action is carried out whose decision did not reach
// the file, the script is ended, and tacit exits 2 saying why; the log, cut in its last line and
// never signed after, is reported so by `tacit audit verify`, and no later run extends it.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, tacitBin, unchecked } from "../helpers.js";
import { auditHome, verifyJson, workAndLog } from "./fixtures.js";

const WRITES = 500;
const SCRIPT = `requestFileSystem(".", (fs) => {
  for (let i = 0; i < ${WRITES}; i++) {
    try { fs.access("f" + i + ".txt").write("x"); } catch (e) { println("caught " + String(e)); }
  }
  println("after the loop");
});
`;

/** The complete lines of a log whose last line may be cut, parsed. */
function completeLines(file: string): Array<{ event: Record<string, unknown> }> {
  const text = readFileSync(file, "utf8");
  return text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { event: Record<string, unknown> });
}

describe("an audit log that cannot grow (a full disk, ulimit -f) while a script writes files", () => {
  it("stops the writes at the first decision it cannot log, ends the script, exits 2; verify reports the cut log, and the next run refuses it", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      // tacit under a file-size limit of a few tens of KiB (blocks of 512 or 1024 bytes, as the shell counts them).
      const limited = (args: string[]) =>
        runCli(['ulimit -f 40 && exec "$@"', "sh", process.execPath, tacitBin, ...args], { node: "/bin/sh", bin: "-c", cwd: work, env: ctx.env, input: SCRIPT });
      const run = await limited(unchecked(["run", "--audit-log", log, "-"]));
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`tacit: cannot write to the audit log ${log}: EFBIG: file too large, write; no further events are logged to it`);
      expect(run.stderr).toContain("tacit could not write its audit log (every action is logged before it is carried out), so it ended the script");
      // Ended, not told an error it could catch and go on after.
      expect(run.stdout).not.toContain("caught");
      expect(run.stdout).not.toContain("after the loop");
      // Some writes were carried out, one after another, then none.
      const written = Array.from({ length: WRITES }, (_, i) => existsSync(path.join(work, `f${i}.txt`)));
      const count = written.indexOf(false);
      expect(count).toBeGreaterThan(0);
      expect(written.slice(count).includes(true)).toBe(false);
      // Each write carried out has its decision in the file; the first one not carried out has none.
      const lines = completeLines(log);
      const allowedWrites = lines
        .filter((line) => line.event.type === "action-requested" && line.event.kind === "FsWrite")
        .filter((request) => lines.some((line) => line.event.type === "decision" && line.event.action === request.event.action && line.event.decision === "allow"))
        .map((request) => String(request.event.pattern));
      expect(allowedWrites).toEqual(Array.from({ length: count }, (_, i) => `fs.write ${path.join(work, `f${i}.txt`)}`));
      // The write that failed is mostly cut inside a line; where the limit fell on a line's end, the log ends in unsigned lines.
      const cut = !readFileSync(log, "utf8").endsWith("\n");
      const { result, report } = await verifyJson(log, ctx.env);
      expect(result.code).toBe(1);
      expect(report.ok).toBe(false);
      if (cut) expect(result.stdout).toContain("the file ends in the middle of a line");
      // The next run, with room to write, does not extend the cut log: it refuses before the script runs.
      const next = await runCli(unchecked(["run", "--audit-log", log, "-"]), { cwd: work, env: ctx.env, input: 'requestFileSystem(".", (fs) => fs.access("next.txt").write("x"));\n' });
      expect(next.code).toBe(2);
      expect(next.stderr).toContain(
        cut
          ? `the last line of the audit log ${log} is incomplete or corrupt (it does not end with a newline: a write was cut off)`
          : `the audit log ${log} ends in lines no signed head covers`,
      );
      expect(existsSync(path.join(work, "next.txt"))).toBe(false);
    } finally {
      ctx.cleanup();
    }
  }, 60_000);
});
