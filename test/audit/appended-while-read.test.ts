// A log read by `tacit audit verify` or `show` while its writer appends to it. The reading is
// of the log as far as it went when the reading reached its end: lines the writer appends
// after that are left to a later reading, and are not a change to the log. Only bytes the
// reading had that read otherwise the second time (rewritten, cut) are.
//
// The writer here is the real AuditLog, appending in this process at the one moment the race
// needs: while the verifier checks the lines of the block it read last, before it reads on
// (the anchor is looked up at the first line, from inside the reading). Under load that window
// is wide: `tacit audit verify` on a running log said "the log changed while it was read"
// (test/audit/live-log.test.ts failed so), since the reading had taken the appended bytes as a
// second block and the check reading again cut the file into blocks elsewhere.

import { appendFileSync, closeSync, copyFileSync, openSync, readFileSync, renameSync, symlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AnchorInput, anchorForVerify, anchorsDirFor } from "../../runner/audit/anchor.js";
import { AuditLog } from "../../runner/audit/log.js";
import { ReadingDigest } from "../../runner/audit/log-lines.js";
import { showAuditLogFile } from "../../runner/audit/show.js";
import { reportReplacedWhileRead, verifyAuditLogFile } from "../../runner/audit/verify.js";
import { auditHome, evaluationEvents, publicKeyHex, verifyJson } from "./fixtures.js";

let ctx: ReturnType<typeof auditHome>;
beforeAll(() => {
  ctx = auditHome();
});
afterAll(() => ctx.cleanup());

const NO_ANCHOR: AnchorInput = { record: null, why: "not looked up in this test", sameFirstLine: [] };
const CHANGED = /the log changed while it was read/;

/** A log with a signed evaluation and an unsigned one after it, its writer still holding it open. */
function liveLog(name: string): { file: string; writer: AuditLog; lines: number } {
  const file = path.join(ctx.dir, `${name}.jsonl`);
  const writer = AuditLog.open(file, { keyFile: ctx.keyFile });
  for (const event of evaluationEvents("eval-1")) writer.append(event);
  writer.signHead();
  for (const event of evaluationEvents("eval-2")) writer.append(event);
  writer.flush();
  return { file, writer, lines: readFileSync(file, "utf8").split("\n").length - 1 };
}

/** Verifies `file` as the CLI does, with `duringReading` run inside the reading, before it reads past the block it has. */
function verifyWhile(file: string, duringReading: () => void, digest?: ReadingDigest) {
  const fd = openSync(file, "r");
  try {
    let called = false;
    const anchorOf = (): AnchorInput => {
      if (!called) duringReading();
      called = true;
      return NO_ANCHOR;
    };
    const report = verifyAuditLogFile(fd, publicKeyHex(ctx.keyFile), anchorOf, undefined, process.pid, digest);
    reportReplacedWhileRead(report, fd, file);
    return report;
  } finally {
    closeSync(fd);
  }
}

it("lines the live writer appends while verify reads: not a change; the report is of the lines read, their unsigned tail said to be the writer's", () => {
  const { file, writer, lines } = liveLog("appended");
  try {
    const report = verifyWhile(file, () => {
      for (const event of evaluationEvents("eval-3")) writer.append(event);
      writer.flush();
    });
    expect(readFileSync(file, "utf8").split("\n").length - 1).toBe(lines + 10);
    expect(report.problems.map((p) => p.reason)).not.toContainEqual(expect.stringMatching(CHANGED));
    expect(report.lines).toBe(lines);
    expect(report.problems).toEqual([{ line: 12, reason: expect.stringMatching(/^10 lines after the last signed head at line 11 are not signed yet: tacit process \d+ is writing/) }]);
    // Lines 1-11 are as signed: the appended lines did not cost them their verification.
    expect(report.verifiedThrough).toBe(11);
  } finally {
    writer.close();
  }
});

it("show after such a reading shows what was checked, not a change between checking and showing", async () => {
  const { file, writer, lines } = liveLog("shown");
  try {
    const checked = new ReadingDigest();
    const report = verifyWhile(
      file,
      () => {
        for (const event of evaluationEvents("eval-3")) writer.append(event);
        writer.flush();
      },
      checked,
    );
    expect(report.problems.map((p) => p.reason)).not.toContainEqual(expect.stringMatching(CHANGED));
    const fd = openSync(file, "r");
    let text = "";
    try {
      const coverage = { verifiedThrough: report.verifiedThrough ?? 0, signedAsFound: report.signedAsFound, lines: report.lines, problems: new Map<number, string[]>(), beingWritten: null };
      const found = await showAuditLogFile(fd, { format: "text", header: "" }, coverage, checked, {
        write: (piece) => {
          text += piece;
          return null;
        },
        unreadable: () => {},
      });
      expect(found).toEqual({ unchanged: true, linesAdded: 10 });
    } finally {
      closeSync(fd);
    }
    // The checked lines, each a row, then what was left out.
    const rows = text.trimEnd().split("\n");
    expect(rows.slice(0, lines).map((row) => /^(?:UNVERIFIED)? *(\d+) /.exec(row)?.[1])).toEqual(Array.from({ length: lines }, (_, i) => String(i + 1)));
    expect(rows.slice(lines)).toEqual(["(10 more lines were written after the log was checked: not shown; show it again)"]);
  } finally {
    writer.close();
  }
});

it("a line the reading had, rewritten while it was read, is still reported as a change", () => {
  const { file, writer } = liveLog("rewritten");
  writer.close();
  const before = readFileSync(file);
  // Append an unsigned line (someone else's) so the log has a problem and is read a second time.
  appendFileSync(file, "not an audit line\n");
  const report = verifyWhile(file, () => {
    // Line 3's first byte, rewritten in place (same length): the second reading differs from the first.
    const fd = openSync(file, "r+");
    try {
      const at = before.indexOf(0x0a, before.indexOf(0x0a) + 1) + 1;
      const byte = Buffer.from([before[at]! ^ 0x01]);
      writeSync(fd, byte, 0, 1, at);
    } finally {
      closeSync(fd);
    }
  });
  expect(report.problems[0]).toEqual({ line: 1, reason: expect.stringMatching(CHANGED) });
  expect(report.verifiedThrough).toBeNull();
});

it("a log replaced at its path while it was read (a rotation): reported, since the report holds for the file read, not the one there now", async () => {
  const { file, writer } = liveLog("rotated");
  writer.close();
  const untouched = verifyWhile(file, () => {});
  expect(untouched).toMatchObject({ ok: true, problems: [], verifiedThrough: 22 });

  const replaced = verifyWhile(file, () => {
    copyFileSync(file, `${file}.new`);
    renameSync(`${file}.new`, file);
  });
  expect(replaced.problems).toEqual([
    { line: 1, reason: expect.stringMatching(/^the log was replaced while it was read: another file is there now \(one was renamed or linked over it/) },
  ]);
  expect(replaced).toMatchObject({ ok: false, verifiedThrough: null });

  const moved = verifyWhile(file, () => renameSync(file, `${file}.1`));
  expect(moved.problems).toEqual([{ line: 1, reason: expect.stringMatching(/^the log was replaced while it was read: there is no file there any more/) }]);

  // Through the CLI: a log named through a link is the file the link leads to, not a replaced one.
  const link = path.join(ctx.dir, "link.jsonl");
  symlinkSync(`${file}.1`, link);
  const { result, report } = await verifyJson(link, ctx.env);
  expect(report.problems.map((p) => p.reason)).not.toContainEqual(expect.stringMatching(/replaced while it was read/));
  expect(result.code, result.stdout).toBe(0);
});

it("a head the live writer signs and records after the reading reached the log's end: not taken for a cut (the record is read before the log)", () => {
  const { file, writer, lines } = liveLog("signed-meanwhile");
  try {
    const key = publicKeyHex(ctx.keyFile);
    const fd = openSync(file, "r");
    let report;
    try {
      // As the CLI looks the record up: before reading the log.
      const anchorOf = anchorForVerify(file, null, anchorsDirFor(ctx.keyFile), key);
      report = verifyAuditLogFile(
        fd,
        key,
        (firstLine) => {
          // The reading has the log's one block; the writer now signs its unsigned lines, fsyncs, records the head.
          writer.signHead();
          return anchorOf(firstLine);
        },
        undefined,
        process.pid,
      );
    } finally {
      closeSync(fd);
    }
    // Before, the record was read at the log's first line, after the reading: it named a head (line 22) the
    // reading ended before, and verify said "truncated: ... the lines after it were cut off" of a log that was only growing.
    expect(report.problems.map((p) => p.reason)).not.toContainEqual(expect.stringMatching(/^truncated/));
    expect(report.problems).toEqual([{ line: 12, reason: expect.stringMatching(/^10 lines after the last signed head at line 11 are not signed yet/) }]);
    expect(report.anchor).toMatchObject({ status: "anchored", head: { line: 11 } });
    expect(lines).toBe(21);
  } finally {
    writer.close();
  }
});
