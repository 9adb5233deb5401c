// One println's line in the secure output stays whole when several of tacit serve's sessions and
// one-shot calls print to it at once. Each had its own order of appends to the same file
// (runner/secure-sink.ts appendOrder): a println's text went out at once and its classified value
// when its map ended, so a slow map's line was split by the lines others printed meanwhile
// ("slow-text fast-text fast-value\nslow-value\n"), and a person could not tell whose value was whose.

import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectServe, createSession, fileOnce, runInSession, tempDir } from "../helpers.js";

let client: Client;
let dir: string;
let cleanup: () => void;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("tacit-sink-lines-"));
  client = await connectServe(["--no-check", "--secure-output", "sink.txt"], dir);
}, 60_000);

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

/** A println whose value is computed by a map that takes a while (a loop in the pure evaluator). */
const slow = (name: string) =>
  `println("${name}-text", classify("${name}").map((s) => { let n = 0; for (let i = 0; i < 60_000_000; i++) n = (n + i) % 7; return s + "-value-" + n; }));`;
/** One whose map answers at once. */
const fast = (name: string) => `println("${name}-text", classify("${name}").map((s) => s + "-value-0"));`;

it("the lines of two sessions and two one-shot calls printing at once each hold their own text and value", async () => {
  const [first, second] = await Promise.all([createSession(client), createSession(client)]);
  const oneShot = (code: string) => client.callTool({ name: "execute_typescript", arguments: { code } }, undefined, { timeout: 60_000 });
  // The slow ones start first, so that their texts are out before the fast ones' lines end.
  const slowRuns = [runInSession(client, first!, slow("session-slow"), 60_000), oneShot(slow("call-slow"))];
  const fastRuns = [runInSession(client, second!, fast("session-fast"), 60_000), oneShot(fast("call-fast"))];
  await Promise.all([...slowRuns, ...fastRuns]);
  const names = ["session-slow", "call-slow", "session-fast", "call-fast"];
  const sink = await fileOnce(path.join(dir, "sink.txt"), (text) => names.every((name) => text.includes(`${name}-value`)));
  const lines = sink.split("\n").filter((line) => line !== "");
  expect(lines.length, sink).toBe(4);
  for (const line of lines) expect(line, sink).toMatch(/^([a-z]+-[a-z]+)-text \1-value-\d$/);
  expect(lines.map((line) => line.split("-text")[0]).sort()).toEqual([...names].sort());
}, 120_000);
