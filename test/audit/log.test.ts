// The writer: owner-only files, one chain across sessions, a crash's unsigned tail marked on
// reopening, periodic signing, the lock, and the refusals (with what to do about them).

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AUDIT_DRAIN_DELAY_MS, AuditLog, AuditLogError, writerLockFor } from "../../runner/audit/log.js";
import { runCli } from "../helpers.js";
import { auditHome, crashWhileWriting, evaluationEvents, readLines, rehash, verifyJson, writeLines, writeLog } from "./fixtures.js";

describe("AuditLog", () => {
  let ctx: ReturnType<typeof auditHome>;
  let file: string;
  beforeEach(() => {
    ctx = auditHome();
    file = path.join(ctx.dir, "logs", "audit.jsonl");
  });
  /** The writer's lock of `file`, in tacit's home beside the key (the test's dir is a real path). */
  const lockOf = (): string => writerLockFor(ctx.keyFile, file);
  afterEach(() => ctx.cleanup());

  const openError = (options = {}): string => {
    try {
      AuditLog.open(file, { keyFile: ctx.keyFile, ...options }).close();
    } catch (error) {
      expect(error).toBeInstanceOf(AuditLogError);
      return (error as Error).message;
    }
    throw new Error("AuditLog.open did not refuse");
  };

  it("creates the log and the key owner-only (0600, home 0700)", () => {
    writeLog(file, ctx.keyFile, 1);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(ctx.keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(ctx.home).mode & 0o777).toBe(0o700);
    expect(existsSync(lockOf())).toBe(false);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("continues the chain when a second session appends", async () => {
    writeLog(file, ctx.keyFile, 2);
    writeLog(file, ctx.keyFile, 1);
    const lines = readLines(file);
    expect(lines.map((line) => line.seq)).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
    expect(lines[22]!.prev).toBe(lines[21]!.chain);
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report).toMatchObject({ ok: true, lines: 33, heads: 3, validHeads: 3, lastSignedLine: 32, warnings: [] });
  });

  it("writes events holding multi-byte text whole, across batches, and the log verifies", async () => {
    const log = AuditLog.open(file, { keyFile: ctx.keyFile });
    // More than one batch (256 lines) of lines longer in bytes than in UTF-16 units.
    for (let i = 0; i < 600; i++) {
      log.append({ action: i, evaluation: "e", kind: "FsRead", pattern: `fs.read /tmp/ä/ü/😀/${i}`, tier: "allow", type: "action-requested" });
    }
    log.close();
    const lines = readLines(file);
    expect(lines).toHaveLength(601);
    expect(lines[599]!.event).toMatchObject({ pattern: "fs.read /tmp/ä/ü/😀/599" });
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report).toMatchObject({ ok: true, lines: 601, heads: 1, validHeads: 1, warnings: [] });
  });

  it("after a crash, marks the unsigned tail it finds before continuing", async () => {
    writeLog(file, ctx.keyFile, 1);
    // A real crash (not lines cut from the file, which the head's record would show as a cut):
    // the second evaluation's lines are written, its head never is.
    crashWhileWriting(file, ctx.keyFile, "eval-2");
    expect(readLines(file)).toHaveLength(21);
    writeLog(file, ctx.keyFile, 1);
    const lines = readLines(file);
    expect(lines[21]!.event).toEqual({ type: "resumed-after-unsigned-tail", lastSeq: 21 });
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report.warnings).toEqual([
      {
        line: 22,
        reason: expect.stringMatching(/^lines 12–21 were not signed by the process that wrote them: the log was reopened here after its writer stopped without signing \(a crash\)/),
      },
    ]);
    const text = (await runCli(["audit", "verify", file], { env: ctx.env })).stdout;
    expect(text).toContain("warning, line 22: lines 12–21 were not signed");
  });

  it("signs a head every signEveryEvents lines", () => {
    const log = AuditLog.open(file, { keyFile: ctx.keyFile, signEveryEvents: 3 });
    for (const event of evaluationEvents("e").slice(0, 7)) log.append(event);
    log.flush(); // lines are made after the current turn of the event loop, and written in batches
    const heads = () => readLines(file).flatMap((line, i) => (line.event.type === "head" ? [i + 1] : []));
    expect(heads()).toEqual([4, 8]);
    log.close();
    expect(heads()).toEqual([4, 8, 10]);
    log.close(); // idempotent
    expect(readLines(file)).toHaveLength(10);
  });

  it("signs a head signIntervalMs after the first unsigned line", async () => {
    const log = AuditLog.open(file, { keyFile: ctx.keyFile, signIntervalMs: 50 });
    try {
      log.append(evaluationEvents("e")[0]!);
      log.flush(); // lines are written in batches; the gate flushes before effects
      expect(readLines(file).at(-1)!.event.type).toBe("evaluation-started");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(readLines(file).map((line) => line.event.type)).toEqual(["evaluation-started", "head"]);
    } finally {
      log.close();
    }
    expect(readLines(file)).toHaveLength(2); // nothing new to sign at close
  });

  it("signHead with nothing new writes nothing", () => {
    const log = AuditLog.open(file, { keyFile: ctx.keyFile });
    log.append(evaluationEvents("e")[0]!);
    log.signHead();
    log.signHead();
    log.close();
    expect(readLines(file).map((line) => line.event.type)).toEqual(["evaluation-started", "head"]);
  });

  it("refuses to continue a log whose last line is incomplete, pointing at tacit audit verify", () => {
    writeLog(file, ctx.keyFile, 1);
    truncateSync(file, statSync(file).size - 10);
    const message = openError();
    expect(message).toMatch(/the last line of the audit log .*audit\.jsonl is incomplete or corrupt \(it does not end with a newline/);
    expect(message).toMatch(/Run `tacit audit verify .*audit\.jsonl` .* give tacit a new audit log file/);
  });

  it("refuses to continue a log whose last line was edited", () => {
    writeLog(file, ctx.keyFile, 1);
    writeFileSync(file, readFileSync(file, "utf8").replace(/"signedSeq":10/, '"signedSeq":9'));
    expect(openError()).toMatch(/incomplete or corrupt \(its hash does not match its content\)/);
  });

  it("refuses a log other users can write to", () => {
    writeLog(file, ctx.keyFile, 1);
    chmodSync(file, 0o666);
    expect(openError()).toMatch(/other users can write to the audit log .* \(mode 666\), so they could have edited it/);
  });

  it("refuses a log signed with another key", () => {
    writeLog(file, ctx.keyFile, 1);
    expect(openError({ keyFile: path.join(ctx.dir, "other-home", "audit-key.json") })).toMatch(/was signed with another key/);
  });

  it("refuses a key file others can read, and says what to do", () => {
    writeLog(file, ctx.keyFile, 1);
    chmodSync(ctx.keyFile, 0o644);
    expect(openError()).toMatch(/accessible to other users \(mode 644\): anyone who can read it can sign forged audit logs\. Run `chmod 600/);
  });

  describe("the lock", () => {
    it("refuses a second writer in the same process", () => {
      const log = AuditLog.open(file, { keyFile: ctx.keyFile });
      try {
        expect(openError()).toMatch(/is already open in this process/);
      } finally {
        log.close();
      }
    });

    it("refuses while a live process holds it, naming the pid and the lock in tacit's home", async () => {
      writeLog(file, ctx.keyFile, 1);
      const holder = spawn("sleep", ["30"], { stdio: "ignore" });
      try {
        writeFileSync(lockOf(), `${holder.pid}\n`);
        expect(openError()).toContain(`is being written by process ${holder.pid} (its lock is ${lockOf()}, in tacit's home)`);
        expect(readLines(file)).toHaveLength(11);
      } finally {
        holder.kill();
      }
    });

    it("takes over a stale lock whose process is gone", async () => {
      writeLog(file, ctx.keyFile, 1);
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      writeFileSync(lockOf(), `${dead}\n`);
      writeLog(file, ctx.keyFile, 1);
      expect(existsSync(lockOf())).toBe(false);
      const { result } = await verifyJson(file, ctx.env);
      expect(result.code, result.stdout).toBe(0);
    });

    it("takes over an empty lock (its content is not fsynced, so a crash can leave it so)", async () => {
      writeLog(file, ctx.keyFile, 1);
      writeFileSync(lockOf(), "");
      writeLog(file, ctx.keyFile, 1);
      expect(existsSync(lockOf())).toBe(false);
      expect(readLines(file)).toHaveLength(22);
      const { result } = await verifyJson(file, ctx.env);
      expect(result.code, result.stdout).toBe(0);
    });

    it("is held in tacit's home while the log is open (owner-only), and released by close", () => {
      const log = AuditLog.open(file, { keyFile: ctx.keyFile });
      expect(readFileSync(lockOf(), "utf8")).toBe(`${process.pid}\n`);
      expect(path.dirname(path.dirname(lockOf()))).toBe(ctx.home);
      expect(statSync(path.dirname(lockOf())).mode & 0o777).toBe(0o700);
      expect(statSync(lockOf()).mode & 0o777).toBe(0o600);
      expect(existsSync(`${file}.lock`)).toBe(false);
      log.close();
      expect(existsSync(lockOf())).toBe(false);
    });

    it("is one lock for every name of the log: a second writer by a link to its directory is refused", () => {
      const log = AuditLog.open(file, { keyFile: ctx.keyFile });
      try {
        const link = path.join(ctx.dir, "logs-link");
        symlinkSync(path.dirname(file), link);
        const other = path.join(link, "audit.jsonl");
        expect(() => AuditLog.open(other, { keyFile: ctx.keyFile })).toThrow(/is already open in this process/);
      } finally {
        log.close();
      }
    });

    it("pays no heed to a lock beside the log: a live pid there keeps no writer off, a dead one makes no tail a crash's", () => {
      writeLog(file, ctx.keyFile, 1);
      writeFileSync(`${file}.lock`, "1\n");
      writeLog(file, ctx.keyFile, 1);
      expect(readLines(file)).toHaveLength(22);
      // Lines no head signs, and a dead writer's lock beside them: still someone else's lines.
      const dead = spawnSync(process.execPath, ["-e", ""]).pid;
      writeFileSync(`${file}.lock`, `${dead}\n`);
      const lines = readLines(file);
      const unsigned = { ...lines.at(-2)!, seq: 23, prev: lines.at(-1)!.chain };
      writeLines(file, [...lines, rehash(unsigned)]);
      expect(openError()).toMatch(/ends in lines no signed head covers \(its last line, seq 23, is not a head\), but no tacit stopped while writing it/);
    });
  });
});

describe("AuditLog: deferred lines", () => {
  let ctx: ReturnType<typeof auditHome>;
  beforeAll(() => {
    ctx = auditHome();
  });
  afterAll(() => ctx.cleanup());

  it("makes lines in append order after the turn (a function event is called then), and keeps each event's own time", async () => {
    const file = path.join(ctx.dir, "deferred.jsonl");
    const log = AuditLog.open(file, { keyFile: ctx.keyFile });
    const events = evaluationEvents("d");
    const [started, requested] = events;
    const ended = events.at(-1);
    let called = 0;
    log.append(started!);
    log.append(() => {
      called++;
      return requested!;
    });
    expect(called).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, AUDIT_DRAIN_DELAY_MS + 20));
    log.append(ended!);
    expect(called).toBe(1);
    log.close();
    const lines = readLines(file);
    expect(lines.map((line) => line.event.type)).toEqual(["evaluation-started", "action-requested", "evaluation-ended", "head"]);
    expect(Date.parse(lines[2]!.time) - Date.parse(lines[1]!.time)).toBeGreaterThanOrEqual(15);
    const { result } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(0);
  });

  it("ready() leaves room for one more event without writing, keeps an event's given time, and refuses once closed", () => {
    const file = path.join(ctx.dir, "ready.jsonl");
    const log = AuditLog.open(file, { keyFile: ctx.keyFile });
    const [started, requested] = evaluationEvents("r");
    // A full batch less one is pending: ready() makes their lines now, so the next append makes none.
    for (let i = 0; i < 255; i++) log.append(started!);
    log.ready();
    let called = 0;
    log.append(() => {
      called++;
      return requested!;
    }, Date.parse("2026-01-02T03:04:05.678Z"));
    expect(called).toBe(0);
    log.close();
    expect(called).toBe(1);
    const lines = readLines(file);
    expect(lines).toHaveLength(257);
    expect(lines[255]).toMatchObject({ time: "2026-01-02T03:04:05.678Z", event: { type: "action-requested" } });
    expect(() => log.ready()).toThrow(AuditLogError);
  });
});
