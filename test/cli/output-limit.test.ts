// config "outputLimitBytes": how much of what a script prints is kept (default 10 MiB, and at
// most that). Through the real CLI: a lower limit cuts the output there, on a character's
// boundary, with the marker naming it, in the terminal's stream and in --json; the secure output
// takes the same printing up to the same limit; a higher one is refused before anything runs.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { realTempDir, tacit } from "../files/fixtures.js";

let dir: string;
let cleanup: () => void;

beforeAll(() => ({ dir, cleanup } = realTempDir("tacit-output-limit-")));
afterAll(() => cleanup());

const marker = (limit: number): string => `\n[tacit: output truncated: the script printed more than ${limit} bytes; the rest was discarded]\n`;

function configWith(name: string, outputLimitBytes: number): string {
  const config = path.join(dir, `${name}.json`);
  writeFileSync(config, JSON.stringify({ outputLimitBytes }));
  return config;
}

// 999 ASCII bytes, then "é" (two bytes) across the 1000-byte cut, then more than the limit again.
const SCRIPT = 'println("a".repeat(999) + "é" + "b".repeat(2000));\nprintln("never");\n';

it("a lower limit cuts what is printed there, on a character's boundary, with the marker naming it; --json says truncated", async () => {
  const config = configWith("low", 1000);
  const r = await tacit(dir, SCRIPT, ["--config", config]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("a".repeat(999) + marker(1000));

  const json = await tacit(dir, SCRIPT, ["--config", config, "--json"]);
  const result = JSON.parse(json.stdout) as { stdout: string; truncated: boolean; exitCode: number };
  expect(result).toMatchObject({ stdout: "a".repeat(999) + marker(1000), truncated: true, exitCode: 0 });
});

it("the secure output takes the same printing up to the same limit, each classified value counted as its mask", async () => {
  const config = configWith("sink", 1000);
  const sink = path.join(dir, "sink.log");
  // 200 lines of "Classified(***)\n" (16 bytes as the script sees them): past 1000 bytes after 62.
  const script = 'const v = classify("v".repeat(40));\nfor (let i = 0; i < 200; i++) println(v);\n';
  const r = await tacit(dir, script, ["--config", config, "--secure-output", sink]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("Classified(***)\n".repeat(62) + "Classified(***)".slice(0, 1000 - 62 * 16) + marker(1000));
  const plaintextLines = readFileSync(sink, "utf8").split("\n").filter((line) => line === "v".repeat(40));
  expect(plaintextLines.length).toBeGreaterThan(0);
  expect(plaintextLines.length).toBeLessThanOrEqual(63);
});

it("more than the default is refused before anything runs, saying why", async () => {
  const config = configWith("high", 10 * 1024 * 1024 + 1);
  const witness = path.join(dir, "ran.txt");
  const r = await tacit(dir, `requestFileSystem(".", (fs) => fs.access("ran.txt").write("ran"));\n`, ["--config", config]);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain("outputLimitBytes");
  expect(r.stderr).toContain("it can only lower how much of what a script prints tacit keeps");
  expect(existsSync(witness)).toBe(false);
});
