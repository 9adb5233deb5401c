// `tacit audit verify`: a clean log verifies; each way of tampering with one is caught, on
// the line where it shows, with a reason that says what happened.

import { closeSync, openSync, readFileSync, statSync, truncateSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicKeyOf, toHex } from "../../runner/audit/ed25519.js";
import { verifyAuditLogFile } from "../../runner/audit/verify.js";
import { runCli } from "../helpers.js";
import { type auditHome, cleanLog, type Line, newPrivateKey, publicKeyHex, rechain, rehash, verifyJson, writeVariant } from "./fixtures.js";

describe("tacit audit verify", () => {
  let ctx: ReturnType<typeof auditHome>;
  let original: string;
  let lines: Line[];
  /** Writes a variant of the clean log to its own file. */
  const variant = (name: string, content: Line[] | string): string => writeVariant(ctx.dir, name, content);

  beforeAll(() => ({ ctx, original, lines } = cleanLog()));
  afterAll(() => ctx.cleanup());

  it("verifies a clean log against this machine's key", async () => {
    expect(lines).toHaveLength(22);
    const { result, report } = await verifyJson(original, ctx.env);
    expect(result.code, result.stderr).toBe(0);
    expect(report).toMatchObject({ ok: true, lines: 22, heads: 2, validHeads: 2, lastSignedLine: 21, unsignedTail: 0, trust: "given", problems: [] });
    expect(report.publicKey).toBe(publicKeyHex(ctx.keyFile));
    expect(report.notes.join("\n")).toContain(ctx.keyFile);

    const text = await runCli(["audit", "verify", original], { env: ctx.env });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("verified — 22 lines, 2 signed heads (2 valid), signed through line 21");
  });

  it("an edited field: the line's hash no longer matches", async () => {
    const edited = structuredClone(lines);
    (edited[14]!.event as { size: number }).size = 1; // line 15, a result's size
    const file = variant("edited", edited);
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([{ line: 15, reason: expect.stringMatching(/^edited: the line's seq, time or event does not match its hash/) }]);

    const text = await runCli(["audit", "verify", file], { env: ctx.env });
    expect(text.code).toBe(1);
    expect(text.stdout.split("\n")[0]).toBe(`${file}: NOT verified — 1 problem; 22 lines, 2 signed heads (2 valid), signed through line 21`);
    expect(text.stdout).toContain("line 15: edited");
  });

  it("an edited line with its hash and chain recomputed: the next line's prev breaks", async () => {
    const edited = structuredClone(lines);
    (edited[4]!.event as { pattern: string }).pattern = "exec git log"; // line 5
    edited[4] = rehash(edited[4]!);
    const { result, report } = await verifyJson(variant("rehashed", edited), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([{ line: 6, reason: expect.stringMatching(/^chain broken: prev does not match the chain of line 5; line 5 was rewritten/) }]);
  });

  it("an edited line with only its hash recomputed: its own chain value is wrong", async () => {
    const edited = structuredClone(lines);
    (edited[4]!.event as { pattern: string }).pattern = "exec git log";
    edited[4] = { ...edited[4]!, hash: rehash(edited[4]!).hash };
    const { report } = await verifyJson(variant("hash-only", edited), ctx.env);
    expect(report.problems).toEqual([{ line: 5, reason: expect.stringMatching(/^edited: its chain value does not follow from its prev and hash/) }]);
  });

  it("a deleted line: a seq gap", async () => {
    const { result, report } = await verifyJson(variant("deleted", lines.filter((_, i) => i !== 13)), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      { line: 14, reason: "deleted line: seq jumps from 13 (line 13) to 15; the line with seq 14 is missing" },
    ]);
  });

  describe("a line edited into one that cannot be read: that line is reported, and the next is not said to follow a deleted one", () => {
    const text = () => readFileSync(original, "utf8").split("\n");
    const unreadable = (reason: string) => `unreadable line (${reason}): it was edited or corrupted`;

    it("line 14 made into no JSON", async () => {
      const edited = text();
      edited[13] = `#${edited[13]}`;
      const { result, report } = await verifyJson(variant("unreadable-14", edited.join("\n")), ctx.env);
      expect(result.code).toBe(1);
      expect(report.problems).toEqual([{ line: 14, reason: unreadable("not valid JSON") }]);
    });

    it("lines 14 and 15 given a key tacit never writes", async () => {
      const edited = text();
      for (const at of [13, 14]) edited[at] = edited[at]!.replace(`"prev":`, `"note":"ok","prev":`);
      const { report } = await verifyJson(variant("unreadable-14-15", edited.join("\n")), ctx.env);
      const reason = unreadable(`not an audit line (line: Unrecognized key: "note")`);
      expect(report.problems).toEqual([
        { line: 14, reason },
        { line: 15, reason },
      ]);
    });

    it("a byte order mark put before line 1 (by an editor): line 1 is reported as having one, not deleted", async () => {
      const { result, report } = await verifyJson(variant("bom", `\ufeff${readFileSync(original, "utf8")}`), ctx.env);
      expect(result.code).toBe(1);
      expect(report.problems).toEqual([{ line: 1, reason: expect.stringMatching(/^starts with a byte order mark \(U\+FEFF\), which tacit never writes/) }]);
      expect(report.problems.map((p) => p.reason).join("\n")).not.toMatch(/deleted|missing/);
    });

    it("read a line at a time (a log past the size read whole), the same", () => {
      const edited = text();
      edited[13] = `#${edited[13]}`;
      const file = variant("unreadable-14-streamed", edited.join("\n"));
      const fd = openSync(file, "r");
      try {
        const report = verifyAuditLogFile(fd, publicKeyHex(ctx.keyFile), () => ({ record: null, why: "not used here", sameFirstLine: [] }), 0);
        expect(report.problems).toEqual([{ line: 14, reason: unreadable("not valid JSON") }]);
      } finally {
        closeSync(fd);
      }
    });
  });

  it("two swapped lines: both are out of order", async () => {
    const swapped = [...lines];
    [swapped[13], swapped[14]] = [swapped[14]!, swapped[13]!]; // lines 14 and 15
    const { result, report } = await verifyJson(variant("swapped", swapped), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      { line: 14, reason: "out of order: seq 15 comes before seq 14 (line 15); lines were swapped or moved" },
      { line: 15, reason: "out of order: seq 14 comes after seq 15 (line 14); lines were swapped or moved" },
    ]);
  });

  it("an inserted line, correctly hashed and chained to the line before it", async () => {
    // A forged approval slipped in before the genuine line 14.
    const forged = rehash({
      ...lines[13]!,
      event: { type: "decision", evaluation: "eval-2", action: 1, decision: "asked", answer: "yes", via: "terminal", reason: null },
      prev: lines[12]!.chain,
    });
    const inserted = [...lines.slice(0, 13), forged, ...lines.slice(13)];
    const { result, report } = await verifyJson(variant("inserted", inserted), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      { line: 14, reason: "inserted: line 15 has the same seq (14), and the chain continues from line 15, not from this one" },
    ]);
  });

  it("a forged line appended after the last head: chained correctly, but not signed", async () => {
    const forged = rehash({
      seq: 23,
      time: new Date().toISOString(),
      event: { type: "evaluation-ended", evaluation: "eval-2", outcome: "ok", exitCode: 0, durationMs: 1 },
      prev: lines[21]!.chain,
      hash: "",
      chain: "",
    } as Line);
    const { result, report } = await verifyJson(variant("appended", [...lines, forged]), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      {
        line: 23,
        reason:
          "1 line after the last signed head at line 22 is not signed: written after the last signature (a crash loses at most this tail) or appended later",
      },
    ]);
    expect(report.unsignedTail).toBe(1);
  });

  it("a forged line appended with a wrong prev: the chain breaks too", async () => {
    const forged = rehash({ ...lines[20]!, seq: 23, prev: "f".repeat(64) });
    const { report } = await verifyJson(variant("appended-unchained", [...lines, forged]), ctx.env);
    expect(report.problems.map((p) => [p.line, p.reason.split(":")[0]])).toEqual([
      [23, "chain broken"],
      [23, "1 line after the last signed head at line 22 is not signed"],
    ]);
  });

  it("a truncated file: the cut line is incomplete and what follows the last intact head is unsigned", async () => {
    const file = variant("truncated", readFileSync(original, "utf8"));
    truncateSync(file, statSync(file).size - 40); // into the head on line 22
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      {
        line: 12,
        reason:
          "11 lines after the last signed head at line 11 are not signed: written after the last signature (a crash loses at most this tail) or appended later, " +
          "or a head among them was edited, corrupted or cut off (line 22 cannot be read)",
      },
      { line: 22, reason: expect.stringMatching(/^incomplete last line \(not valid JSON\): the file ends in the middle of a line/) },
    ]);
  });

  it("a tail after the last head (a crash before signing, or lines cut with the head): reported as unsigned", async () => {
    const { report } = await verifyJson(variant("unsigned-tail", lines.slice(0, 21)), ctx.env);
    expect(report).toMatchObject({ ok: false, lines: 21, heads: 1, lastSignedLine: 10, unsignedTail: 10 });
    expect(report.problems).toEqual([
      {
        line: 12,
        reason:
          "10 lines after the last signed head at line 11 are not signed: written after the last signature (a crash loses at most this tail) or appended later",
      },
    ]);
  });

  it("history rewritten and rechained without the key: the heads' signatures fail", async () => {
    const edited = structuredClone(lines);
    (edited[4]!.event as { pattern: string }).pattern = "exec git log";
    const { result, report } = await verifyJson(variant("rechained", rechain(edited, 4)), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([
      { line: 11, reason: expect.stringMatching(/^signature does not verify: the chain it signs, or the head.s own time, was changed after signing/) },
      { line: 22, reason: expect.stringMatching(/^signature does not verify/) },
    ]);
    expect(report.validHeads).toBe(0);
  });

  it("a head edited to sign another line: it no longer signs the line before it", async () => {
    const edited = structuredClone(lines);
    (edited[10]!.event as { signedSeq: number }).signedSeq = 5;
    edited[10] = rehash(edited[10]!);
    const { report } = await verifyJson(variant("head-moved", rechain(edited, 11)), ctx.env);
    // Everything after it is rechained, so the next head's signature fails too.
    expect(report.problems).toEqual([
      { line: 11, reason: expect.stringMatching(/^head does not sign the line before it: it signs seq 5/) },
      { line: 22, reason: expect.stringMatching(/^signature does not verify/) },
    ]);
  });

  describe("history rewritten and re-signed with another key", () => {
    let file: string;
    let attackerKey: string;
    beforeAll(() => {
      const edited = structuredClone(lines);
      (edited[4]!.event as { pattern: string }).pattern = "exec git log";
      const privateKey = newPrivateKey();
      attackerKey = toHex(publicKeyOf(privateKey));
      file = variant("resigned", rechain(edited, 4, privateKey));
    });

    it("is caught against this machine's key", async () => {
      const { result, report } = await verifyJson(file, ctx.env);
      expect(result.code).toBe(1);
      expect(report.problems).toEqual([
        { line: 11, reason: expect.stringMatching(/^signed by a different key \(\w{12}…\) than the trusted one \(\w{12}…\): the log was re-signed with another key/) },
        { line: 22, reason: expect.stringMatching(/^signed by a different key/) },
      ]);
    });

    it("is caught against --public-key", async () => {
      const { report } = await verifyJson(file, { TACIT_HOME: path.join(ctx.dir, "empty-home") }, ["--public-key", publicKeyHex(ctx.keyFile)]);
      expect(report.trust).toBe("given");
      expect(report.problems.map((p) => p.line)).toEqual([11, 22]);
    });

    // A log rewritten and re-signed with the attacker's own key is consistent with itself: with
    // no trusted key that is all that can be checked, and it is not reported as verified.
    it("with no trusted key at all, only self-consistency can be checked: not verified, exit 1", async () => {
      const { result, report } = await verifyJson(file, { TACIT_HOME: path.join(ctx.dir, "empty-home") });
      expect(result.code).toBe(1);
      expect(report).toMatchObject({ ok: true, verified: false, trust: "first-head", publicKey: attackerKey });
      expect(report.notes.join("\n")).toMatch(/consistent with itself, not who signed it/);
      const text = await runCli(["audit", "verify", file], { env: { TACIT_HOME: path.join(ctx.dir, "empty-home") } });
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/: NOT verified — .*no trusted public key.*--public-key KEY/);
      expect(text.stdout).not.toMatch(/: verified/);
      expect(text.stdout).toMatch(/note: no trusted public key was given/);
    });
  });

  // A fifth review emptied a log (truncated to 0 bytes): nothing in it is signed, yet it was
  // "verified" with exit 0, against --public-key or this machine's key alike.
  it("an emptied log: NOT verified, exit 1, against --public-key and against this machine's key", async () => {
    const file = variant("emptied", "");
    for (const [env, args] of [[{ TACIT_HOME: path.join(ctx.dir, "empty-home") }, ["--public-key", publicKeyHex(ctx.keyFile)]], [ctx.env, []]] as const) {
      const { result, report } = await verifyJson(file, env, [...args]);
      expect(result.code).toBe(1);
      expect(report).toMatchObject({ verified: false, lines: 0, validHeads: 0 });
      const text = await runCli(["audit", "verify", ...args, file], { env });
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/: NOT verified — 0 lines.*no line is signed/);
      expect(text.stdout).not.toMatch(/: verified/);
    }
  });

  it("--public-key with another key than the one that signed: every head fails", async () => {
    const other = toHex(publicKeyOf(newPrivateKey()));
    const { result, report } = await verifyJson(original, ctx.env, ["--public-key", other]);
    expect(result.code).toBe(1);
    const reason = expect.stringContaining(`signed by a different key (${publicKeyHex(ctx.keyFile).slice(0, 12)}…) than the trusted one (${other.slice(0, 12)}…)`);
    expect(report.problems).toEqual([
      { line: 11, reason },
      { line: 22, reason },
    ]);
  });

  it("usage errors exit 2: a missing file, a directory, a device, a malformed key", async () => {
    const missing = await runCli(["audit", "verify", path.join(ctx.dir, "nope.jsonl")], { env: ctx.env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the audit log .*nope\.jsonl/);
    const directory = await runCli(["audit", "show", ctx.dir], { env: ctx.env });
    expect(directory.code).toBe(2);
    expect(directory.stderr).toContain(`cannot read the audit log ${ctx.dir}: it is a directory`);
    // Read as a pipe is (copied first), /dev/zero would fill the disk: refused.
    const device = await runCli(["audit", "verify", "/dev/zero"], { env: ctx.env });
    expect(device.code).toBe(2);
    expect(device.stderr).toContain("cannot read the audit log /dev/zero: it is a device, not a file or a pipe");
    const badKey = await runCli(["audit", "verify", original, "--public-key", "abc"], { env: ctx.env });
    expect(badKey.code).toBe(2);
    expect(badKey.stderr).toContain("--public-key takes an Ed25519 public key as 64 hex digits");
  });

  it("a forged log made to be slow to verify (copies of one line; a gap at every line) is reported within seconds", async () => {
    // A sixth review: 40,000 copies of one line (17 MB) took 190 s to verify, each line copying,
    // filtering or scanning the lines seen before it; a gap at every line did the same.
    // No clock (a bound on a measured time breaks on a loaded machine): the forgeries are made so
    // long that only a linear verify ends within the test's timeout. 60,000 lines: quadratic, as
    // before, about 190 s * (60/40)^2, some 430 s each; linear, a few seconds.
    const copies = 60_000;
    const text = readFileSync(original, "utf8").split("\n");
    // Line 2's text with another seq: as writeLines would write it, for none of writeLines' CPU
    // (the canonical JSON of 60,000 events, about 0.3 s of CPU here).
    const seqOf2 = `{"seq":${lines[1]!.seq},`;
    expect(text[1]!.startsWith(seqOf2)).toBe(true);
    const forged = {
      copies: (n: number) => variant(`copies-${n}`, [text[0]!, ...Array.from({ length: n }, () => text[1]!)].join("\n") + "\n"),
      gaps: (n: number) => variant(`gaps-${n}`, [text[0]!, ...Array.from({ length: n }, (_, i) => `{"seq":${(i + 1) * n + 1},${text[1]!.slice(seqOf2.length)}`)].join("\n") + "\n"),
    };
    for (const [name, make] of Object.entries(forged)) {
      const file = make(copies);
      const { result, report } = await verifyJson(file, ctx.env);
      expect(result.code, name).toBe(1);
      expect(report.lines, name).toBe(copies + 1);
      expect(report.problems.length, name).toBeGreaterThanOrEqual(copies);
    }
  }, 120_000);
});
