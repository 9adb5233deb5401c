// Lines a crashed writer left unsigned are signed by the next writer as it finds them (marked
// by a resumed-after-unsigned-tail line). Whoever could write the log in between, without the
// key, could rewrite them (hashes recomputed), and the next run's head then vouched for the
// rewrite: `tacit audit show` showed the forged line as verified, unmarked, under "verified".
// Their content is a claim, not a record: show marks them UNVERIFIED (and --json says
// verified: false) while the lines signed as written around them stay verified.

import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VerifyReport } from "../../runner/audit/verify.js";
import { runCli } from "../helpers.js";
import { auditHome, crashWhileWriting, readLines, rehash, type Line, writeLines, writeLog } from "./fixtures.js";

/** What the forger writes in place of the pattern the crashed run really recorded. */
const FORGED = "fs.read /work/app/forged-harmless.txt";

describe.concurrent("lines signed only when a writer reopened the log after a crash", () => {
  let ctx: ReturnType<typeof auditHome>;
  let log: string;
  /** The line numbers (1-based) of the crashed run's lines, and of the one rewritten. */
  let tail: { from: number; to: number; forged: number };

  beforeAll(() => {
    ctx = auditHome();
    log = path.join(ctx.dir, "audit.jsonl");
    writeLog(log, ctx.keyFile, 1);
    const signed = readLines(log).length;
    crashWhileWriting(log, ctx.keyFile, "eval-2");
    // The forger: an action line of the unsigned tail says another path, its hashes recomputed.
    const lines = readLines(log);
    const index = lines.findIndex((line, i) => i >= signed && line.event.type === "action-requested");
    const edited = rehash({ ...lines[index]!, event: { ...lines[index]!.event, pattern: FORGED } as Line["event"] });
    // The next line's prev follows, as a careful forger makes it (and so on to the tail's end).
    const forged = [...lines.slice(0, index), edited];
    for (const line of lines.slice(index + 1)) forged.push(rehash({ ...line, prev: forged.at(-1)!.chain }));
    writeLines(log, forged);
    // The next run reopens the log, marks the tail it found and signs it.
    writeLog(log, ctx.keyFile, 1);
    tail = { from: signed + 1, to: lines.length, forged: index + 1 };
  });
  afterAll(() => ctx.cleanup());

  it("verify reports the range (exit 0: a crash leaves such lines) and warns of it", async () => {
    const result = await runCli(["audit", "verify", log, "--json"], { env: ctx.env });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as VerifyReport;
    expect(report.signedAsFound).toEqual([{ from: tail.from, to: tail.to }]);
    expect(report.warnings.map((warning) => warning.line)).toEqual([tail.to + 1]);
  });

  it("show marks the forged line and the rest of that tail UNVERIFIED, and nothing else", async () => {
    const result = await runCli(["audit", "show", log], { env: ctx.env });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`lines ${tail.from}–${tail.to} were found unsigned when the log was reopened`);
    const rows = result.stdout.split("\n").filter((row) => /^(UNVERIFIED)?\s+\d+  \d{4}-/.test(row));
    const marked = rows.flatMap((row) => (row.startsWith("UNVERIFIED") ? [Number(/\d+/.exec(row)![0])] : []));
    expect(marked).toEqual(Array.from({ length: tail.to - tail.from + 1 }, (_, i) => tail.from + i));
    const forgedRow = rows.find((row) => row.includes(JSON.stringify(FORGED)));
    expect(forgedRow, result.stdout).toMatch(/^UNVERIFIED/);
  });

  it("show --json says verified: false for those lines only", async () => {
    const result = await runCli(["audit", "show", log, "--json"], { env: ctx.env });
    expect(result.code, result.stderr).toBe(0);
    const shown = JSON.parse(result.stdout) as { lines: { line: number; verified: boolean; entry: Line }[] };
    const unverified = shown.lines.filter((line) => !line.verified).map((line) => line.line);
    expect(unverified).toEqual(Array.from({ length: tail.to - tail.from + 1 }, (_, i) => tail.from + i));
    expect(shown.lines[tail.forged - 1]).toMatchObject({ verified: false, entry: { event: { pattern: FORGED } } });
  });
});
