// --record: each run appended as a JSON line with its code, result and timing; classified
// values only as Classified(***).

import { randomUUID } from "node:crypto";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, tempDir } from "../helpers.js";

describe("--record", () => {
  it("appends code, outcome and timing; never classified plaintext", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const canary = `CANARY-${randomUUID()}`;
      writeFileSync(path.join(dir, ".env"), canary);
      writeFileSync(path.join(dir, "s.ts"), 'requestFileSystem(".", (fs) => println("env is", fs.readClassified(".env")));\n');
      for (let i = 0; i < 2; i++) {
        const r = await runCli(["run", "--record", "rec", "--secure-output", "sink.txt", "s.ts"], { cwd: dir });
        expect(r.code, r.stderr).toBe(0);
      }
      const file = path.join(dir, "rec", "tacit-record.jsonl");
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const text = readFileSync(file, "utf8");
      const lines = text.trim().split("\n").map((line) => JSON.parse(line) as { kind: string; code: string; exitCode: number; stdout: string; durationMs: number });
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatchObject({ kind: "run", exitCode: 0, stdout: "env is Classified(***)\n" });
      expect(lines[0]!.code).toContain("readClassified");
      expect(typeof lines[0]!.durationMs).toBe("number");
      expect(text).not.toContain(canary);
      expect(readFileSync(path.join(dir, "sink.txt"), "utf8")).toContain(canary);
    } finally {
      cleanup();
    }
  });

  // A tenth review: a record line is JSON, whose strings keep the C1 controls (U+0080–U+009F)
  // raw, and a person reads the record with cat or tail -f: a script that printed
  // "\u009d52;c;<base64>\u009c" (OSC 52 in its C1 form) set the clipboard of whoever did.
  it("writes the C1 controls a script's code or output holds as escapes; the JSON reads the same", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const hostile = "\u009d52;c;cm0gLXJmIH4=\u009c\u009b2J\u007f";
      const code = `println(${JSON.stringify(hostile)}); // ${hostile}\n`;
      const r = await runCli(["run", "--record", "rec", "-"], { cwd: dir, input: code });
      expect(r.code, r.stderr).toBe(0);
      const text = readFileSync(path.join(dir, "rec", "tacit-record.jsonl"), "utf8");
      expect(text).not.toMatch(/[\u007f-\u009f]/);
      expect(text).toContain("\\u009d52;c;cm0gLXJmIH4=");
      expect(JSON.parse(text.trim())).toMatchObject({ code, stdout: `${hostile}\n` });
    } finally {
      cleanup();
    }
  });

  // A fifth review: the record was appended by path, following a symlink. Agent code that may
  // run ln (or git checkout, tar x) put one at rec/tacit-record.jsonl leading outside the
  // allowed roots, and the next run's record (with the code it chose) was appended there.
  it("does not follow a symlink or a hard link at the record file, nor wait on a FIFO there: the file it leads to is left alone", async () => {
    const { dir, cleanup } = tempDir();
    const outside = tempDir("tacit-record-outside-");
    try {
      const victim = path.join(outside.dir, "victim.txt");
      writeFileSync(victim, "untouched\n");
      mkdirSync(path.join(dir, "work", "rec"), { recursive: true });
      const work = path.join(dir, "work");
      for (const [name, option] of [["symbolic", ["-s"]], ["hard", []]] as const) {
        const plant = `requestExecPermission(["ln"], (p) => p.exec("ln", [...${JSON.stringify(option)}, "-f", ${JSON.stringify(victim)}, "rec/tacit-record.jsonl"]));\n`;
        const first = await runCli(["run", "--command-permissions", "ln", "-"], { cwd: work, input: plant });
        expect(first.code, first.stderr).toBe(0);
        expect(lstatSync(path.join(work, "rec", "tacit-record.jsonl")).isSymbolicLink(), name).toBe(name === "symbolic");
        const r = await runCli(["run", "--record", "rec", "-"], { cwd: work, input: `println("recorded ${name}");\n` });
        expect(r.stdout).toBe(`recorded ${name}\n`);
        expect(r.stderr, name).toMatch(/--record: .*tacit-record\.jsonl.* nothing was recorded/);
        expect(readFileSync(victim, "utf8"), name).toBe("untouched\n");
      }
      // A FIFO there held the open, and tacit with it, until something read it.
      rmSync(path.join(work, "rec", "tacit-record.jsonl"));
      execFileSync("mkfifo", [path.join(work, "rec", "tacit-record.jsonl")]);
      const r = await runCli(["run", "--record", "rec", "-"], { cwd: work, input: 'println("recorded fifo");\n' });
      expect(r.stdout).toBe("recorded fifo\n");
      expect(r.stderr).toMatch(/--record: .*tacit-record\.jsonl.* nothing was recorded/);
    } finally {
      cleanup();
      outside.cleanup();
    }
  });
});
