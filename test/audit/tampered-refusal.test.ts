// What tacit says when it refuses to continue a tampered audit log: the refusal quotes why the
// log's last line is not one tacit wrote, and that reason quotes the line itself (a key that
// does not belong). A tenth security review had a script, in a run without --audit-log (the log
// lay inside the allowed roots, which tacit warns about), add a key to the log's last line
// made of terminal sequences: "\x1b[1A\x1b[2K\r" (up a line, wipe it) and a line reading
// "tacit: … verified", and OSC 52 (set the clipboard). The next `tacit run --audit-log` refused
// the log, rightly, and wrote those sequences to the operator's terminal in its refusal, where
// `tacit audit verify` and `show` escape them. Through the real CLI and a real Deno.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../runner/audit/digest.js";
import { chainOf, eventHashOfJson, lineText } from "../../runner/audit/line.js";
import { runCli, runScript, tempDirWithTwoHomes } from "../helpers.js";

describe("refusing a tampered audit log", () => {
  let dir: string;
  let cleanup: () => void;
  let env: Record<string, string>;
  /** A run with a tacit home of its own, which does not remember the log the test's runs write. */
  let elsewhere: Record<string, string>;
  beforeEach(() => {
    ({ dir, env, elsewhere, cleanup } = tempDirWithTwoHomes("tacit-audit-refusal-"));
  });
  afterEach(() => cleanup());

  it("shows the text a script put in the log's last line as escapes, not as terminal sequences", async () => {
    const project = path.join(dir, "project");
    mkdirSync(project);
    const log = path.join(project, "audit.jsonl");
    const first = await runScript('println("logged");', ["--audit-log", log], { cwd: project, env });
    expect(first.code, first.stderr).toBe(0);

    // A run without --audit-log and with another tacit home (another machine, a container: this
    // one's remembers the log and refuses it, remembered-files.ts): the log is an ordinary file in
    // the root. The script adds a key.
    const fake = "\u001b[1A\u001b[2K\rtacit: audit.jsonl verified \u2014 all lines signed\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[8m";
    const tamper = await runScript(
      `requestFileSystem(".", (fs) => {
        const file = fs.access("audit.jsonl");
        const lines = file.read().split("\\n");
        const last = lines.length - 2;
        lines[last] = lines[last]!.slice(0, -1) + "," + JSON.stringify(${JSON.stringify(fake)}) + ":1}";
        file.write(lines.join("\\n"));
      });`,
      [],
      { cwd: project, env: elsewhere },
    );
    expect(tamper.code, tamper.stderr).toBe(0);
    expect(readFileSync(log, "utf8")).toContain(JSON.stringify(fake));

    const next = await runScript('println("again");', ["--audit-log", log], { cwd: project, env });
    expect(next.code).toBe(2);
    expect(next.stderr).toContain("the last line of the audit log");
    expect(next.stderr).toContain("\\u001b[1A\\u001b[2K\\u000dtacit: audit.jsonl verified");
    expect(next.stderr).not.toMatch(/[\u001b\u0007\r]/);
    // The report of the same log escapes it too.
    const verify = await runCli(["audit", "verify", log], { cwd: project, env });
    expect(verify.code).toBe(1);
    expect(verify.stdout).not.toMatch(/[\u001b\u0007\r]/);
  });

  it("refuses a last line whose head event holds a key tacit never writes, its hash and chain recomputed: a refusal with escapes, not a crash", async () => {
    // A sixth review: the line is intact as a line (the hash and chain need no key to
    // recompute), so the writer's check of the last line passed it, and the head's own schema
    // then threw: tacit ended with "internal error" and printed zod's message, the key and its
    // C1 controls raw (CSI 2J, OSC 52: JSON leaves them unescaped) to the operator's terminal.
    const project = path.join(dir, "project");
    mkdirSync(project);
    const log = path.join(project, "audit.jsonl");
    const first = await runScript('println("logged");', ["--audit-log", log], { cwd: project, env });
    expect(first.code, first.stderr).toBe(0);
    const lines = readFileSync(log, "utf8").trimEnd().split("\n");
    const last = JSON.parse(lines.at(-1)!) as { seq: number; time: string; event: Record<string, unknown>; prev: string };
    expect(last.event.type).toBe("head");
    last.event["\u009d52;c;cm0gLXJmIH4=\u009c\u009b2J\u001b]0;owned\u0007"] = 1;
    const eventJson = canonicalJson(last.event);
    const hash = eventHashOfJson(last.seq, last.time, eventJson);
    lines[lines.length - 1] = lineText(last.seq, last.time, eventJson, last.prev, hash, chainOf(last.prev, hash));
    writeFileSync(log, lines.join("\n") + "\n");

    const next = await runScript('println("again");', ["--audit-log", log], { cwd: project, env });
    expect(next.stderr).not.toContain("internal error");
    expect(next.code, next.stderr).toBe(2);
    expect(next.stderr).toContain("the last line of the audit log");
    expect(next.stderr).toContain("\\u009d52;c;");
    expect(next.stderr).not.toMatch(/[\u001b\u0007\u0080-\u009f]/);
    expect(next.stdout).toBe("");
  });

  it("refuses to continue a log that a script appended a chained line to after tacit closed it, rather than sign it", async () => {
    const project = path.join(dir, "project");
    mkdirSync(project);
    const log = path.join(project, "audit.jsonl");
    const first = await runScript('println("logged");', ["--audit-log", log], { cwd: project, env });
    expect(first.code, first.stderr).toBe(0);
    // A line chained from the last head as the writer would (no key is needed for that): a run
    // someone else made, which never happened. The script could compute it itself; it appends it.
    const last = JSON.parse(readFileSync(log, "utf8").trimEnd().split("\n").at(-1)!) as { seq: number; chain: string; event: { type: string } };
    expect(last.event.type).toBe("head");
    const seq = last.seq + 1;
    const time = new Date().toISOString();
    const eventJson = canonicalJson({ type: "evaluation-started", evaluation: "FORGED", session: null, displayName: "someone-else.ts", codeDigest: `sha256:${"0".repeat(64)}`, policyDigest: `sha256:${"0".repeat(64)}` });
    const hash = eventHashOfJson(seq, time, eventJson);
    const forged = lineText(seq, time, eventJson, last.chain, hash, chainOf(last.chain, hash));
    // From a run with another tacit home (this one's remembers the log and refuses it to scripts).
    const tamper = await runScript(`requestFileSystem(".", (fs) => fs.access("audit.jsonl").append(${JSON.stringify(forged + "\n")}));`, [], { cwd: project, env: elsewhere });
    expect(tamper.code, tamper.stderr).toBe(0);
    const tampered = readFileSync(log, "utf8");
    expect(tampered.trimEnd().split("\n").at(-1)).toBe(forged);

    const next = await runScript('requestFileSystem(".", (fs) => fs.access("marker.txt").write("ran"));', ["--audit-log", log], { cwd: project, env });
    expect(next.code).toBe(2);
    expect(next.stderr).toContain(`ends in lines no signed head covers (its last line, seq ${seq}, is not a head), but no tacit stopped while writing it`);
    expect(next.stderr).toContain("give tacit a new audit log file");
    // Nothing ran, and the forged line was not signed: the log is as the script left it, and does not verify.
    expect(existsSync(path.join(project, "marker.txt"))).toBe(false);
    expect(readFileSync(log, "utf8")).toBe(tampered);
    const verify = await runCli(["audit", "verify", log], { cwd: project, env });
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`line ${seq}: 1 line after the last signed head at line ${seq - 1} is not signed`);
  });

  it("refuses to continue a log that ends in a head naming this machine's key that the key did not sign (forged lines before it)", async () => {
    const project = path.join(dir, "project");
    mkdirSync(project);
    const log = path.join(project, "audit.jsonl");
    const first = await runScript('println("logged");', ["--audit-log", log], { cwd: project, env });
    expect(first.code, first.stderr).toBe(0);
    const last = JSON.parse(readFileSync(log, "utf8").trimEnd().split("\n").at(-1)!) as { seq: number; chain: string; event: { type: string; publicKey: string } };
    expect(last.event.type).toBe("head");
    // As above, a run that never happened, chained by hand; then, so that the log's last line is a
    // head (a log tacit closed ends in one), a head with this machine's public key, copied from the
    // real one, and a made-up signature: the forger has no private key.
    const chained = (seq: number, prev: string, event: object) => {
      const time = new Date().toISOString();
      const eventJson = canonicalJson(event);
      const hash = eventHashOfJson(seq, time, eventJson);
      const chain = chainOf(prev, hash);
      return { text: lineText(seq, time, eventJson, prev, hash, chain), chain };
    };
    const run = chained(last.seq + 1, last.chain, { type: "evaluation-started", evaluation: "FORGED", session: null, displayName: "someone-else.ts", codeDigest: `sha256:${"0".repeat(64)}`, policyDigest: `sha256:${"0".repeat(64)}` });
    const head = chained(last.seq + 2, run.chain, { type: "head", signs: run.chain, signedSeq: last.seq + 1, publicKey: last.event.publicKey, signature: "ab".repeat(64) });
    const tamper = await runScript(`requestFileSystem(".", (fs) => fs.access("audit.jsonl").append(${JSON.stringify(`${run.text}\n${head.text}\n`)}));`, [], { cwd: project, env: elsewhere });
    expect(tamper.code, tamper.stderr).toBe(0);
    const tampered = readFileSync(log, "utf8");
    expect(tampered.trimEnd().split("\n").at(-1)).toBe(head.text);

    const next = await runScript('requestFileSystem(".", (fs) => fs.access("marker.txt").write("ran"));', ["--audit-log", log], { cwd: project, env });
    expect(next.code).toBe(2);
    expect(next.stderr).toContain(`ends in a head (line seq ${last.seq + 2}) that names this machine's key but that this key did not sign`);
    expect(next.stderr).toContain("give tacit a new audit log file");
    // Nothing ran, and no head of tacit's signs the forged lines: the log is as the script left it.
    expect(existsSync(path.join(project, "marker.txt"))).toBe(false);
    expect(readFileSync(log, "utf8")).toBe(tampered);
  });
});
