// What all the sessions of one tacit serve keep of their replies together is bounded: each
// session's recording (kept to rebuild its sandbox after a failed snippet) is bounded by
// sessionRecordingLimitBytes, but a server holds up to maxSessions sessions. Unbounded
// together, a few sessions each within its own limit made a server with a 300 MB heap die
// (every session with it); at the default heap, about 36 sessions did the same.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, runInSession } from "../helpers.js";

/**
 * tacit serve's heap (the sessions' recordings share a quarter of its limit), and how many reads
 * of 4 MiB each session makes: three sessions' replies (some 132 MiB) are past it. At 250 MB and
 * 22 reads, the same proof took twice the replies.
 */
const HEAP_MB = 128;
const READS = 11;

let dir: string;
let client: Client;
let stderr = "";

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-recording-pool-"));
  writeFileSync(path.join(dir, "big.txt"), "b".repeat(4 * 1024 * 1024));
  client = await connectServe(["--no-check", "--exec-timeout-ms", "30000"], dir, {
    env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` },
    onStderr: (text) => (stderr += text),
  });
});

afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("sessions each within their own limit cannot together fill the server; one past the total goes on but cannot be rebuilt", async () => {
  // 11 reads of 4 MiB: 44 MiB of replies per session, about 88 MiB as counted, under the 256 MiB a session keeps.
  const reading = `let total = 0;\nrequestFileSystem(".", (fs) => { for (let i = 0; i < ${READS}; i++) total += fs.access("big.txt").read().length; });\ntotal`;
  const sessions: string[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await createSession(client);
    sessions.push(s);
    expect(await runInSession(client, s, `const kept = ${i};`, 60_000)).toMatchObject({ exitCode: 0 });
    const read = await runInSession(client, s, reading, 60_000);
    expect(read, stderr).toMatchObject({ exitCode: 0, stdout: `${READS * 4 * 1024 * 1024}\n` });
  }
  // The server still answers, and a session whose replies were let go says why once a snippet fails.
  const last = sessions[2]!;
  expect(await runInSession(client, last, `throw new Error("boom")`, 60_000)).toMatchObject({ exitCode: 1 });
  const after = await runInSession(client, last, "kept", 60_000);
  expect(after.exitCode).not.toBe(0);
  expect(after.error).toContain("all this server's sessions together");
  expect(after.error).toContain("create a new session");
  // Deleting sessions gives their share back: a new session keeps its replies again and rebuilds.
  for (const s of sessions) await client.callTool({ name: "delete_repl_session", arguments: { session_id: s } });
  const fresh = await createSession(client);
  expect(await runInSession(client, fresh, `const small = requestFileSystem(".", (fs) => fs.access("big.txt").size);`, 60_000)).toMatchObject({ exitCode: 0 });
  expect(await runInSession(client, fresh, `throw new Error("boom")`, 60_000)).toMatchObject({ exitCode: 1 });
  expect(await runInSession(client, fresh, "small", 60_000)).toMatchObject({ exitCode: 0, stdout: `${4 * 1024 * 1024}\n` });
}, 60_000);
