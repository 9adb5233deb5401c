// A session checks each snippet together with every earlier one (so names and types carry
// over), on the host's main thread for the validator. Unbounded, a client that sent snippets
// of 9 MiB (a comment, under the 10 MiB message limit) grew what every later check read:
// at 117 MiB of session code each snippet took 5-6 s, stalled tacit serve's event loop (every
// other call, cancellation and time limit with it) for 2.5 s at a time, and peaked the host at
// 1.7 GB; at 200 MiB the validator alone held the loop for 22 s. A session's code is bounded.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_CODE_LIMIT_CHARS } from "../../runner/limits.js";
import { connectServe, createSession, runInSession } from "../helpers.js";

let dir: string;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-session-code-"));
  client = await connectServe(["--no-check"], dir);
});

afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (session: string, code: string) => runInSession(client, session, code);

/** A snippet of about 9 MiB: a comment, then a binding. */
function bulky(name: string): string {
  return `// ${"x".repeat(9 * 1024 * 1024)}\nlet ${name} = 1;`;
}

describe("the code a session keeps", () => {
  it("is bounded: a snippet that would take it past the limit is refused, and the session goes on", async () => {
    expect(SESSION_CODE_LIMIT_CHARS).toBeLessThan(2 * 9 * 1024 * 1024);
    const session = await createSession(client);

    expect(await run(session, bulky("first"))).toMatchObject({ exitCode: 0, error: null });

    const second = await run(session, bulky("second"));
    expect(second.exitCode, second.error ?? "").toBe(3);
    expect(second.error).toMatch(/session's snippets together/);
    expect(second.error).toMatch(/create a new session/i);

    // Refused before it ran: its binding does not exist, the earlier one does.
    expect(await run(session, "first + 1")).toMatchObject({ exitCode: 0, stdout: "2\n" });
    const missing = await run(session, "second");
    expect(missing.exitCode).not.toBe(0);
  });
});
