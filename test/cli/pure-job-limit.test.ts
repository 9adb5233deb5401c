// config "pureJobTimeoutMs": how long one map/flatMap function may run in the pure evaluator
// (default 5000). Through the real CLI: below it the function is ended and its value fails out
// of sight (the secure output says why); raised, a function that runs past the default computes.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { realTempDir, tacit } from "../files/fixtures.js";

let dir: string;
let cleanup: () => void;

beforeAll(() => ({ dir, cleanup } = realTempDir("tacit-pure-job-limit-")));
afterAll(() => cleanup());

/**
 * Runs `map` (a function's source) on a classified "x" with pureJobTimeoutMs `limitMs` (null:
 * the default); gives what reached the secure output.
 */
async function mapWithLimit(name: string, limitMs: number | null, map: string): Promise<string> {
  const config = path.join(dir, `${name}.json`);
  writeFileSync(config, JSON.stringify(limitMs === null ? {} : { pureJobTimeoutMs: limitMs }));
  const sink = path.join(dir, `${name}.sink`);
  const r = await tacit(dir, `println(classify("x").map(${map}));\n`, ["--quiet", "--config", config, "--secure-output", sink], {
    TACIT_HOME: path.join(dir, `${name}-home`),
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("Classified(***)\n");
  return readFileSync(sink, "utf8");
}

// Concurrent: each run has its config, sink and home, and mostly waits for its limit.
it.concurrent("a function that never returns is ended at the limit set, and its value fails out of sight", async () => {
  const sink = await mapWithLimit("short", 1000, "(s) => { for (;;) {} }");
  expect(sink).toContain("<classified value unavailable: the function ran longer than 1000 ms>\n");
  expect(sink).toContain("map failed: the function ran longer than 1000 ms");
}, 60_000);

it.concurrent("raised, a function that runs past the default 5000 ms computes; under the default, the same function is ended", async () => {
  // The limit is of the function's time, not its CPU: it waits its 5.5 s (Atomics.wait) rather
  // than spin a core for them. The same function under the default is the evidence that it ran
  // past the default, so that computing under the raised limit shows the raise; both runs at once.
  const past = '(s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5500); return s + " computed"; }';
  const [raised, byDefault] = await Promise.all([mapWithLimit("long", 60_000, past), mapWithLimit("default", null, past)]);
  expect(raised).toBe("x computed\n");
  expect(byDefault).toContain("<classified value unavailable: the function ran longer than 5000 ms>\n");
}, 60_000);
