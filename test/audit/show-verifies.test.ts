// `tacit audit show` checks the log as verify does and says first whether it verified: shown
// alone, an edited or forged line of a real log read as if it were true. Each attack is made on
// the log of two real `tacit run --audit-log` runs (16 lines each, a head ending each run).

import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReadingDigest } from "../../runner/audit/log-lines.js";
import { showAuditLogFile } from "../../runner/audit/show.js";
import { verifyAuditLogFile } from "../../runner/audit/verify.js";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { auditHome, type Line, publicKeyHex, readLines, rechain, workAndLog, writeLog, writeVariant } from "./fixtures.js";

const SCRIPT = (file: string) => `requestFileSystem(".", (fs) => { fs.access("${file}").write("hi"); println(fs.access("${file}").read()); });`;
/** What an attacker writes into the log in place of the path the script really wrote. */
const FORGED = "forged-harmless.txt";

interface ShownJson {
  file: string;
  verified: boolean;
  verifiedThrough: number | null;
  verification: { ok: boolean; problems: { line: number; reason: string }[] };
  lines: { line: number; verified: boolean; entry: Line }[];
  changedWhileShown: boolean;
  linesAdded: number;
}

describe("tacit audit show says whether the log verified", () => {
  let ctx: ReturnType<typeof auditHome>;
  let log: string;
  let lines: Line[];
  const show = (file: string, extra: string[] = [], env = ctx.env) => runCli(["audit", "show", file, ...extra], { env });
  const showJson = async (file: string, extra: string[] = []) => {
    const result = await show(file, ["--json", ...extra]);
    return { result, shown: JSON.parse(result.stdout) as ShownJson };
  };
  /** The rows of show's text after its header (which a blank line ends). */
  const rowsOf = (stdout: string) => stdout.slice(stdout.indexOf("\n\n") + 2).trimEnd().split("\n");

  beforeAll(async () => {
    ctx = auditHome();
    let work: string;
    ({ work, log } = workAndLog(ctx.dir));
    for (const file of ["first.txt", "second.txt"]) {
      const run = await runCli(unchecked(["run", "--audit-log", log, "-"]), { cwd: work, env: ctx.env, input: SCRIPT(file) });
      expect(run.code, run.stderr).toBe(0);
    }
    lines = readLines(log);
    expect(lines.filter((line) => line.event.type === "head").map((line) => line.seq)).toEqual([lines.length / 2, lines.length]);
  }, 60_000);
  afterAll(() => ctx.cleanup());

  it("an untouched log: verified, said before the lines, no line marked (exit 0)", async () => {
    const result = await show(log);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout.split("\n")[0]).toBe(`${log}: verified — ${lines.length} lines, 2 signed heads (2 valid), signed through line ${lines.length - 1}`);
    expect(result.stdout).not.toContain("UNVERIFIED");
    expect(rowsOf(result.stdout)).toHaveLength(lines.length);
    expect(rowsOf(result.stdout)[0]).toMatch(/^ {2}1 {2}\S+ {2}evaluation-started /);

    const { result: json, shown } = await showJson(log);
    expect(json.code).toBe(0);
    expect(shown).toMatchObject({ file: log, verified: true, verifiedThrough: lines.length, verification: { ok: true, problems: [] }, changedWhileShown: false, linesAdded: 0 });
    expect(shown.lines.map((line) => line.entry)).toEqual(lines);
    expect(shown.lines.every((line, index) => line.verified && line.line === index + 1)).toBe(true);
  });

  it("one field edited: not verified, naming the line and why; the forged value is shown marked (exit 1)", async () => {
    const index = lines.findIndex((line) => line.event.kind === "FsWrite" && String(line.event.pattern).endsWith("/second.txt"));
    expect(index).toBeGreaterThan(lines.length / 2);
    const edited = readFileSync(log, "utf8").split("\n");
    edited[index] = edited[index]!.replace("/second.txt", `/${FORGED}`);
    const file = writeVariant(ctx.dir, "edited", edited.join("\n"));

    const result = await show(file);
    expect(result.code).toBe(1);
    const header = result.stdout.slice(0, result.stdout.indexOf("\n\n"));
    expect(header).toContain(`line ${index + 1}: edited: the line's seq, time or event does not match its hash`);
    expect(header).toContain(`lines 1–${lines.length / 2} are verified; lines ${lines.length / 2 + 1}–${lines.length} are not, and each is marked UNVERIFIED below`);
    expect(header).not.toContain(": verified");
    // Said plainly, first: a reader who stops at the first line knows the log did not verify.
    expect(header.split("\n")[0]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: NOT verified — 1 problem; ${lines.length} lines, 2 signed heads \\(2 valid\\)`));
    const rows = rowsOf(result.stdout);
    const forgedRow = rows.find((row) => row.includes(FORGED))!;
    expect(forgedRow).toMatch(new RegExp(`^UNVERIFIED +${index + 1}  `));
    // The reason is said under the line it names, too.
    expect(rows[rows.indexOf(forgedRow) + 1]).toMatch(new RegExp(`^ +\\^ line ${index + 1}: edited: `));
    // The first run's lines, which its head covers, are not marked; every line after is.
    const marked = rows.filter((row) => /^ *\d+  /.test(row) || row.startsWith("UNVERIFIED"));
    expect(marked).toHaveLength(lines.length);
    marked.forEach((row, i) => expect(row.startsWith("UNVERIFIED"), row).toBe(i >= lines.length / 2));

    const { result: json, shown } = await showJson(file);
    expect(json.code).toBe(1);
    expect(shown).toMatchObject({ verified: false, verifiedThrough: lines.length / 2 });
    const forgedLine = shown.lines.find((line) => JSON.stringify(line.entry).includes(FORGED))!;
    expect(forgedLine).toMatchObject({ line: index + 1, verified: false });
  });

  it("a line rewritten with its hashes and the chain after it recomputed: the lines from there on are marked", async () => {
    // A careful forger: the chain is consistent again, but the head after it cannot be re-signed.
    const index = lines.findIndex((line) => line.event.kind === "FsWrite" && String(line.event.pattern).endsWith("/first.txt"));
    const forged = lines.map((line, i) => (i === index ? { ...line, event: { ...line.event, pattern: String(line.event.pattern).replace("/first.txt", `/${FORGED}`) } } : line));
    const file = writeVariant(ctx.dir, "rechained", rechain(forged, index));

    const result = await show(file);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`line ${lines.length / 2}: signature does not verify`);
    expect(result.stdout).toContain("no line is verified, so every line is marked UNVERIFIED below");
    for (const row of rowsOf(result.stdout).filter((row) => !row.trimStart().startsWith("^"))) expect(row).toMatch(/^UNVERIFIED /);
    expect(rowsOf(result.stdout).find((row) => row.includes(FORGED))).toMatch(new RegExp(`^UNVERIFIED +${index + 1}  `));
  });

  it("cut after the first run's head: says the tail is unsigned, and marks it", async () => {
    const kept = lines.length / 2 + 4;
    const text = readFileSync(log, "utf8").split("\n").slice(0, kept).join("\n") + "\n";
    // Cut in place, so this machine's record of the log's last head (its anchor) applies to it too.
    const original = readFileSync(log);
    try {
      writeFileSync(log, text);
      const result = await show(log);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`line ${lines.length / 2 + 1}: 4 lines after the last signed head at line ${lines.length / 2} are not signed`);
      expect(result.stdout).toContain(`truncated: this machine signed a head at line ${lines.length}`);
      expect(result.stdout).toContain(`lines 1–${lines.length / 2} are verified; lines ${lines.length / 2 + 1}–${kept} are not`);
      const rows = rowsOf(result.stdout).filter((row) => !row.trimStart().startsWith("^"));
      expect(rows).toHaveLength(kept);
      rows.forEach((row, i) => expect(row.startsWith("UNVERIFIED"), row).toBe(i >= lines.length / 2));
    } finally {
      writeFileSync(log, original);
    }
  });

  it("takes --public-key: verified elsewhere with the writer's key, not with another's", async () => {
    const elsewhere = tempDirWithHome("tacit-audit-elsewhere-");
    try {
      const key = publicKeyHex(ctx.keyFile);
      const copy = path.join(elsewhere.dir, "copy.jsonl");
      writeFileSync(copy, readFileSync(log));
      // No key on that machine: nothing vouches for the log, and show says so.
      const keyless = await show(copy, [], elsewhere.env);
      expect(keyless.code).toBe(1);
      expect(keyless.stdout.split("\n")[0]).toContain(`${copy}: NOT verified`);
      expect(keyless.stdout).toContain("no line is verified, so every line is marked UNVERIFIED below");

      const given = await show(copy, ["--public-key", key], elsewhere.env);
      expect(given.code, given.stdout).toBe(0);
      expect(given.stdout.split("\n")[0]).toMatch(new RegExp(`^${copy.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: verified — `));
      expect(given.stdout).not.toContain("UNVERIFIED");

      const other = await show(copy, ["--public-key", "ab".repeat(32)], elsewhere.env);
      expect(other.code).toBe(1);
      expect(other.stdout).toContain("signed by a different key");

      const bad = await show(copy, ["--public-key", "not-a-key"], elsewhere.env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("--public-key takes an Ed25519 public key as 64 hex digits");
    } finally {
      elsewhere.cleanup();
    }
  });

  it("a log that reads differently when shown than when checked: said after the lines, on stderr and in --json (exit 1)", async () => {
    // Whoever can write a log can change it between show's check and its reading to show it, so
    // that the lines shown are not those checked. /proc/self/io does so at every reading, without
    // a race: it counts the bytes tacit has read.
    const result = await show("/proc/self/io");
    expect(result.code).toBe(1);
    // Its first block differs: not one of its lines is shown, only what the check found and this.
    const rows = result.stdout.slice(result.stdout.indexOf("\n\n") + 2).trimEnd().split("\n");
    expect(rows).toEqual([
      "!!!  the log changed between checking it and showing it: it reads differently from here on than when it was checked, so no more of it is shown " +
        "(the lines above read as they did). Show it again once nothing writes to it (or show a copy of it)",
    ]);
    expect(result.stderr).toContain("tacit: /proc/self/io changed between checking it and showing it: it was shown only as far as it read as when checked; show it again");
    const { result: json, shown } = await showJson("/proc/self/io");
    expect(json.code).toBe(1);
    expect(shown).toMatchObject({ verified: false, changedWhileShown: true, lines: [] });
  });
});

describe("show's reading is checked against the check's as it goes", () => {
  it("a log changed after the check, past its first MiB: the lines up to the change are shown, the forged ones are not", async () => {
    // Through the CLI a change cannot be timed between show's check and its reading (/proc/self/io
    // above changes at every reading); here the two are called as the CLI calls them, on a real log
    // of more than one block, edited in place in between.
    const ctx = auditHome();
    try {
      const file = path.join(ctx.dir, "audit.jsonl");
      writeLog(file, ctx.keyFile, 300);
      const text = readFileSync(file, "utf8");
      expect(Buffer.byteLength(text)).toBeGreaterThan(1024 * 1024 + 4096);
      const fd = openSync(file, "r");
      try {
        const checked = new ReadingDigest();
        const report = verifyAuditLogFile(fd, publicKeyHex(ctx.keyFile), () => ({ record: null, why: "not used here", sameFirstLine: [] }), undefined, null, checked);
        expect(report).toMatchObject({ ok: true, verifiedThrough: report.lines });
        // The last evaluation's read, forged in place (same length): it lies in the file's second MiB.
        const at = text.lastIndexOf("fs.read /work/app/README.md");
        expect(at).toBeGreaterThan(1024 * 1024);
        writeFileSync(file, text.slice(0, at) + "fs.read /work/app/FORGED.md" + text.slice(at + "fs.read /work/app/README.md".length));

        let shown = "";
        const found = await showAuditLogFile(fd, { format: "text", header: "header\n" }, { verifiedThrough: report.lines, signedAsFound: [], lines: report.lines, problems: new Map(), beingWritten: null }, checked, {
          write: (more) => {
            shown += more;
            return null;
          },
          unreadable: () => undefined,
        });
        expect(found.unchanged).toBe(false);
        expect(shown).not.toContain("FORGED");
        const rows = shown.trimEnd().split("\n");
        expect(rows[1]).toMatch(/^ +1 {2}\S+ {2}evaluation-started /);
        expect(rows.length).toBeGreaterThan(100);
        expect(rows.length).toBeLessThan(report.lines);
        expect(rows.at(-1)).toMatch(/^!+ {2}the log changed between checking it and showing it: it reads differently from here on/);
      } finally {
        closeSync(fd);
      }
    } finally {
      ctx.cleanup();
    }
  });
});
