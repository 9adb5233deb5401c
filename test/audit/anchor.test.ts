// The anchor: each signed head is recorded in the tacit home, outside the log, so a log cut
// right after a signed head (which is a shorter log whose chain and signatures all check) is
// caught by `tacit audit verify` and refused by the next writer. Through the real CLI, with
// logs written by real `tacit run`s.

import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AnchorStore, anchorsDirFor, realLogPath } from "../../runner/audit/anchor.js";
import { AuditLog } from "../../runner/audit/log.js";
import { runCli, unchecked } from "../helpers.js";
import { auditedWork, auditHome, evaluationEvents, type Line, publicKeyHex, readLines, rechain, verifyJson, writeLines } from "./fixtures.js";

describe("the anchor of an audit log", () => {
  let ctx: ReturnType<typeof auditHome>;
  let work: string;
  let log: string;
  /** Line numbers of the heads, 1-based. */
  const headsOf = (lines: Line[]) => lines.flatMap((line, i) => (line.event.type === "head" ? [i + 1] : []));
  const run = (file = log) => runCli(unchecked(["run", "--audit-log", file, "script.ts"]), { cwd: work, env: ctx.env });
  const anchorsDir = () => path.join(ctx.home, "audit-anchors");

  /** Where the state after the three runs is kept, so that each test starts from it. */
  let snapshot: string;
  /** What a test may have made beside the log and the home (removed before the next). */
  const madeByTests = () => [path.join(ctx.dir, "archive"), path.join(ctx.dir, "another-machine")];

  // Three real runs write the log and its anchor once; each test then starts from a byte-for-byte
  // copy of that state at the same paths (anchors name the log's real path, so the paths must
  // not change), rather than from three runs of its own.
  beforeAll(async () => {
    // The log outside the allowed root (the working directory), as the README advises.
    ({ work, log, ...ctx } = auditedWork());
    for (let i = 0; i < 3; i++) {
      const result = await run();
      expect(result.code, result.stderr).toBe(0);
    }
    snapshot = path.join(ctx.dir, "snapshot");
    cpSync(ctx.home, path.join(snapshot, "home"), { recursive: true });
    cpSync(path.dirname(log), path.join(snapshot, "logs"), { recursive: true });
  });
  beforeEach(() => {
    for (const made of [ctx.home, path.dirname(log), ...madeByTests()]) rmSync(made, { recursive: true, force: true });
    cpSync(path.join(snapshot, "home"), ctx.home, { recursive: true });
    cpSync(path.join(snapshot, "logs"), path.dirname(log), { recursive: true });
  });
  afterAll(() => ctx.cleanup());

  it("an untouched log verifies, anchored at its last head", async () => {
    const lines = readLines(log);
    const heads = headsOf(lines);
    expect(heads).toHaveLength(3);
    expect(heads.at(-1)).toBe(lines.length);
    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report).toMatchObject({ ok: true, problems: [], warnings: [] });
    expect(report.anchor).toEqual({
      status: "anchored",
      head: { line: lines.length, chain: lines.at(-1)!.chain, time: lines.at(-1)!.time },
      source: expect.stringMatching(new RegExp(`^${anchorsDir()}/[0-9a-f]{32}\\.json$`)),
    });
    const text = await runCli(["audit", "verify", log], { env: ctx.env });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`note: anchored: this machine signed a head at line ${lines.length}`);
  });

  it("keeps the record owner-only (0600) in the owner-only tacit home (0700), and it names the last head", () => {
    const lines = readLines(log);
    expect(statSync(ctx.home).mode & 0o777).toBe(0o700);
    expect(statSync(anchorsDir()).mode & 0o777).toBe(0o700);
    const files = readdirSync(anchorsDir());
    expect(files).toEqual([expect.stringMatching(/^[0-9a-f]{32}\.json$/)]); // no temporary file left behind
    const file = path.join(anchorsDir(), files[0]!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      format: "tacit-audit-anchor-v1",
      log: realLogPath(log),
      firstChain: lines[0]!.chain,
      seq: lines.length,
      chain: lines.at(-1)!.chain,
      offset: statSync(log).size,
      time: lines.at(-1)!.time,
      publicKey: publicKeyHex(ctx.keyFile),
    });
  });

  it("a log cut right after a signed head: verify reports the cut, and the next writer refuses it", async () => {
    const lines = readLines(log);
    const first = headsOf(lines)[0]!;
    writeLines(log, lines.slice(0, first)); // everything after the first head cut off
    const cut = readFileSync(log, "utf8");

    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      {
        line: first,
        reason: expect.stringMatching(
          new RegExp(`^truncated: this machine signed a head at line ${lines.length} \\(chain ${lines.at(-1)!.chain.slice(0, 12)}…, at .*\\), the file ends at line ${first}; `),
        ),
      },
    ]);
    expect(report.anchor.status).toBe("truncated");
    const text = await runCli(["audit", "verify", log], { env: ctx.env });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`line ${first}: truncated: this machine signed a head at line ${lines.length} (chain `);

    const next = await run();
    expect(next.code).toBe(2);
    expect(next.stdout).toBe("");
    expect(next.stderr).toMatch(
      new RegExp(`this machine signed a head at line ${lines.length} of the audit log ${log} .* but the file now ends at line ${first} .*: it was truncated after tacit wrote it`),
    );
    expect(next.stderr).toContain(`Run \`tacit audit verify ${log}\``);
    expect(next.stderr).toContain("keep the file as it is");
    expect(next.stderr).toContain("give tacit a new audit log file");
    expect(readFileSync(log, "utf8")).toBe(cut); // nothing appended to the cut file
  });

  it("a log whose name is swapped for a link to a cut copy: verify reports the cut, and the next writer refuses it", async () => {
    // A second security review: the record was kept under the real path only, so pointing the
    // log's name at a cut copy left no record to compare, and a writer continued the copy.
    const lines = readLines(log);
    const first = headsOf(lines)[0]!;
    const copy = path.join(path.dirname(log), ".cut-copy");
    writeLines(copy, lines.slice(0, first));
    rmSync(log);
    symlinkSync(path.basename(copy), log);
    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code).toBe(1);
    expect(report.anchor.status).toBe("truncated");
    const next = await run();
    expect(next.code).toBe(2);
    expect(next.stderr).toMatch(/it was truncated after tacit wrote it/);
    expect(readLines(copy)).toHaveLength(first);
  });

  it("a log cut and continued by a forger: verify reports the recorded head's line as rewritten, and the writer refuses", async () => {
    const lines = readLines(log);
    const first = headsOf(lines)[0]!;
    // Cut after the first head, then the same number of lines again, chained on from there
    // (a forger has no key to sign with, so its heads keep stale signatures).
    const forged = rechain(
      [...lines.slice(0, first), ...lines.slice(first).map((line) => ({ ...line, time: "2020-01-01T00:00:00.000Z" }))],
      first,
    );
    writeLines(log, forged);

    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code).toBe(1);
    expect(report.anchor.status).toBe("rewritten");
    expect(report.problems).toContainEqual({
      line: lines.length,
      reason: expect.stringMatching(new RegExp(`^rewritten: this machine signed a head at line ${lines.length} \\(chain .*\\), but line ${lines.length} of the file is seq ${lines.length} with chain `)),
    });

    const next = await run();
    expect(next.code).toBe(2);
    expect(next.stderr).toMatch(/where that head ended \(byte \d+\) the file now has seq \d+ with chain [0-9a-f]{12}…: it was rewritten/);
  });

  it("a log moved elsewhere still verifies, reported as unanchored (naming the record it came from); its old name is not reused", async () => {
    const lines = readLines(log);
    const moved = path.join(ctx.dir, "archive", "audit-1.jsonl");
    mkdirSync(path.dirname(moved));
    renameSync(log, moved);

    const { result, report } = await verifyJson(moved, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.anchor).toEqual({ status: "unanchored", head: null, source: expect.stringContaining("this machine has no record of signing heads in") });
    // The record it came from is named (below), so it is not said to be missing.
    expect(report.warnings).toEqual([]);
    const notes = report.notes.join("\n");
    expect(notes).toContain("a cut right after a signed head cannot be detected without the writer's record of its last head");
    expect(notes).toContain(`is for a log with the same first line at ${realLogPath(log)} (a head at line ${lines.length}`);
    expect(notes).toContain("if this file was moved or copied from there, it holds that head");

    // A new log under the old name would hide what happened to the old one.
    const next = await run();
    expect(next.code).toBe(2);
    expect(next.stderr).toMatch(/but there is no such file any more: it was deleted or moved away/);
    expect(next.stderr).toMatch(/If you moved it yourself \(log rotation\).* or delete .*audit-anchors\/[0-9a-f]{32}\.json to start a new log under this name/);

    // Continued where it is now, it is anchored there; the writer says where it came from.
    const continued = await run(moved);
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stderr).toContain(`has lines, but this machine has no record of the last head signed in it`);
    expect(continued.stderr).toContain(`it was moved or copied here from ${realLogPath(log)}`);
    const after = await verifyJson(moved, ctx.env);
    expect(after.result.code, after.result.stdout).toBe(0);
    expect(after.report.anchor.status).toBe("anchored");
  });

  it("the record deleted: verify still verifies the log, but warns at its last head that this machine signed it and has no record of it", async () => {
    const lines = readLines(log);
    for (const name of readdirSync(anchorsDir())) rmSync(path.join(anchorsDir(), name));

    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, result.stdout).toBe(0); // its chain and signatures are intact: what is lost is the check for a cut
    expect(report.anchor.status).toBe("unanchored");
    const missing = /^this log's heads are signed with this machine's key, but this machine has no record of the last head it signed in it: the record was deleted/;
    expect(report.warnings).toEqual([{ line: lines.length, reason: expect.stringMatching(missing) }]);
    const text = await runCli(["audit", "verify", log], { env: ctx.env });
    expect(text.stdout).toContain(`  warning, line ${lines.length}: this log's heads are signed with this machine's key, but this machine has no record`);

    // Cut after its first head as well: the cut itself cannot be seen, but the missing record still is.
    writeLines(log, lines.slice(0, headsOf(lines)[0]));
    const cut = await verifyJson(log, ctx.env);
    expect(cut.result.code).toBe(0);
    expect(cut.report.warnings).toEqual([{ line: headsOf(lines)[0], reason: expect.stringMatching(missing) }]);

    // The next writer continues it (deleting the record is what an operator is told to do with an unusable
    // one), but says so: anchored again from its next head, the log keeps no trace of the deletion.
    const next = await run();
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(
      `tacit: the audit log ${log} has lines, but this machine has no record of the last head signed in it (${anchorsDir()}/`,
    );
    expect(next.stderr).toContain("the record was deleted (by hand, or by a clean-up of tacit's home)");
    expect((await verifyJson(log, ctx.env)).report.anchor.status).toBe("anchored");
    expect((await run()).stderr).not.toContain("no record of the last head");
  });

  it("with --public-key: this machine's own record is used; elsewhere, the report says a cut after a head cannot be detected", async () => {
    const lines = readLines(log);
    const key = publicKeyHex(ctx.keyFile);
    const own = await verifyJson(log, ctx.env, ["--public-key", key]);
    expect(own.result.code).toBe(0);
    expect(own.report.anchor.status).toBe("anchored");

    writeLines(log, lines.slice(0, headsOf(lines)[0])); // cut after the first head
    const elsewhere = await verifyJson(log, { TACIT_HOME: path.join(ctx.dir, "another-machine") }, ["--public-key", key]);
    expect(elsewhere.result.code, elsewhere.result.stdout).toBe(0); // all it can tell: the remaining lines are intact
    expect(elsewhere.report.anchor.status).toBe("unanchored");
    expect(elsewhere.report.notes.join("\n")).toMatch(
      /^unanchored: this machine has no record of signing heads in .*; a cut right after a signed head cannot be detected without the writer's record of its last head$/m,
    );
  });

  it("an unusable record stops the writer (saying what to do) and leaves verify unanchored", async () => {
    const [name] = readdirSync(anchorsDir());
    const record = path.join(anchorsDir(), name!);
    writeFileSync(record, ""); // what a crash on a file system without ordered renames can leave
    const next = await run();
    expect(next.code).toBe(2);
    expect(next.stderr).toMatch(/the audit anchor .* is not valid JSON \(it is empty: a system crash can leave it so\)\. It records the last head/);
    expect(next.stderr).toContain(`delete ${record} (the log is anchored again from its next signed head)`);
    const { report } = await verifyJson(log, ctx.env);
    expect(report.anchor.status).toBe("unanchored");
    expect(report.anchor.source).toMatch(/this machine's record for it is unusable/);

    writeFileSync(record, readFileSync(log, "utf8").split("\n")[0]!); // not a record
    chmodSync(record, 0o600);
    expect((await run()).stderr).toMatch(/is not a tacit audit anchor/);
  });
});

describe("recording heads", () => {
  let ctx: ReturnType<typeof auditHome>;
  beforeEach(() => {
    ctx = auditHome();
  });
  afterEach(() => ctx.cleanup());

  // Its cost is measured in the audit benchmark's fixed part (npm run bench), not here.
  it("keeps one record per log, rewritten to follow the newest head", () => {
    const file = path.join(ctx.dir, "heads.jsonl");
    const HEADS = 20;
    const log = AuditLog.open(file, { keyFile: ctx.keyFile });
    const [event] = evaluationEvents("heads");
    try {
      for (let i = 0; i < HEADS; i++) {
        log.append(event!);
        log.signHead(); // signs, writes, fsyncs the log, records the head
      }
    } finally {
      log.close();
    }
    const store = new AnchorStore(anchorsDirFor(ctx.keyFile));
    const record = JSON.parse(readFileSync(store.fileFor(realLogPath(file)), "utf8")) as Parameters<AnchorStore["write"]>[0];
    expect(record.seq).toBe(2 * HEADS);
    expect(readdirSync(store.dir)).toHaveLength(1);
  });
});
