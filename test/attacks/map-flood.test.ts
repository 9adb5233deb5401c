// map/flatMap jobs wait in the host for the pure evaluator, one at a time, each holding its
// function's source and the plain values it captures; the sandbox can send them faster than
// they run. A seventh security review mapped a function capturing 1 MiB of text in a loop:
// tacit held about 1.2 GB after 20 s, and a tacit with a 300 MB heap died of it (under tacit
// serve, every session with it). What one evaluation's map calls bring is now bounded, by
// sizes the script itself sent, so a refusal tells it nothing about any plaintext.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { CAPTURED_NAME_BYTES } from "../../runner/classified/budget.js";
import { DEFAULT_CLASSIFIED_STORE_LIMIT_BYTES } from "../../runner/limits.js";
import { runScript, tempDir } from "../helpers.js";

// The bound is the store's size (classifiedStoreLimitBytes); a configured eighth of the default
// keeps the flood short (16 calls of 2 MiB rather than 128) while the host's heap (300 MB) is still
// far smaller than what the flood left there before the bound: it ran until that heap died.
const STORE_LIMIT_BYTES = DEFAULT_CLASSIFIED_STORE_LIMIT_BYTES / 8;

describe("a flood of map calls with large captures", () => {
  it("is refused past the evaluation's bound, before the host holds it; a Classified capture is not charged; the host lives", async () => {
    const script = `
const big = "x".repeat(1 << 20);
const v = classify("s");
let made = 0;
let refusal = "";
try {
  for (;;) { v.map((s) => s.length + big.length); made++; }
} catch (e) {
  refusal = String(e);
}
println(made);
println(refusal.slice(0, 60));
const table = classify(big);
let more = 0;
for (let i = 0; i < 1000; i++) { v.map((s) => s.length + table.length); more++; }
println(more);
`;
    const { dir, cleanup } = tempDir("tacit-map-flood-");
    onTestFinished(cleanup);
    const config = path.join(dir, "tacit.json");
    writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: STORE_LIMIT_BYTES }));
    // A heap too small for what the flood used to leave in the host: a tacit that held it died.
    const r = await runScript(script, ["--no-check", "--config", config, "--exec-timeout-ms", "20000"], { env: { NODE_OPTIONS: "--max-old-space-size=300" } });
    expect(r.code, r.stderr.slice(0, 400)).toBe(0);
    const [made, refusal, more] = r.stdout.trim().split("\n");
    // Each call sends a little over 2 MiB (1 Mi characters at 2 bytes, and its source): the bound lets through what fits.
    const fit = STORE_LIMIT_BYTES / (2 * (1 << 20));
    expect(Number(made)).toBeGreaterThanOrEqual(fit - 2);
    expect(Number(made)).toBeLessThan(fit);
    expect(refusal).toBe("Error: map: refused: its function and captured values (about");
    expect(more).toBe("1000");
  }, 30_000);
});

describe("a flood of map calls capturing many small values", () => {
  it("is charged for every name it captures, not only for the values' bytes: refused within the bound the host holds", async () => {
    // 9,000 names of small numbers: charged by its source and values alone, a job held about
    // 1.8 MB of the host's heap while it waited, five to ten times its charge. Each name now
    // counts CAPTURED_NAME_BYTES.
    const names = Array.from({ length: 9000 }, (_, i) => `a${i}`);
    const script = `
${names.map((name, i) => `const ${name} = ${i};`).join("\n")}
const v = classify("s");
let made = 0;
let refusal = "";
try {
  for (let i = 0; i < 100; i++) { v.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return [${names.join(",")}].length + s.length; }); made++; }
} catch (e) {
  refusal = String(e);
}
println(made);
println(refusal.slice(0, 60));
`;
    const limitBytes = 8 * 1024 * 1024;
    const { dir, cleanup } = tempDir("tacit-map-flood-names-");
    onTestFinished(cleanup);
    const config = path.join(dir, "tacit.json");
    writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: limitBytes }));
    const r = await runScript(script, ["--no-check", "--config", config, "--exec-timeout-ms", "20000"]);
    expect(r.code, r.stderr.slice(0, 400)).toBe(0);
    const [made, refusal] = r.stdout.trim().split("\n");
    // Refused once the names alone pass the bound (without their charge, 24 calls were let through).
    expect(Number(made)).toBeGreaterThan(0);
    expect(Number(made)).toBeLessThanOrEqual(Math.floor(limitBytes / (names.length * CAPTURED_NAME_BYTES)));
    expect(refusal).toBe("Error: map: refused: its function and captured values (about");
  }, 30_000);
});
