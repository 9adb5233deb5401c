// A client of tacit serve that writes all its requests before it reads any answer, then closes its
// input and reads (a script's blocking writes, Python's communicate()). Past 4 MiB of answers
// unread the server stops taking requests (unread-answers.test.ts), and it stopped reading stdin
// at once: such a client blocked in its write while the server waited for it to read, each for the
// other, for ever (300 show_interface calls and 3,500 pings, 350 KB, through the real CLI). Requests are now still
// read while the answers wait, up to a bound (runner/mcp-stdin.ts, QUEUED_REQUESTS_LIMIT*), kept as
// lines, passed on in order, and every one answered once the client reads. Without that, the batch is never all written
// and this test ends at its timeout.

import { afterAll, describe, expect, it } from "vitest";
import { QUEUED_REQUESTS_LIMIT, QUEUED_REQUESTS_LIMIT_BYTES } from "../../runner/mcp-stdin.js";
import { tempDirWithHome } from "../helpers.js";
import { rawClient } from "./raw-client.js";

interface Answer {
  id?: unknown;
  method?: string;
  result?: { content?: Array<{ text: string }> };
  error?: unknown;
}

const WAITS = "the client has left";

const ends: Array<() => void> = [];
afterAll(() => {
  for (const end of ends.splice(0)) end();
});

describe("tacit serve and a client that writes every request before it reads", () => {
  it("reads the whole batch while the answers wait, and answers every request once the client reads", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-write-all-");
    const client = rawClient<Answer>([], dir, env);
    let stderr = "";
    client.child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    ends.push(() => {
      client.close();
      cleanup();
    });
    await client.initialize();
    client.child.stdout.pause();
    // 300 calls of a 15 KB answer each, then 3,500 pings: the server waits for its client after the
    // first 4 MiB of answers (some 260 calls); the rest, 350 KB of requests, is more than a pipe and
    // the server's stdin hold (about 130 KB), and within what the server keeps for its client.
    const interfaces = 300;
    const pings = 3500;
    const messages = [
      ...Array.from({ length: interfaces }, (_, i) => ({ jsonrpc: "2.0", id: 100 + i, method: "tools/call", params: { name: "show_interface", arguments: {} } })),
      ...Array.from({ length: pings }, (_, i) => ({ jsonrpc: "2.0", id: `ping-${String(i).padStart(6, "0")}-${"x".repeat(50)}`, method: "ping" })),
    ];
    const requests = messages.map((message) => client.line(message)).join("");
    expect(requests.length).toBeGreaterThan(300_000);
    expect(requests.length).toBeLessThan(QUEUED_REQUESTS_LIMIT_BYTES);
    expect(messages.length).toBeLessThan(QUEUED_REQUESTS_LIMIT);
    const exited = new Promise<number | null>((resolve) => client.child.once("exit", (code) => resolve(code)));
    // The client reads nothing until every byte of its batch is taken: before, the server stopped
    // taking them, and this wait never ended.
    const written = await Promise.race([
      new Promise<string>((resolve) => client.child.stdin.write(requests, (error) => resolve(error ? `failed: ${error.message}` : "written"))),
      exited.then((code) => `the server exited (${code}) first: ${stderr}`),
    ]);
    expect(written).toBe("written");
    // It did wait for its client meanwhile (so the batch was kept, not run): said on stderr.
    expect(stderr).toContain(WAITS);
    client.child.stdin.end();
    client.child.stdout.resume();
    // Every request is answered before the server ends for the input's end.
    expect(await exited).toBe(0);
    // Answers only (not the server's own requests to the client), but initialize's.
    const answered = client.responses.filter((r) => r.method === undefined && r.id !== undefined && r.id !== 1);
    // Each request answered once (a ping's answer comes before those of calls taken before it: the SDK
    // answers requests as their handlers finish, as it always has).
    expect(answered.map((r) => String(r.id)).sort()).toEqual(messages.map((m) => String(m.id)).sort());
    const byId = new Map(answered.map((r) => [r.id, r]));
    for (const { id } of messages.slice(0, interfaces)) expect(byId.get(id)?.result?.content?.[0]?.text).toContain("requestFileSystem");
    for (const { id } of messages.slice(interfaces)) expect(byId.get(id)?.result).toEqual({});
  });
});
