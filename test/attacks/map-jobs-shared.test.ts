// A map job is sent to the pure evaluator as one line of JSON: its value, and each Classified
// value its function captures, whole. The store's budget bounds what values hold, not what a
// job's line makes of them: a value of control characters is six times as long in JSON
// (`\u0001`), and a function capturing the value it maps sends it twice. Under tacit serve every
// call and session has an evaluator of its own, and the host kept each job's line in its heap
// (a closure of the write held it) until the evaluator had read it whole, and then (a closure of
// the job held it) until the job was answered: with evaluators busy computing, for seconds each.
// A red team's seven calls at once, each holding 10 MiB of classified values (within every
// budget, together too) and mapping them with a function that spun for its 5 s, had the
// server's heap at 261 MB of 300 after collection (55 MB once neither closure holds the line).
// Tried here through the real MCP client against a tacit serve with a heap that such lines fill:
// its calls each leave a map job running (its value printed to the secure output).

import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, tempDir } from "../helpers.js";

const HEAP_MB = 200;
const CALLS = 8;

// Five values of 600 Ki control characters each (classify() takes at most a frame's worth): 6 MiB
// in the store, 18 Mi characters of JSON, and the first sent twice in the job (as the value
// mapped and as a value captured). The function waits (Atomics.wait, without a core) until its job limit.
const PARTS = 5;
const names = Array.from({ length: PARTS }, (_, i) => `p${i}`);
const CALL = `
${names.map((name) => `const ${name} = classify("\\u0001".repeat(600 << 10));`).join("\n")}
const w = p0.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return [${names.join(", ")}].length; });
println("alive", w);
`;

let dir: string;
let cleanup: () => void;
let client: Client;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("tacit-map-jobs-shared-"));
  const home = path.join(dir, "home");
  mkdirSync(home);
  client = await connectServe(["--no-check", "--secure-output", path.join(dir, "sink.txt"), "--exec-timeout-ms", "20000"], dir, {
    env: { TACIT_HOME: home, NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` },
  });
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

async function call(code: string): Promise<{ stdout: string; exitCode: number }> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 60_000 });
  return response.structuredContent as { stdout: string; exitCode: number };
}

describe("map jobs of many tacit serve calls at once, each within every budget", () => {
  it("do not take the server's heap: every call ends, and the server runs the next", async () => {
    const results = await Promise.all(Array.from({ length: CALLS }, () => call(CALL)));
    for (const result of results) expect(result.stdout.trim()).toBe("alive Classified(***)");
    const after = await call(`println(1 + 1);`);
    expect(after.stdout.trim()).toBe("2");
  }, 120_000);
});
