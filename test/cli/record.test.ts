// --record: each run appended as a JSON line with its code, result and timing; classified
// values only as Classified(***).

import { randomUUID } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
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
});
