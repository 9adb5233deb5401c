// A line broken in two (a line break put inside it: an editor that wraps long lines, a paste) or two
// lines joined into one: verify reported the unreadable lines, and then, at the next intact line, "deleted
// line: … the line with seq 5 is missing" (or two lines deleted), which sent a person looking for lines
// that were in the file all along. The seq gap across unreadable lines of another number than the seqs
// missing is now said as what it is: those seqs are in the unreadable lines, or were deleted. Both the
// verifier that reads a log whole (the CLI's, for logs up to 64 MiB) and the one that reads it a line
// at a time (larger logs) say so.

import { closeSync, openSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anchorForVerify, anchorsDirFor } from "../../runner/audit/anchor.js";
import { verifyAuditLogFile, type VerifyReport } from "../../runner/audit/verify.js";
import { type auditHome, cleanLog, publicKeyHex, verifyJson, writeVariant } from "./fixtures.js";

describe("a line broken in two, or two lines joined", () => {
  let ctx: ReturnType<typeof auditHome>;
  let text: string[];

  beforeAll(() => {
    const clean = cleanLog();
    ctx = clean.ctx;
    text = readFileSync(clean.original, "utf8").split("\n");
  });
  afterAll(() => ctx.cleanup());

  /** Line 5 (seq 5) broken in two inside its pattern. */
  const split = (): string => {
    const lines = [...text];
    const at = lines[4]!.indexOf('"pattern":"') + 15;
    lines.splice(4, 1, lines[4]!.slice(0, at), lines[4]!.slice(at));
    return lines.join("\n");
  };
  /** Lines 5 and 6 (seq 5 and 6) as one line. */
  const joined = (): string => {
    const lines = [...text];
    lines.splice(4, 2, lines[4]! + lines[5]!);
    return lines.join("\n");
  };

  const streamed = (file: string): VerifyReport => {
    const fd = openSync(file, "r");
    try {
      return verifyAuditLogFile(fd, publicKeyHex(ctx.keyFile), anchorForVerify(file, null, anchorsDirFor(ctx.keyFile)), 0);
    } finally {
      closeSync(fd);
    }
  };

  it("broken in two: both halves are unreadable, and the next line says seq 5 is in them, not that it was deleted", async () => {
    const file = writeVariant(ctx.dir, "split", split());
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems.map((problem) => problem.line)).toEqual([5, 6, 7]);
    expect(report.problems[0]!.reason).toContain("unreadable line");
    expect(report.problems[1]!.reason).toContain("unreadable line");
    const across = report.problems[2]!.reason;
    expect(across).toBe(
      "seq jumps from 4 (line 4) to 6 across lines 5–6, which cannot be read: the line with seq 5 is in them, edited or corrupted " +
        "(a line broken in two, or lines joined into one), or was deleted",
    );
    expect(streamed(file).problems.map((problem) => problem.reason)).toContain(across);
  });

  it("joined: the one unreadable line holds seq 5 and 6, not two lines deleted", async () => {
    const file = writeVariant(ctx.dir, "joined", joined());
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems.map((problem) => problem.line)).toEqual([5, 6]);
    const across = report.problems[1]!.reason;
    expect(across).toBe(
      "seq jumps from 4 (line 4) to 7 across line 5, which cannot be read: the lines with seq 5–6 are in it, edited or corrupted " +
        "(a line broken in two, or lines joined into one), or were deleted",
    );
    expect(streamed(file).problems.map((problem) => problem.reason)).toContain(across);
  });

  it("the log's first line broken in two: its seq is in the halves, not 'the log starts at seq 2'", async () => {
    const lines = [...text];
    lines.splice(0, 1, lines[0]!.slice(0, 40), lines[0]!.slice(40));
    const file = writeVariant(ctx.dir, "first-split", lines.join("\n"));
    const { report } = await verifyJson(file, ctx.env);
    const reason = "the first readable line has seq 2, after lines 1–2, which cannot be read: the line with seq 1 is in them, edited or corrupted (a line broken in two, or lines joined into one), or was deleted";
    expect(report.problems).toContainEqual({ line: 3, reason });
    expect(streamed(file).problems).toContainEqual({ line: 3, reason });
  });

  it("a log whose first line (or lines) were deleted says so in words", async () => {
    const one = await verifyJson(writeVariant(ctx.dir, "first-deleted", text.slice(1).join("\n")), ctx.env);
    expect(one.report.problems[0]).toEqual({ line: 1, reason: "the log starts at seq 2, not 1: its first line was deleted" });
    const three = await verifyJson(writeVariant(ctx.dir, "three-deleted", text.slice(3).join("\n")), ctx.env);
    expect(three.report.problems[0]).toEqual({ line: 1, reason: "the log starts at seq 4, not 1: its first 3 lines were deleted" });
  });
});
