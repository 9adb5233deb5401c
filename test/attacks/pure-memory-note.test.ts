// A map function that grows the pure evaluator past its memory limit ends the evaluator only:
// the script goes on, its value fails out of sight, and the secure output's note names the
// function. It said "the script used more than 512 MiB of memory (resident)", which told the
// person reading it that the script had been stopped, when the script had run to its end.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { runCli } from "../helpers.js";

const dir = mkdtempSync(path.join(tmpdir(), "tacit-pure-memory-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("a map function past the pure evaluator's memory limit is named in the secure output's note; the script runs on", async () => {
  writeFileSync(path.join(dir, ".env"), "TOKEN=pure-memory-canary\n");
  const sink = path.join(dir, "..", `${path.basename(dir)}-sink.txt`);
  // 64 MiB at a time, off the V8 heap, each page touched: resident memory grows until the evaluator is ended.
  writeFileSync(
    path.join(dir, "grow.ts"),
    `requestFileSystem(".", (fs) => {
  const secret: any = fs.readClassified(".env");
  fs.writeClassified(".env.grown", secret.map((s: string) => { const keep: Uint8Array[] = []; for (;;) { const b = new Uint8Array(64 * 1024 * 1024); b.fill(7); keep.push(b); } }));
  fs.writeClassified(".env.after", secret.map((s: string) => s.trim().length));
  println("ran to its end");
});
`,
  );
  const r = await runCli(["run", "--no-check", "--secure-output", sink, "grow.ts"], { cwd: dir });
  const secure = readFileSync(sink, "utf8");
  rmSync(sink, { force: true });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("ran to its end\n");
  expect(secure).toMatch(/^\[tacit\] map failed: the map or flatMap function \(in the pure evaluator\) used more than \d+ MiB of memory \(resident\)$/m);
  expect(secure).not.toContain("the script used more than");
  expect(readFileSync(path.join(dir, ".env.grown"), "utf8")).toBe("");
  expect(readFileSync(path.join(dir, ".env.after"), "utf8")).toBe(String("TOKEN=pure-memory-canary".length));
});
