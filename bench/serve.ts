// tacit serve, measured through the MCP SDK's own stdio client: a trivial execute_typescript
// and a trivial execute_in_session, warm, against the one-shot CLI (`tacit run`) of the same
// snippet in the same run. The targets are absolute: median <= 15 ms and <= 10 ms,
// p99 <= 50 ms for both.

import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { median } from "./measure.js";
import { line, ms, tacitBin, tempDir } from "./helpers.js";

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const LONG_SESSION_SNIPPETS = 200;

/**
 * A session of many real snippets (eight lines each: an interface, a function, a call): every
 * snippet is validated with all those before it (a snippet sees the session's earlier
 * declarations as one program), so a call's cost grows with the session's length; the type
 * checker checks each apart from the earlier ones once they are long enough (split-check.ts),
 * so its part should not. For information; the targets are for trivial snippets.
 */
async function reportLongSession(timeCall: (name: string, args: Record<string, unknown>) => Promise<number>, session: string): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < LONG_SESSION_SNIPPETS; i++) {
    const code =
      `interface Row${i} { id: number; name: string; tags: string[] }\n` +
      `function summarize${i}(rows: Row${i}[]): string {\n` +
      `  const byTag = new Map<string, number>();\n` +
      `  for (const r of rows) for (const tag of r.tags) byTag.set(tag, (byTag.get(tag) ?? 0) + r.id);\n` +
      "  return [...byTag].map(([k, v]) => `${k}=${v}`).join(\",\");\n" +
      `}\n` +
      `const rows${i}: Row${i}[] = [{ id: ${i}, name: "n", tags: ["a", "b"] }];\n` +
      `summarize${i}(rows${i})`;
    times.push(await timeCall("execute_in_session", { session_id: session, code }));
  }
  const first = median(times.slice(0, 20));
  const last = median(times.slice(-20));
  line(
    `${LONG_SESSION_SNIPPETS} eight-line snippets: 1-20 vs ${LONG_SESSION_SNIPPETS - 19}-${LONG_SESSION_SNIPPETS}`,
    `median ${ms(first)} vs ${ms(last)}   ${(last / first).toFixed(2)}x (each snippet is validated with all before it)`,
  );
}

export async function benchServe(runs: number): Promise<boolean> {
  const calls = Math.max(20, runs * 2);
  const dir = tempDir("serve");
  const extraArgs = (process.env.BENCH_SERVE_ARGS ?? "").split(" ").filter(Boolean);
  // The SDK passes on only HOME, PATH and a few more unless given `env`: the bench's own TACIT_HOME (run.ts) goes with it.
  const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const transport = new StdioClientTransport({ command: process.execPath, args: [tacitBin, "serve", "--quiet", ...extraArgs], cwd: dir, stderr: "ignore", env });
  const client = new Client({ name: "tacit-bench", version: "0.0.0" });
  try {
    await client.connect(transport);
    const snippet = "1 + 1";
    const timeCall = async (name: string, args: Record<string, unknown>): Promise<number> => {
      const started = performance.now();
      const response = await client.callTool({ name, arguments: args });
      if (response.isError) throw new Error(`serve bench: ${name} failed: ${JSON.stringify(response.content)}`);
      return performance.now() - started;
    };
    const oneShot: number[] = [];
    const script = path.join(dir, "one.ts");
    writeFileSync(script, `println(${snippet});\n`);
    const execute: number[] = [];
    const createSession = async (): Promise<string> =>
      ((await client.callTool({ name: "create_repl_session", arguments: {} })).structuredContent as { session_id: string }).session_id;
    let session = await createSession();
    const inSession: number[] = [];
    for (let i = 0; i < 3; i++) await timeCall("execute_typescript", { code: `println(${snippet})` }); // warm-up
    // Each kind back to back on its own, so that one kind's background work (a one-shot call
    // boots the next spare sandbox after answering) does not land in the other's figures.
    for (let i = 0; i < calls; i++) execute.push(await timeCall("execute_typescript", { code: `println(${snippet})` }));
    for (let i = 0; i < calls; i++) inSession.push(await timeCall("execute_in_session", { session_id: session, code: snippet }));
    for (let i = 0; i < Math.max(5, Math.ceil(calls / 4)); i++) {
      const started = performance.now();
      spawnSync(process.execPath, [tacitBin, "run", script], { cwd: dir, stdio: "ignore" });
      oneShot.push(performance.now() - started);
    }
    // The same calls with a client that thinks (100 ms) between them, as a model does for
    // seconds: the warm spare sandbox has booted by then. Back-to-back calls above measure
    // Deno's boot too (about 75 ms of CPU each on this kind of machine), since every
    // execute_typescript gets a fresh sandbox, and the spare for the next call boots after
    // the answer (where a client that thinks does not wait for it). A session keeps one live
    // sandbox for all its snippets, so one session takes every call here: its cost must not
    // grow with its length.
    const pacedExecute: number[] = [];
    const pacedSession: number[] = [];
    const think = () => new Promise((resolve) => setTimeout(resolve, 100));
    session = await createSession();
    for (let i = 0; i < calls; i++) {
      await think();
      pacedExecute.push(await timeCall("execute_typescript", { code: `println(${snippet})` }));
      await think();
      pacedSession.push(await timeCall("execute_in_session", { session_id: session, code: snippet }));
    }
    const report = (label: string, values: number[], medianTarget: number): boolean => {
      const m = median(values);
      const p99 = percentile(values, 99);
      const met = m <= medianTarget && p99 <= 50;
      line(label, `median ${ms(m)}   p99 ${ms(p99)}   target median <= ${medianTarget} ms, p99 <= 50 ms: ${met ? "met" : "MISSED"}`);
      return met;
    };
    console.log(`\nserve: ${calls} calls each through the MCP SDK's stdio client, warm`);
    line("floor: one-shot tacit run of the snippet", `median ${ms(median(oneShot))}`);
    const a = report("execute_typescript (back to back)", execute, 15);
    const b = report("execute_in_session (back to back)", inSession, 10);
    const c = report("execute_typescript (100 ms between calls)", pacedExecute, 15);
    const d = report("execute_in_session (100 ms between calls)", pacedSession, 10);
    const early = median(inSession.slice(0, 10));
    const late = median(inSession.slice(-10));
    line(
      `one session's snippets 1-10 vs ${inSession.length - 9}-${inSession.length}`,
      `median ${ms(early)} vs ${ms(late)}   ${(late / early).toFixed(2)}x (trivial snippets, a live sandbox: no growth expected)`,
    );
    await reportLongSession(timeCall, await createSession());
    return a && b && c && d;
  } finally {
    await client.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
