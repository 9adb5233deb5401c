// A session keeps its snippets' replies (file contents included) to rebuild its sandbox after
// a failed snippet; what it keeps is bounded by sessionRecordingLimitBytes. Past the bound the
// session goes on, but a later failure ends it with a message that says why; a failed snippet
// that alone passed the bound is forgotten with its record, and the session rebuilds as usual.
// Unbounded, a snippet reading a large file in a loop made the server hold gigabytes.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectServe, createSession, runInSession } from "../helpers.js";

let dir: string;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-session-recording-"));
  writeFileSync(path.join(dir, "config.json"), JSON.stringify({ sessionRecordingLimitBytes: 1024 * 1024 }));
  writeFileSync(path.join(dir, "big.txt"), "b".repeat(300 * 1024));
  writeFileSync(path.join(dir, "small.txt"), "s");
  client = await connectServe(["--no-check", "--config", "config.json"], dir);
});

afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

const create = () => createSession(client);
const run = (session: string, code: string) => runInSession(client, session, code);

/** Reads big.txt (300 KiB) `times` times: about 600 KiB of recorded reply each. */
const reading = (times: number) =>
  `let total = 0;\nrequestFileSystem(".", (fs) => { for (let i = 0; i < ${times}; i++) total += fs.access("big.txt").read().length; });\ntotal`;

describe("a session's recording of replies", () => {
  it("past the limit the session goes on, and a later failure ends it, saying why", async () => {
    const s = await create();
    expect(await run(s, "const kept = 41;")).toMatchObject({ exitCode: 0 });
    expect(await run(s, reading(4))).toMatchObject({ stdout: `${4 * 300 * 1024}\n`, exitCode: 0 });
    expect(await run(s, "kept + 1")).toMatchObject({ stdout: "42\n", exitCode: 0 });
    expect(await run(s, 'throw new Error("boom")')).toMatchObject({ exitCode: 1 });
    const after = await run(s, "kept");
    expect(after.exitCode).not.toBe(0);
    expect(after.error).toContain("sessionRecordingLimitBytes");
    expect(after.error).toContain("create a new session");
  });

  it("a failed snippet that alone passed the limit is forgotten, and the session rebuilds as usual", async () => {
    const s = await create();
    expect(await run(s, "const kept = 41;")).toMatchObject({ exitCode: 0 });
    expect(await run(s, `${reading(4)};\nthrow new Error("after reading")`)).toMatchObject({ exitCode: 1 });
    expect(await run(s, "kept + 1")).toMatchObject({ stdout: "42\n", exitCode: 0 });
    expect(await run(s, reading(1))).toMatchObject({ stdout: `${300 * 1024}\n`, exitCode: 0 });
    expect(await run(s, 'throw new Error("boom")')).toMatchObject({ exitCode: 1 });
    expect(await run(s, "kept + total")).toMatchObject({ stdout: `${41 + 300 * 1024}\n`, exitCode: 0 });
  });

  it("counts each recorded exchange, not only its reply: many tiny replies pass the limit too", async () => {
    // A review kept a session's host growing by about 50 MB per snippet of 60,000 \`size\`
    // requests (each reply a number, counted as 4 bytes): every exchange also keeps its
    // digest and two objects, about 150 bytes that went uncounted.
    const s = await create();
    expect(await run(s, "const kept = 41;")).toMatchObject({ exitCode: 0 });
    const sizes = 'let sum = 0;\nrequestFileSystem(".", (fs) => { const f = fs.access("small.txt"); for (let i = 0; i < 10000; i++) sum += f.size; });\nsum';
    expect(await run(s, sizes)).toMatchObject({ stdout: "10000\n", exitCode: 0 });
    expect(await run(s, 'throw new Error("boom")')).toMatchObject({ exitCode: 1 });
    const after = await run(s, "kept");
    expect(after.exitCode).not.toBe(0);
    expect(after.error).toContain("sessionRecordingLimitBytes");
  });
});
