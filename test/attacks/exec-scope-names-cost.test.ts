// A scope's command names cost the host's main thread: each is matched against --strict's
// families (a pass over its characters per word) and looked for on PATH (a failed access() a PATH
// entry, each an exception) before the scope opens. A security review, in one session of a
// `tacit serve --strict`, asked requestExecPermission for 1,000 names of 3,000 characters in a
// loop: about 0.9 s of the main thread a call, and another session's file reads waited up to 994 ms
// each (300 reads: 96 ms alone, 4,948 ms beside the loop). A name longer than any file name is now
// refused before any check, a name not on PATH is told without an exception, and a scope names at
// most ACTION_LIMITS.commands (100) commands.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectServe, createSession, runInSession, tempDirWithHome } from "../helpers.js";

/** How long the other session's single read may take beside the loop: alone it takes a few ms; beside the loop, before, ~1 s. */
const WORST_READ_MS = 500;

let client: Client;
let cleanup: () => void;

beforeAll(async () => {
  const made = tempDirWithHome("tacit-exec-scope-names-");
  cleanup = made.cleanup;
  client = await connectServe(["--no-check", "--strict"], made.dir, { env: made.env });
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

describe("requestExecPermission with many long command names, in a loop", () => {
  it("does not hold the host's main thread: another session's reads go on", async () => {
    const flooding = await createSession(client);
    const reading = await createSession(client);
    const flood = runInSession(
      client,
      flooding,
      `const commands = Array.from({ length: 1000 }, (_, i) => "c".repeat(3000) + i);
const started = Date.now();
let calls = 0;
while (Date.now() - started < 3000) {
  try { requestExecPermission(commands, () => 1); } catch { /* refused: asked again */ }
  calls++;
}
println(calls);`,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const reads = await runInSession(
      client,
      reading,
      `requestFileSystem(".", (fs) => {
  fs.access("f").write("x");
  const started = Date.now();
  let worst = 0;
  while (Date.now() - started < 2000) {
    const before = Date.now();
    fs.access("f").read();
    worst = Math.max(worst, Date.now() - before);
  }
  println(worst);
});`,
    );
    const flooded = await flood;
    expect(flooded.error).toBeNull();
    expect(reads.error).toBeNull();
    expect(Number(reads.stdout.trim())).toBeLessThan(WORST_READ_MS);
  }, 30_000);
});
