// What one evaluation's map/flatMap calls bring into the host (their functions and plain
// captured values, waiting in the pure evaluator's queue) is bounded per evaluation by
// classifiedStoreLimitBytes (MapRequestBudget; see map-flood.test.ts). Under tacit serve that
// bound is per call: maxConcurrentEvaluations calls run at once, and a call answered leaves its
// queued jobs to run for the rest of its time limit (up to maxConcurrentEvaluations calls' of
// them more), so at the default 256 MiB and 8 calls some 4 GiB could wait in the host, the
// whole of its default heap. Tried here through the real MCP client with a small heap: calls
// answered one after another, each leaving well under its own bound of slow maps with large
// captures, took the server down (every session with it) before the map-request bound drew
// on a share of tacit's heap for all its calls together.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, tempDir } from "../helpers.js";

/** tacit serve's heap: its share for map requests is an eighth, 25 MB. */
const HEAP_MB = 200;
const CALLS = 5;
/** Each call's own bound: far above what the server's share allows all calls together. */
const STORE_LIMIT_BYTES = 64 * 1024 * 1024;

// Each map captures 1 Mi characters outside Latin-1 (2 MiB in the host's heap, as counted) and
// its function waits (Atomics.wait, without a core) until its job limit, so the jobs wait in the host, queued behind it; each
// value is printed, so the secure output waits for it after the call is answered.
const FLOOD = `
const big = "\\u4e2d".repeat(1 << 20);
const v = classify("s");
let made = 0;
let refusal = "";
try {
  for (let i = 0; i < 30; i++) { println(v.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return s.length + big.length; })); made++; }
} catch (e) {
  refusal = String(e);
}
print(made + "\\n" + refusal + "\\n");
`;

/** One map of the same size as FLOOD's: prints 1 if it was taken, 0 if refused. */
const ONE_MAP = `
const big = "\\u4e2d".repeat(1 << 20);
try { println(classify("s").map((s) => s.length + big.length)); print("1"); } catch { print("0"); }
`;

let dir: string;
let cleanup: () => void;
/** Its calls' jobs wait up to a minute: longer than the test. */
let client: Client;
/** Its calls' jobs wait a few seconds at most. */
let shortLived: Client;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("tacit-map-requests-shared-"));
  const config = path.join(dir, "tacit.json");
  writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: STORE_LIMIT_BYTES }));
  const serve = (name: string, timeoutMs: number): Promise<Client> => {
    const home = path.join(dir, name);
    mkdirSync(home);
    const args = ["--no-check", "--config", config, "--secure-output", path.join(dir, `${name}.sink`), "--exec-timeout-ms", String(timeoutMs)];
    return connectServe(args, dir, { env: { TACIT_HOME: home, NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` } });
  };
  [client, shortLived] = await Promise.all([serve("long", 60_000), serve("short", 6_000)]);
});

afterAll(async () => {
  await Promise.all([client?.close(), shortLived?.close()]);
  cleanup?.();
});

async function call(code: string, on: Client = client): Promise<{ stdout: string; exitCode: number }> {
  const response = await on.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 60_000 });
  return response.structuredContent as { stdout: string; exitCode: number };
}

describe.concurrent("map calls of many tacit serve calls, each within its own bound", () => {
  it("are refused past the server's share, saying so and what to do; the server lives and runs the next call", async () => {
    const refusals: string[] = [];
    let queued = 0;
    for (let i = 0; i < CALLS; i++) {
      const { stdout, exitCode } = await call(FLOOD);
      expect(exitCode, stdout).toBe(0);
      const [made, refusal] = stdout.split("\n").slice(-3);
      queued += Number(made);
      if (refusal) refusals.push(refusal);
    }
    // What every call left waiting would pass the heap; the share stops it well before.
    expect(queued * 2).toBeLessThan(HEAP_MB / 4);
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals[0]).toMatch(/^Error: map: refused: .* all the calls and sessions of this tacit together/);
    expect(refusals[0]).toContain("an eighth of its heap limit");
    const after = await call(`println(1 + 1);`);
    expect(after.stdout.trim()).toBe("2");
  }, 120_000);

  it("have their share given back at the time limit of the call that took it: later calls' maps are taken again", async () => {
    const first = await call(FLOOD, shortLived);
    expect(first.stdout).toContain("all the calls and sessions of this tacit together");
    // Polled, not timed: the share comes back a grace after the first call's 6 s limit.
    let taken = "0";
    for (let tries = 0; tries < 100 && taken !== "1"; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      taken = (await call(ONE_MAP, shortLived)).stdout.trim().slice(-1);
    }
    expect(taken).toBe("1");
  }, 60_000);
});
