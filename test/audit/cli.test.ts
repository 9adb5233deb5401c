// `tacit audit key`, `tacit audit show` and the text `tacit audit verify` prints, through the real CLI.

import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { publicKeyOf, toHex } from "../../runner/audit/ed25519.js";
import { AuditLog } from "../../runner/audit/log.js";
import { runCli } from "../helpers.js";
import { auditHome, newPrivateKey, readLines, shownEntries, workAndLog, writeLog } from "./fixtures.js";

describe("tacit audit key", () => {
  let ctx: ReturnType<typeof auditHome>;
  beforeEach(() => {
    ctx = auditHome();
  });
  afterEach(() => ctx.cleanup());

  it("makes the key on first use, owner-only, and prints the same public key after", async () => {
    const first = await runCli(["audit", "key"], { env: ctx.env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^[0-9a-f]{64}\n$/);
    expect(first.stderr).toContain(`the audit signing key was created in ${ctx.keyFile}`);
    expect(statSync(ctx.keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(ctx.home).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(ctx.keyFile, "utf8"))).toMatchObject({ publicKey: first.stdout.trim() });

    const second = await runCli(["audit", "key"], { env: ctx.env });
    expect(second.stdout).toBe(first.stdout);
    expect(second.stderr).toContain(`the audit signing key is in ${ctx.keyFile}`);
  });

  it("is the key logs are signed with", async () => {
    const file = path.join(ctx.dir, "audit.jsonl");
    writeLog(file, ctx.keyFile, 1);
    const key = await runCli(["audit", "key"], { env: ctx.env });
    expect((readLines(file)[10]!.event as { publicKey: string }).publicKey).toBe(key.stdout.trim());
  });

  it("refuses a key file whose public key is not its private key's: a run with --audit-log does nothing and writes no log", async () => {
    await runCli(["audit", "key"], { env: ctx.env });
    // The private key kept, another key's public half put beside it (a planted or corrupted key file).
    const stored = JSON.parse(readFileSync(ctx.keyFile, "utf8")) as { publicKey: string };
    const other = toHex(publicKeyOf(newPrivateKey()));
    writeFileSync(ctx.keyFile, JSON.stringify({ ...stored, publicKey: other }, null, 2) + "\n", { mode: 0o600 });
    const { work, log } = workAndLog(ctx.dir);
    const canary = path.join(work, "written.txt");
    const script = `requestFileSystem(".", (fs) => fs.access("written.txt").write("ran"));`;
    const result = await runCli(["run", "--audit-log", log, "-"], { cwd: work, env: ctx.env, input: script });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`the audit key file ${ctx.keyFile} is inconsistent: its public key does not belong to its private key`);
    expect(existsSync(canary)).toBe(false);
    expect(existsSync(log)).toBe(false);
  });

  it("refuses a key file others can read (exit 2)", async () => {
    await runCli(["audit", "key"], { env: ctx.env });
    chmodSync(ctx.keyFile, 0o640);
    const result = await runCli(["audit", "key"], { env: ctx.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the audit key file .* is accessible to other users \(mode 640\)/);
  });
});

describe("tacit audit show", () => {
  let ctx: ReturnType<typeof auditHome>;
  let file: string;
  beforeEach(() => {
    ctx = auditHome();
    file = path.join(ctx.dir, "audit.jsonl");
    writeLog(file, ctx.keyFile, 1);
  });
  afterEach(() => ctx.cleanup());

  it("prints one readable line per event, heads as what they sign", async () => {
    const result = await runCli(["audit", "show", file], { env: ctx.env });
    expect(result.code, result.stderr).toBe(0);
    // After what verifying it found (test/audit/show-verifies.test.ts), and a blank line.
    expect(result.stdout.split("\n")[0]).toBe(`${file}: verified — 11 lines, 1 signed heads (1 valid), signed through line 10`);
    const rows = result.stdout.slice(result.stdout.indexOf("\n\n") + 2).trimEnd().split("\n");
    expect(rows).toHaveLength(11);
    expect(rows[0]).toMatch(/^ {2}1  \d{4}-\d\d-\d\dT[\d:.]+Z  evaluation-started  eval eval-1  session -  "script\.ts"  code sha256:\w{12}…  policy sha256:\w{12}…$/);
    expect(rows[1]).toMatch(/ {2}2  .*  action-requested    eval eval-1 #1  FsRead  "fs\.read \/work\/app\/README\.md"  tier allow$/);
    expect(rows[5]).toMatch(/decision            eval eval-1 #2  asked → yes  via terminal$/);
    expect(rows[8]).toMatch(/decision            eval eval-1 #3  deny  via policy: "api\.example\.com is not in networkPermissions"$/);
    expect(rows[3]).toMatch(/action-result       eval eval-1 #1  ok  120 B  3 ms  sha256:\w{12}…$/);
    expect(rows[9]).toMatch(/evaluation-ended    eval eval-1  ok  exit 0  412 ms$/);
    expect(rows[10]).toMatch(/head                signed through line 10 \(key [0-9a-f]{16}…\)$/);
  });

  it("--json prints one JSON object: whether it verified, then the lines", async () => {
    const result = await runCli(["audit", "show", file, "--json"], { env: ctx.env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ file, verified: true, verifiedThrough: 11 });
    expect(shownEntries(result.stdout)).toEqual(readLines(file));
  });

  it("escapes control characters that came from agent code", async () => {
    const other = path.join(ctx.dir, "escape.jsonl");
    const log = AuditLog.open(other, { keyFile: ctx.keyFile });
    log.append({ type: "action-requested", evaluation: "e", action: 1, kind: "FsRead", pattern: "fs.read /work/\u001b[2J\u009bx", tier: "allow" });
    log.close();
    const result = await runCli(["audit", "show", other], { env: ctx.env });
    expect(result.stdout).not.toMatch(/[\u001b\u009b]/);
    expect(result.stdout).toContain('"fs.read /work/\\u001b[2J\\u009bx"');
  });

  it("verify and show escape control characters a tamperer put in the log (they would redraw the report)", async () => {
    const lines = readFileSync(file, "utf8").split("\n");
    // An extra key is reported by name: this one would wipe the report's first line and write "verified" there.
    const fake = `\u001b[1A\u001b[2K\r${file}: verified — 11 lines\u001b[8m`;
    lines[2] = `${lines[2]!.slice(0, -1)},${JSON.stringify(fake)}:1}`;
    writeFileSync(file, lines.join("\n"));
    const verify = await runCli(["audit", "verify", file], { env: ctx.env });
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain("line 3: unreadable line");
    expect(verify.stdout).toContain("\\u001b[1A");
    expect(verify.stdout).not.toMatch(/[\u001b\r]/);
    const show = await runCli(["audit", "show", file], { env: ctx.env });
    expect(show.code).toBe(1);
    expect(show.stdout).toContain("line 3 is unreadable");
    expect(show.stdout).not.toMatch(/[\u001b\r]/);
    const json = await runCli(["audit", "show", file, "--json"], { env: ctx.env });
    expect(json.stderr).toContain("line 3 left out");
    expect(json.stderr).not.toMatch(/[\u001b\r]/);
  });

  it("marks unreadable lines and exits 1", async () => {
    writeFileSync(file, readFileSync(file, "utf8") + "{not json\n");
    const result = await runCli(["audit", "show", file], { env: ctx.env });
    expect(result.code).toBe(1);
    const rows = result.stdout.trimEnd().split("\n");
    // The line, then what verifying found there: it is unreadable, and no head signs it.
    expect(rows.at(-3)).toBe("UNVERIFIED  !!!  line 12 is unreadable: not valid JSON");
    expect(rows.at(-2)).toBe("                 ^ line 12: unreadable line (not valid JSON): it was edited or corrupted");
    expect(rows.at(-1)).toMatch(/^ {17}\^ line 12: 1 line after the last signed head at line 11 is not signed: /);
  });
});
