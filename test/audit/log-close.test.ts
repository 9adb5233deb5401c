// The writer's close reports the log's failure: one a timer's signing met that no later call saw
// (close skipped signing and said nothing, so a tacit serve whose last call had answered exited
// 0), and a file changed after its last signed head (with nothing left to write, close checked
// nothing). tacit serve's exit 2 for both, through the real CLI: test/mcp/audit-log-close.test.ts.

import { appendFileSync, readFileSync, statSync, truncateSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuditLog, AuditLogError } from "../../runner/audit/log.js";
import { auditHome, evaluationEvents } from "./fixtures.js";

describe("AuditLog.close", () => {
  let ctx: ReturnType<typeof auditHome>;
  let file: string;
  beforeEach(() => {
    ctx = auditHome();
    file = path.join(ctx.dir, "logs", "audit.jsonl");
  });
  afterEach(() => ctx.cleanup());

  /** Whether the log has failed, asked the way a caller about to act asks (ready() writes nothing here). */
  const hasFailed = (log: AuditLog): boolean => {
    try {
      log.ready();
      return false;
    } catch (error) {
      expect(error).toBeInstanceOf(AuditLogError);
      return true;
    }
  };

  it("throws the failure its timed signing met, after releasing the file: a writer can open it again", async () => {
    const log = AuditLog.open(file, { keyFile: ctx.keyFile, signIntervalMs: 20 });
    log.append(evaluationEvents("t")[0]!);
    log.flush(); // the line is in the file, unsigned: the timer will sign it
    appendFileSync(file, '{"written by":"another process"}\n');
    for (let i = 0; i < 500 && !hasFailed(log); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(hasFailed(log)).toBe(true);
    // The bad thing: a close that said nothing of it.
    expect(() => log.close()).toThrow(/grew by \d+ bytes that this tacit did not write/);
    expect(() => log.close()).not.toThrow(); // idempotent: said once
    // The file and its lock were released: the next writer's refusal is about the foreign line, not a writer still holding it.
    let reopened = "opened";
    try {
      AuditLog.open(file, { keyFile: ctx.keyFile }).close();
    } catch (error) {
      reopened = (error as Error).message;
    }
    expect(reopened).toContain("is incomplete or corrupt");
  });

  it("throws when the file was cut after its last signed head, though nothing was left to write", () => {
    const log = AuditLog.open(file, { keyFile: ctx.keyFile });
    log.append(evaluationEvents("t")[0]!);
    log.signHead();
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    truncateSync(file, statSync(file).size - Buffer.byteLength(`${lines.at(-1)!}\n`));
    expect(() => log.close()).toThrow(/shrank by \d+ bytes/);
  });

  it("says nothing for a log left as it wrote it", () => {
    const log = AuditLog.open(file, { keyFile: ctx.keyFile });
    log.append(evaluationEvents("t")[0]!);
    log.signHead();
    expect(() => log.close()).not.toThrow();
  });
});
