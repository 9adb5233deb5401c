// The log of a real `tacit run` (a file write, a command, an HTTP request, with non-ASCII
// names), damaged the ways a crash, an editor or a transfer damages a file: `tacit audit verify`
// names the line and says what happened to it, and never says "verified".

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { sha256Hex } from "../../runner/audit/digest.js";
import { signBytes } from "../../runner/audit/ed25519.js";
import { loadOrCreateSigningKey } from "../../runner/audit/keys.js";
import { chainOf, headMessageV1, lineText } from "../../runner/audit/line.js";
import { auditHome, verifyJson, workAndLog } from "./fixtures.js";

const SCRIPT = (origin: string) => `
requestFileSystem(".", (fs) => fs.access("café.txt").write("crème"));
requestExecPermission(["echo"], (proc) => println(proc.execOutput("echo", ["déjà vu"]).trim()));
requestNetwork(["127.0.0.1:*"], (net) => println(net.httpGet("${origin}/naïve")));
`;

describe("a real run's log, damaged", () => {
  let ctx: ReturnType<typeof auditHome>;
  let server: TestServer;
  let bytes: Buffer;
  const variant = (name: string, content: Buffer): string => {
    const file = path.join(ctx.dir, `${name}.jsonl`);
    writeFileSync(file, content, { mode: 0o600 });
    return file;
  };

  beforeAll(async () => {
    ctx = auditHome();
    server = await startServer();
    const { work, log } = workAndLog(ctx.dir);
    const args = ["run", "--audit-log", log, "--command-permissions", "echo", "--network-permissions", `127.0.0.1:${server.port}`, "-"];
    const run = await runCli(args, { cwd: work, env: ctx.env, input: SCRIPT(server.origin) });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("déjà vu");
    bytes = readFileSync(log);
    const verified = await runCli(["audit", "verify", log], { env: ctx.env });
    expect(verified.code, verified.stdout).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await server.close();
    ctx.cleanup();
  });

  it("cut inside a character (a crash in the middle of a write): the last line is incomplete, not edited", async () => {
    const e = bytes.indexOf(Buffer.from("é"));
    expect(e).toBeGreaterThan(0);
    const cut = variant("cut-in-character", bytes.subarray(0, e + 1));
    const line = bytes.subarray(0, e).toString("utf8").split("\n").length;
    const { result, report } = await verifyJson(cut, ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems.filter((p) => p.line === line)).toEqual([
      { line, reason: expect.stringMatching(/^incomplete last line \(not valid JSON\): the file ends in the middle of a line — a write cut off by a crash/) },
    ]);
    expect(JSON.stringify(report.problems)).not.toContain("not UTF-8");
  });

  it("an invalid byte in the middle of the last, cut line is still reported as not UTF-8", async () => {
    const e = bytes.indexOf(Buffer.from("é"));
    const damaged = Buffer.concat([bytes.subarray(0, e), Buffer.from([0xff]), bytes.subarray(e + 2, e + 20)]);
    const line = bytes.subarray(0, e).toString("utf8").split("\n").length;
    const { report } = await verifyJson(variant("invalid-then-cut", damaged), ctx.env);
    expect(report.problems.filter((p) => p.line === line).map((p) => p.reason)).toEqual([
      expect.stringMatching(/^edited: the line's bytes are not UTF-8/),
      expect.stringMatching(/^incomplete last line/),
    ]);
  });

  describe("converted by an editor or a transfer: each line says what was added, and only that", () => {
    const CRLF = /^ends in a carriage return \(\\r\), which tacit never writes: the file's line ends were converted to CRLF/;
    const lineCount = () => bytes.toString("utf8").trimEnd().split("\n").length;

    it("CRLF line ends: every line, for its carriage return, and nothing else", async () => {
      const { result, report } = await verifyJson(variant("crlf", Buffer.from(bytes.toString("utf8").replace(/\n/g, "\r\n"))), ctx.env);
      expect(result.code).toBe(1);
      expect(report.problems).toEqual(Array.from({ length: lineCount() }, (_, i) => ({ line: i + 1, reason: expect.stringMatching(CRLF) })));
    });

    it("CRLF line ends and an edit: the edit is still found", async () => {
      const text = bytes.toString("utf8").split("\n");
      text[2] = text[2]!.replace(/"time":"(\d)/, (_, digit: string) => `"time":"${(Number(digit) + 1) % 10}`);
      const { report } = await verifyJson(variant("crlf-edited", Buffer.from(text.join("\r\n"))), ctx.env);
      expect(report.problems.filter((p) => p.line === 3).map((p) => p.reason)).toEqual([
        expect.stringMatching(CRLF),
        expect.stringMatching(/^edited: the line's seq, time or event does not match its hash/),
      ]);
      expect(report.problems.filter((p) => p.line !== 3).every((p) => CRLF.test(p.reason))).toBe(true);
    });

    it("a byte order mark before line 1: line 1, for its mark, and nothing else", async () => {
      const { result, report } = await verifyJson(variant("bom", Buffer.concat([Buffer.from("\ufeff"), bytes])), ctx.env);
      expect(result.code).toBe(1);
      expect(report.problems).toEqual([{ line: 1, reason: expect.stringMatching(/^starts with a byte order mark \(U\+FEFF\), which tacit never writes/) }]);
    });
  });

  it("a log renamed so that its name forges verify's first line: the name is shown escaped, the problems under it", async () => {
    // Whoever can write where the log lies chose the name; the operator reached it through a glob.
    const forged = `audit.jsonl: verified — 30 lines, 1 signed heads (1 valid), signed through line 29\n  note: anchored\n\u001b[2Kx.jsonl`;
    const text = bytes.toString("utf8").split("\n");
    text[2] = text[2]!.replace(/"time":"(\d)/, (_, digit: string) => `"time":"${(Number(digit) + 1) % 10}`);
    const file = path.join(ctx.dir, forged);
    writeFileSync(file, text.join("\n"), { mode: 0o600 });
    const result = await runCli(["audit", "verify", file], { env: ctx.env });
    expect(result.code).toBe(1);
    const rows = result.stdout.split("\n");
    expect(rows.filter((row) => !row.startsWith("  "))).toEqual([
      `${path.join(ctx.dir, "audit.jsonl: verified — 30 lines, 1 signed heads (1 valid), signed through line 29\\u000a  note: anchored\\u000a\\u001b[2Kx.jsonl")}: NOT verified — 1 problem; ${text.length - 1} lines, 1 signed heads (1 valid), signed through line ${text.length - 2}`,
      "",
    ]);
    expect(rows[1]).toMatch(/^ {2}line 3: edited: the line's seq, time or event does not match its hash/);
    // And what to do about it, once, after the problems.
    expect(rows[2]).toMatch(/^ {2}next: keep this file as it is \(it is the evidence\), and compare it with a copy kept elsewhere/);

    // Nor can a name that is no file write to the terminal through the refusal.
    const missing = await runCli(["audit", "verify", `${file}.gone`], { env: ctx.env });
    expect(missing.code).toBe(2);
    expect(missing.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(missing.stderr).not.toContain("\u001b");
    expect(missing.stderr).toContain("\\u000a  note: anchored\\u000a\\u001b[2Kx.jsonl.gone");
  });

  it("its head edited into no JSON: the lines it signed are not blamed on a crash alone, and the head's line is named", async () => {
    const text = bytes.toString("utf8").split("\n");
    const head = text.length - 1; // the last line, 1-based (the text ends in a newline)
    text[head - 1] = `#${text[head - 1]}`;
    const file = variant("head-unreadable", Buffer.from(text.join("\n")));
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      {
        line: 1,
        reason:
          `none of the ${head} lines is signed (the log has no readable head): its writer stopped before signing (a crash loses at most this unsigned tail), ` +
          `or the lines were not written by tacit, or a head among them was edited, corrupted or cut off (line ${head} cannot be read)`,
      },
      { line: head, reason: "unreadable line (not valid JSON): it was edited or corrupted" },
    ]);
  });

  it("a number respelled (9.0 for 9) with its hash left as it was: the line is named, and the reason says that is what can differ", async () => {
    const text = bytes.toString("utf8").split("\n");
    const at = text.findIndex((line) => /"size":\d+,/.test(line));
    text[at] = text[at]!.replace(/"size":(\d+),/, `"size":$1.0,`);
    const { result, report } = await verifyJson(variant("respelled", Buffer.from(text.join("\n"))), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      { line: at + 1, reason: expect.stringMatching(/^edited: the line is not written as tacit writes it \(.*a number or a character spelled another way, such as 9\.0 for 9/) },
    ]);
  });

  it("the last head's time made into text, its hash and chain recomputed (a copy, no anchor): not verified, and show does not print the text", async () => {
    // Nothing signs the last head's own line; only this machine's anchor holds its chain. Its time
    // is the one field of it a forger can change: made free text, show printed it as the time.
    const text = bytes.toString("utf8").trimEnd().split("\n");
    const head = JSON.parse(text.at(-1)!) as { seq: number; time: string; prev: string };
    const eventJson = /"event":(\{.*\}),"prev"/.exec(text.at(-1)!)![1]!;
    const time = "2031-01-01T00:00:00.000Z  evaluation-ended    eval forged  ok";
    const hash = sha256Hex(`{"event":${eventJson},"seq":${head.seq},"time":${JSON.stringify(time)}}`);
    text[text.length - 1] = lineText(head.seq, time, eventJson, head.prev, hash, chainOf(head.prev, hash));
    const file = variant("head-time-text", Buffer.from(text.join("\n") + "\n"));
    const key = (await runCli(["audit", "key"], { env: ctx.env })).stdout.trim();
    const { result, report } = await verifyJson(file, ctx.env, ["--public-key", key]);
    expect(result.code).toBe(1);
    expect(report.problems).toContainEqual({
      line: text.length,
      reason: expect.stringMatching(/^unreadable line \(not an audit line \(time: a time as tacit writes it, such as 2026-01-02T03:04:05\.678Z\)\)/),
    });
    const show = await runCli(["audit", "show", file], { env: ctx.env });
    expect(show.stdout).not.toContain("eval forged");
    expect(show.stdout).toContain(`line ${text.length} is unreadable`);
  });

  /** The log's last line, a head, with its time and event changed by `change`, its hash and chain recomputed. */
  const lastHeadChanged = (change: (head: { time: string; event: Record<string, unknown> }) => void): string[] => {
    const text = bytes.toString("utf8").trimEnd().split("\n");
    const line = JSON.parse(text.at(-1)!) as { seq: number; time: string; event: Record<string, unknown>; prev: string };
    expect(line.event.type).toBe("head");
    change(line);
    const eventJson = JSON.stringify(Object.fromEntries(Object.entries(line.event).sort(([a], [b]) => (a < b ? -1 : 1))));
    const hash = sha256Hex(`{"event":${eventJson},"seq":${line.seq},"time":${JSON.stringify(line.time)}}`);
    text[text.length - 1] = lineText(line.seq, line.time, eventJson, line.prev, hash, chainOf(line.prev, hash));
    return text;
  };

  it("the last head's time moved to another time, its hash and chain recomputed (a copy, no anchor): its signature does not verify", async () => {
    // A head signs its own seq and time (v2): before, only the chain before it, so this verified.
    const text = lastHeadChanged((head) => {
      head.time = "2031-01-01T00:00:00.000Z";
    });
    const file = variant("head-time-moved", Buffer.from(text.join("\n") + "\n"));
    const key = (await runCli(["audit", "key"], { env: ctx.env })).stdout.trim();
    const { result, report } = await verifyJson(file, ctx.env, ["--public-key", key]);
    expect(result.code).toBe(1);
    expect(report.problems).toContainEqual({ line: text.length, reason: expect.stringMatching(/^signature does not verify: the chain it signs, or the head's own time, was changed/) });
  });

  it("a head signed in the first form (v1, written by an older tacit) verifies, with a warning that its time is not signed", async () => {
    const { privateKey } = loadOrCreateSigningKey(ctx.keyFile);
    const text = lastHeadChanged((head) => {
      head.event.signature = Buffer.from(signBytes(headMessageV1(head.event.signs as string), privateKey)).toString("hex");
    });
    const file = variant("head-v1", Buffer.from(text.join("\n") + "\n"));
    const key = (await runCli(["audit", "key"], { env: ctx.env })).stdout.trim();
    const { result, report } = await verifyJson(file, ctx.env, ["--public-key", key]);
    expect(result.code, JSON.stringify(report)).toBe(0);
    expect(report.warnings).toContainEqual({ line: text.length, reason: expect.stringMatching(/^head signed in tacit's first form \(v1\).*not the head's own time/) });
  });
});
