// Logs too large to hold: `tacit audit verify` and `show` read a log a line at a time. Read
// whole, a log of 26 MB did not verify in 64 MB of heap, and `show` of 240,000 lines ended in
// a RangeError; a log past 512 MiB could not be made into a string at all. The heap limit
// these runs get (NODE_OPTIONS) is what shows that no run holds the log.

import { spawnSync } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anchorForVerify, anchorsDirFor } from "../../runner/audit/anchor.js";
import { AuditLog } from "../../runner/audit/log.js";
import { verifyAuditLog, verifyAuditLogFile, type VerifyReport } from "../../runner/audit/verify.js";
import { runCli, tacitBin } from "../helpers.js";
import { auditHome, cleanLog, type Line, publicKeyHex, shownEntries, writeLog, writeVariant } from "./fixtures.js";

/** Heap enough for tacit itself, a small part of the logs below. */
const SMALL_HEAP = { NODE_OPTIONS: "--max-old-space-size=32" };
/**
 * 1,300 evaluations make a log of about 34 MB: more than the whole 32 MB heap, so no run that held
 * it (as a string, or its lines) could fit; read whole, each of verify, show and show --json
 * ends out of memory at this size (and at 26 MB). More lines only cost CPU: it was 2,500 (65 MB).
 */
const EVALUATIONS = 1300;
const HEADS = 5;
/** Each evaluation: started, 20 reads of three events, ended; a head every EVALUATIONS / HEADS evaluations. */
const LINES = EVALUATIONS * 62 + HEADS;

/** A log of many evaluations, written with the real writer and signed with the home's key. */
function writeLargeLog(file: string, keyFile: string): void {
  // Heads only where this says: none by count or time.
  const log = AuditLog.open(file, { keyFile, signEveryEvents: 1e9, signIntervalMs: 1e9 });
  try {
    for (let e = 1; e <= EVALUATIONS; e++) {
      const evaluation = `eval-${e}`;
      log.append({ type: "evaluation-started", evaluation, session: null, displayName: "reads.ts", codeDigest: `sha256:${"0".repeat(64)}`, policyDigest: `sha256:${"1".repeat(64)}` });
      for (let action = 1; action <= 20; action++) {
        log.append({ type: "action-requested", evaluation, action, kind: "FsRead", pattern: `fs.read /work/f${action}.txt`, tier: "allow" });
        log.append({ type: "decision", evaluation, action, decision: "allow", answer: null, via: "policy", reason: null });
        log.append({ type: "action-result", evaluation, action, ok: true, digest: `sha256:${"2".repeat(64)}`, size: 100, durationMs: 0.1 });
      }
      log.append({ type: "evaluation-ended", evaluation, outcome: "ok", exitCode: 0, durationMs: 4 });
      if (e % (EVALUATIONS / HEADS) === 0) log.signHead();
    }
  } finally {
    log.close();
  }
}

describe("audit logs too large to hold", () => {
  let ctx: ReturnType<typeof auditHome>;
  let large: string;

  beforeAll(() => {
    ctx = auditHome();
    large = path.join(ctx.dir, "large.jsonl");
    writeLargeLog(large, ctx.keyFile);
  });
  afterAll(() => ctx.cleanup());

  it(`verifies a log of ${LINES} lines (about 34 MB) in 32 MB of heap`, async () => {
    expect(statSync(large).size).toBeGreaterThan(32 * 1024 * 1024);
    const result = await runCli(["audit", "verify", large], { env: { ...ctx.env, ...SMALL_HEAP } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`verified — ${LINES} lines, ${HEADS} signed heads (${HEADS} valid), signed through line ${LINES - 1}`);
    expect(result.stdout).toContain("anchored: this machine signed a head at line");
  }, 60_000);

  it("shows it, as text and as JSON, in 32 MB of heap", async () => {
    const text = await runCli(["audit", "show", large], { env: { ...ctx.env, ...SMALL_HEAP } });
    expect(text.code, text.stderr).toBe(0);
    // What verifying it found, a blank line, then the lines.
    expect(text.stdout.split("\n", 1)[0]).toContain(`${large}: verified — ${LINES} lines`);
    const shown = text.stdout.slice(text.stdout.indexOf("\n\n") + 2).split("\n");
    expect(shown).toHaveLength(LINES + 1);
    // The seq column is as wide as the count of lines.
    expect(shown[0]).toMatch(new RegExp(`^ {${String(LINES).length - 1}}1 {2}\\S+ {2}evaluation-started {2}eval eval-1 `));
    expect(shown[LINES - 1]).toMatch(new RegExp(`^${LINES} {2}\\S+ {2}head {16}signed through line ${LINES - 1} `));

    const json = await runCli(["audit", "show", "--json", large], { env: { ...ctx.env, ...SMALL_HEAP } });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ verified: true, verifiedThrough: LINES });
    const parsed = shownEntries(json.stdout);
    expect(parsed).toHaveLength(LINES);
    expect(parsed.map((line) => line.seq)).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
    // show checks the log as verify does before it shows it: each run reads it twice, and hashes it.
  }, 180_000);

  it("reports a line longer than 64 MiB without holding it, and goes on to the lines after it", async () => {
    const file = path.join(ctx.dir, "long-line.jsonl");
    writeLog(file, ctx.keyFile, 1);
    const lines = readFileSync(file, "utf8").split("\n");
    lines.splice(5, 0, "x".repeat(65 * 1024 * 1024));
    writeFileSync(file, lines.join("\n"));
    const result = await runCli(["audit", "verify", file], { env: { ...ctx.env, ...SMALL_HEAP } });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toContain("line 6: unreadable line (longer than 64 MiB, which tacit never writes)");
    // The lines after it are read: line 7 (seq 6) follows seq 5 at line 5.
    expect(result.stdout).not.toContain("line 7:");
    expect(result.stdout).toContain("12 lines, 1 signed heads (1 valid), signed through line 11");
  }, 60_000);

  it("verifies a log piped to it (/dev/stdin), from an owner-only copy it deletes", async () => {
    const file = path.join(ctx.dir, "piped.jsonl");
    writeLog(file, ctx.keyFile, 2);
    // A shell's pipe, as `ssh host cat log | tacit audit verify /dev/stdin` gives it (spawn's stdio is a socket, which /dev/stdin cannot open).
    const piped = (command: string) =>
      spawnSync("bash", ["-c", `cat "$1" | "$2" "$3" audit ${command} /dev/stdin`, "bash", file, process.execPath, tacitBin], {
        encoding: "utf8",
        env: { ...process.env, ...ctx.env, TMPDIR: ctx.dir },
      });
    const result = piped("verify");
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("/dev/stdin: verified — 22 lines, 2 signed heads (2 valid)");
    const shown = piped("show");
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout.split("\n", 1)[0]).toBe("/dev/stdin: verified — 22 lines, 2 signed heads (2 valid), signed through line 21");
    expect(shown.stdout.slice(shown.stdout.indexOf("\n\n") + 2).split("\n")).toHaveLength(23);
    expect(readdirSync(ctx.dir).filter((name) => name.startsWith("tacit-audit-log-"))).toEqual([]);
  });
});

describe("a log read a line at a time, too large to be read again whole", () => {
  let ctx: ReturnType<typeof auditHome>;
  let lines: Line[];
  let original: string;

  beforeAll(() => ({ ctx, original, lines } = cleanLog()));
  afterAll(() => ctx.cleanup());

  /** What verify reports of `file` reading it once, a line at a time (no log is small enough to be read again whole). */
  const streamed = (file: string): VerifyReport => {
    const fd = openSync(file, "r");
    try {
      return verifyAuditLogFile(fd, publicKeyHex(ctx.keyFile), anchorForVerify(file, null, anchorsDirFor(ctx.keyFile)), 0);
    } finally {
      closeSync(fd);
    }
  };
  const variant = (name: string, content: Line[] | string): string => writeVariant(ctx.dir, name, content);
  const problemLines = (report: VerifyReport): number[] => report.problems.map((problem) => problem.line);

  it("reports a clean log exactly as the verifier that holds it whole does", () => {
    const report = streamed(original);
    expect(report).toMatchObject({ ok: true, lines: 22, heads: 2, validHeads: 2, lastSignedLine: 21, problems: [] });
    const text = readFileSync(original, "utf8");
    const whole = verifyAuditLog(text, publicKeyHex(ctx.keyFile), anchorForVerify(original, null, anchorsDirFor(ctx.keyFile))(text));
    expect(report).toEqual(whole);
    expect(report.anchor.status).toBe("anchored");
  });

  it("catches each tampering on the line where it shows, and says why it tells no more", () => {
    const edited = structuredClone(lines);
    (edited[14]!.event as { size: number }).size = 1;
    // Each: the lines with problems, and the reason given for the first of them.
    const cases: Array<[string, Line[] | string, number[], RegExp]> = [
      ["edited", edited, [15], /^edited: the line's seq, time or event does not match its hash/],
      ["deleted", lines.filter((_, i) => i !== 6), [7], /^seq jumps from 6 \(line 6\) to 8: the lines between were deleted/],
      ["swapped", [...lines.slice(0, 4), lines[5]!, lines[4]!, ...lines.slice(6)], [5, 6], /^seq jumps from 4 \(line 4\) to 6/],
      ["inserted", [...lines.slice(0, 8), lines[3]!, ...lines.slice(8)], [9], /^seq 4 comes after seq 8 \(line 8\): lines were swapped, moved, inserted or duplicated/],
      ["emptied line", readFileSync(original, "utf8").replace(/\n/, "\n\n"), [2], /^empty line/],
      ["truncated", readFileSync(original, "utf8").slice(0, -40), [12, 22], /^11 lines after the last signed head at line 11 are not signed/],
    ];
    for (const [name, content, expected, reason] of cases) {
      const report = streamed(variant(name, content));
      expect(report.ok, name).toBe(false);
      expect(problemLines(report), name).toEqual(expected);
      expect(report.problems[0]!.reason, name).toMatch(reason);
      expect(report.notes.join("\n"), name).toContain("more than the 0.0 MiB read whole to tell moved, inserted, duplicated and deleted lines apart");
    }
  });

  it("a log cut after a signed head is caught against this machine's record", () => {
    const cut = path.join(ctx.dir, "cut.jsonl");
    writeLog(cut, ctx.keyFile, 2);
    writeFileSync(cut, readFileSync(cut, "utf8").split("\n").slice(0, 11).join("\n") + "\n");
    const report = streamed(cut);
    expect(report.ok).toBe(false);
    expect(report.anchor.status).toBe("truncated");
    expect(report.problems).toEqual([{ line: 11, reason: expect.stringMatching(/^truncated: this machine signed a head at line 22 .* the file ends at line 11/) }]);
  });
});
