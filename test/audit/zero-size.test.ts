// `tacit audit verify` read a log that had problems a second time, whole, in as many bytes as the
// OS said the file held: a file whose size reads as 0 but that has content (/proc/self/status,
// /proc/PID/cmdline, files of other pseudo file systems) was then verified as an empty log ("0
// lines … the log is empty"), whatever it held, and `show` printed lines that verify said were
// not there. Both now read to the end, whatever the size says.

import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { runCli } from "../helpers.js";
import { type auditHome, cleanLog, type Line, verifyJson } from "./fixtures.js";

describe("a log whose size reads as 0 but that has content", () => {
  let ctx: ReturnType<typeof auditHome>;
  let original: string;
  let lines: Line[];

  beforeAll(() => ({ ctx, original, lines } = cleanLog()));
  afterAll(() => ctx.cleanup());

  it("/proc/self/status: read to its end, reported as no audit log, not as an empty one", async () => {
    const { result, report } = await verifyJson("/proc/self/status", ctx.env);
    expect(result.code).toBe(1);
    expect(report.lines).toBeGreaterThan(10);
    expect(report.notes).not.toContain("the log is empty");
    expect(report.problems).toContainEqual({ line: 1, reason: expect.stringContaining("unreadable line (not valid JSON)") });
    const text = await runCli(["audit", "verify", "/proc/self/status"], { env: ctx.env });
    expect(text.code).toBe(1);
    expect(text.stdout).not.toContain(" 0 lines");
  });

  it("a real log in /proc/PID/cmdline (a process's argv[0]): its lines are verified, and what follows them reported", async () => {
    // argv[0] is the log's text; "\0" + "1000" + "\0" follows it, a last line with no newline.
    const log = readFileSync(original, "utf8");
    const sleeper = spawn("sleep", ["1000"], { argv0: log, stdio: "ignore" });
    onTestFinished(() => {
      sleeper.kill("SIGKILL");
    });
    await new Promise<void>((resolve, reject) => {
      sleeper.once("spawn", resolve);
      sleeper.once("error", reject);
    });
    const file = `/proc/${sleeper.pid}/cmdline`;
    // Wait for the exec: before it, cmdline is the forking Node's.
    for (let i = 0; i < 200 && !readFileSync(file, "utf8").startsWith(log); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(statSync(file).size).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(`${log}\u00001000\u0000`);

    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(1);
    expect(report).toMatchObject({ lines: lines.length + 1, heads: 2, validHeads: 2, lastSignedLine: lines.length - 1, verifiedThrough: lines.length });
    expect(report.problems.map((problem) => problem.line)).toEqual([lines.length + 1, lines.length + 1]);
    expect(report.problems[0]!.reason).toContain("incomplete last line");

    const shown = await runCli(["audit", "show", file, "--json"], { env: ctx.env });
    expect(shown.code).toBe(1);
    const parsed = JSON.parse(shown.stdout) as { verified: boolean; verifiedThrough: number; lines: { line: number; verified: boolean }[] };
    expect(parsed).toMatchObject({ verified: false, verifiedThrough: lines.length });
    expect(parsed.lines.map((line) => line.verified)).toEqual(lines.map(() => true));
  });

  it("a log that reads differently the second time (read again whole, to tell what happened to its lines): said, nothing verified", async () => {
    // Whoever can write a log can change it back between verify's first reading (which found
    // problems) and its second: the second reading's "verified" was said of the first's lines, and
    // show showed those. /proc/self/io reads differently at every reading (it counts the bytes
    // tacit has read), without a race.
    const { result, report } = await verifyJson("/proc/self/io", ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems[0]).toEqual({ line: 1, reason: expect.stringContaining("the log changed while it was read: read again to tell what happened to its lines, it read differently") });
    expect(report.verifiedThrough).toBeNull();
  });
});
