// A directory on the way to the audit log swapped for a link between the moment tacit finds
// the log's real path and the moment it opens it (runner/audit/log.ts, AuditLog.open). The open
// followed the new link, and the check after it (the file at the real path is the file opened)
// followed it too, so tacit appended the log's lines, which quote what scripts ask for, in the
// directory the link's maker chose. Now the log is opened in its directory as opened and checked
// (fs/checked-open.ts openInVerifiedDirectory), so nothing is even created there. Whoever can write a directory on its way (a confined command
// of another run, with the log's directory in its roots) could do so.
//
// The moment cannot be hit from outside but by luck, so here tacit is held in it: the writer's
// lock in tacit's home (which the attacker cannot write; the test can) is a FIFO, which tacit
// reads, as a lock left behind, after finding the real path and before opening the log.

import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, symlinkSync, unlinkSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadOrCreateSigningKey } from "../../runner/audit/keys.js";
import { writerLockFor } from "../../runner/audit/log.js";
import { openedToRead } from "../fifo.js";
import { tacitBin } from "../helpers.js";
import { auditHome } from "./fixtures.js";

describe("a directory on the way to the audit log, swapped for a link while tacit opens it", () => {
  let ctx: ReturnType<typeof auditHome>;
  beforeEach(() => {
    ctx = auditHome();
  });
  afterEach(() => ctx.cleanup());

  it("is refused before anything is written: the log's lines do not land where the link leads", async () => {
    const logs = path.join(ctx.dir, "logs");
    const elsewhere = path.join(ctx.dir, "elsewhere");
    mkdirSync(logs);
    mkdirSync(elsewhere);
    const log = path.join(logs, "audit.jsonl");
    const realLog = path.join(realpathSync(logs), "audit.jsonl");
    // The key the run signs with, and its writer's lock for this log as a FIFO (see above).
    const key = loadOrCreateSigningKey(ctx.keyFile);
    const lock = writerLockFor(key.file, realLog);
    mkdirSync(path.dirname(lock), { recursive: true, mode: 0o700 });
    execFileSync("mkfifo", ["-m", "600", lock]);
    const script = 'requestExecPermission(["echo"], (proc) => println(proc.exec("echo", ["$(touch planted-ran)"]).stdout));\n';
    const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--command-permissions", "echo", "--audit-log", log, "-"], {
      cwd: ctx.dir,
      env: { ...process.env, ...ctx.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin!.end(script);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr!.on("data", (chunk: Buffer) => err.push(chunk));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      // tacit has found the log's real path and reads its lock, waiting for what the FIFO's writer
      // sends: meanwhile the directory is swapped. The FIFO goes, and tacit reads nothing: an
      // empty lock, released, and gone when it looks again, so it takes the lock and opens the log.
      const writer = await openedToRead(lock);
      renameSync(logs, `${logs}-old`);
      symlinkSync(elsewhere, logs);
      unlinkSync(lock);
      closeSync(writer);
      const code = await exited;
      const stderr = Buffer.concat(err).toString();
      const landed = path.join(elsewhere, "audit.jsonl");
      expect(existsSync(landed) ? readFileSync(landed, "utf8") : "", "the log's lines where the link leads").toBe("");
      expect(existsSync(landed), "a log file made where the link leads").toBe(false);
      expect({ code, stdout: Buffer.concat(out).toString() }, stderr).toEqual({ code: 2, stdout: "" });
      expect(stderr).toContain(`tacit: the audit log ${log} changed while tacit opened it: ${path.dirname(realLog)} is now a symbolic link`);
      expect(stderr).toContain("Keep the log's directory out of the allowed roots, and start tacit again.");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
