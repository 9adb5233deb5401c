// A client of tacit serve that writes all its requests before it reads any answer, then closes its
// input and reads (a script's blocking writes, Python's communicate()). Past 4 MiB of answers
// unread the server stops taking requests (unread-answers.test.ts), and it stopped reading stdin
// at once: such a client blocked in its write while the server waited for it to read, each for the
// other, for ever (300 show_interface calls and 3,500 pings, 350 KB, through the real CLI). Requests are now still
// read while the answers wait, up to a bound (runner/mcp-stdin.ts, QUEUED_REQUESTS_LIMIT*), kept as
// lines, passed on in order, and every one answered once the client reads. Without that, the batch is never all written
// and this test ends at its timeout.

import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NOT_TAKEN_WHILE_UNREAD, QUEUED_REQUESTS_LIMIT, QUEUED_REQUESTS_LIMIT_BYTES, REFUSED_REQUESTS_LIMIT } from "../../runner/mcp-stdin.js";
import { tempDirWithHome } from "../helpers.js";
import { rawClient } from "./raw-client.js";

interface Answer {
  id?: unknown;
  method?: string;
  params?: { data?: unknown };
  result?: { content?: Array<{ text: string }> };
  error?: unknown;
}

const WAITS = "the client has left";

const ends: Array<() => void> = [];
afterAll(() => {
  for (const end of ends.splice(0)) end();
});

/**
 * A raw client of `tacit serve` (with `args`) in a temp dir of its own, initialized, that reads
 * nothing more until the test resumes its stdout; `stderr()` is what the server has said so far.
 * Closed, and its dir removed, after the file.
 */
async function unreadClient(prefix: string, args: string[]) {
  const { dir, env, cleanup } = tempDirWithHome(prefix);
  const client = rawClient<Answer>(args, dir, env);
  let said = "";
  client.child.stderr.on("data", (chunk: Buffer) => (said += chunk.toString()));
  ends.push(() => {
    client.close();
    cleanup();
  });
  await client.initialize();
  client.child.stdout.pause();
  /**
   * Writes `requests` whole before reading anything (before, the server stopped taking them, and
   * this wait never ended), checks that the server said it waited for its client meanwhile, then
   * reads to the end: the answers, but initialize's (not the server's own requests to the client).
   */
  const writeAllThenRead = async (requests: string): Promise<Answer[]> => {
    const exited = new Promise<number | null>((resolve) => client.child.once("exit", (code) => resolve(code)));
    const written = await Promise.race([
      new Promise<string>((resolve) => client.child.stdin.write(requests, (error) => resolve(error ? `failed: ${error.message}` : "written"))),
      exited.then((code) => `the server exited (${code}) first: ${said}`),
    ]);
    expect(written).toBe("written");
    expect(said).toContain(WAITS);
    client.child.stdin.end();
    client.child.stdout.resume();
    // Every request is answered before the server ends for the input's end.
    expect(await exited).toBe(0);
    return client.responses.filter((r) => r.method === undefined && r.id !== undefined && r.id !== 1);
  };
  return { dir, client, stderr: () => said, writeAllThenRead };
}

describe("tacit serve and a client that writes every request before it reads", () => {
  it("reads the whole batch while the answers wait, and answers every request once the client reads", async () => {
    const { client, writeAllThenRead } = await unreadClient("tacit-write-all-", []);
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
    const answered = await writeAllThenRead(requests);
    // Each request answered once (a ping's answer comes before those of calls taken before it: the SDK
    // answers requests as their handlers finish, as it always has).
    expect(answered.map((r) => String(r.id)).sort()).toEqual(messages.map((m) => String(m.id)).sort());
    const byId = new Map(answered.map((r) => [r.id, r]));
    for (const { id } of messages.slice(0, interfaces)) expect(byId.get(id)?.result?.content?.[0]?.text).toContain("requestFileSystem");
    for (const { id } of messages.slice(interfaces)) expect(byId.get(id)?.result).toEqual({});
  });
});

// Past that bound the server stopped reading stdin, and a client that wrote still more before it read anything
// (4,000 requests or 512 KiB) blocked in its write for ever, the server waiting for it to read: a deadlock. Each
// request past the bound is now read, answered at once with an error that says to read the answers first, and
// dropped (nothing of it kept but that short answer), nothing in it run. Without that, this test ends at its timeout.
describe("tacit serve and a client that writes more requests than it keeps before it reads", () => {
  it("answers those past the bound with an error, runs none of them, and answers the rest once the client reads", async () => {
    const { dir, client, writeAllThenRead } = await unreadClient("tacit-write-all-past-", ["--no-check"]);
    // A call that writes a file named by its id: the file says whether it ran.
    const writes = (id: string) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "execute_typescript", arguments: { code: `requestFileSystem(".", (fs) => fs.access("ran-${id}").write("ran"));` } },
    });
    // 300 calls of a 15 KB answer each make the server wait for its client; 10,000 pings (900 KB) are more than
    // it keeps meanwhile (4,000 requests, 512 KiB); the calls that write files come last, past the bound.
    const interfaces = 300;
    const pings = 10_000;
    const messages = [
      writes("first"),
      ...Array.from({ length: interfaces }, (_, i) => ({ jsonrpc: "2.0", id: 100 + i, method: "tools/call", params: { name: "show_interface", arguments: {} } })),
      ...Array.from({ length: pings }, (_, i) => ({ jsonrpc: "2.0", id: `ping-${String(i).padStart(6, "0")}-${"x".repeat(60)}`, method: "ping" })),
      writes("last-1"),
      writes("last-2"),
    ];
    // Past the bound too: JSON that is no message at all (a bare null ended the server, unable to read its id).
    const requests = messages.map((message) => client.line(message)).join("") + "null\n1\n\"x\"\n";
    expect(requests.length).toBeGreaterThan(2 * QUEUED_REQUESTS_LIMIT_BYTES);
    expect(messages.length).toBeGreaterThan(2 * QUEUED_REQUESTS_LIMIT);
    const answered = await writeAllThenRead(requests);
    // Every request answered, once.
    expect(answered.map((r) => String(r.id)).sort()).toEqual(messages.map((m) => String(m.id)).sort());
    const byId = new Map(answered.map((r) => [r.id, r]));
    const refused = answered.filter((r) => r.error !== undefined);
    // Those past the bound are refused, and told why and what to do.
    expect(refused.length).toBeGreaterThan(pings - 2 * QUEUED_REQUESTS_LIMIT);
    for (const { error } of refused) {
      expect(error).toMatchObject({ code: NOT_TAKEN_WHILE_UNREAD });
      expect((error as { message: string }).message).toMatch(/was not taken, and nothing in it ran: .* read the answers .*, then send it again/);
    }
    // The first call ran; the last two were refused and wrote nothing.
    expect(byId.get("first")?.result?.content?.[0]?.text).toContain("nothing printed");
    expect(existsSync(path.join(dir, "ran-first"))).toBe(true);
    for (const id of ["last-1", "last-2"]) {
      expect(byId.get(id)?.error, id).toBeDefined();
      expect(existsSync(path.join(dir, `ran-${id}`)), id).toBe(false);
    }
    // The rest were kept and answered as ever.
    for (const { id } of messages.slice(1, 1 + interfaces)) expect(byId.get(id)?.result?.content?.[0]?.text).toContain("requestFileSystem");
    for (const answer of answered) if (answer.error === undefined && String(answer.id).startsWith("ping-")) expect(answer.result).toEqual({});
  });
});

describe("tacit serve and a cancellation written past the requests it keeps", () => {
  it("keeps the cancellation (a notification, which no error can answer): the call it names is cancelled", async () => {
    const { dir, client, stderr } = await unreadClient("tacit-write-all-cancel-", ["--no-check", "--exec-timeout-ms", "50000"]);
    const interfaces = 300;
    const pings = 10_000;
    // Waits without using the CPU until it is cancelled (or its 50 s time limit: this test's own, 60 s, ends first).
    const code = 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 45_000);\nrequestFileSystem(".", (fs) => fs.access("ran-kept").write("ran"));';
    const messages = [
      ...Array.from({ length: interfaces }, (_, i) => ({ jsonrpc: "2.0", id: 100 + i, method: "tools/call", params: { name: "show_interface", arguments: {} } })),
      { jsonrpc: "2.0", id: "kept", method: "tools/call", params: { name: "execute_typescript", arguments: { code } } },
      ...Array.from({ length: pings }, (_, i) => ({ jsonrpc: "2.0", id: `ping-${i}`, method: "ping" })),
      // Past the bound, among requests refused: dropped, the call would run to its end.
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "kept", reason: "the person stopped it" } },
    ];
    const exited = new Promise<number | null>((resolve) => client.child.once("exit", (code) => resolve(code)));
    const written = await Promise.race([
      new Promise<string>((resolve) => client.child.stdin.write(messages.map((m) => client.line(m)).join(""), (error) => resolve(error ? `failed: ${error.message}` : "written"))),
      exited.then((code) => `the server exited (${code}) first: ${stderr()}`),
    ]);
    expect(written).toBe("written");
    client.child.stdout.resume();
    // The call's end is logged (a cancelled call gets no answer, as MCP says).
    const logged = (): string[] => client.responses.filter((r) => r.method === "notifications/message").map((r) => String(r.params?.data));
    while (!logged().some((line) => line.startsWith("execute_typescript: ")) && client.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(logged().find((line) => line.startsWith("execute_typescript: "))).toMatch(/^execute_typescript: cancelled \(exit 1\)/);
    // Requests past the bound were refused: the cancellation did come past it.
    expect(client.responses.some((r) => String(r.id).startsWith("ping-") && r.error !== undefined)).toBe(true);
    expect(client.responses.find((r) => r.id === "kept")).toBeUndefined();
    expect(existsSync(path.join(dir, "ran-kept"))).toBe(false);
  });
});

describe("tacit serve and a client that writes without end and never reads", () => {
  it("refuses requests only up to a bound of their answers, then reads no more until the client reads, and answers every one", async () => {
    const { dir, client, stderr } = await unreadClient("tacit-write-all-bound-", []);
    // 30,000 pings (900 KB) are more than the server answers (1,000), keeps (4,000) and refuses (10,000) while its
    // client reads nothing, by far more than a pipe holds.
    const pings = 30_000;
    const ids = Array.from({ length: pings }, (_, i) => `p${i}`);
    expect(pings).toBeGreaterThan(1000 + QUEUED_REQUESTS_LIMIT + REFUSED_REQUESTS_LIMIT + 10_000);
    let allRead = false;
    const allWritten = new Promise<void>((resolve) => client.child.stdin.write(ids.map((id) => client.line({ jsonrpc: "2.0", id, method: "ping" })).join(""), () => resolve()));
    const stopped = "tacit reads nothing more from it until it reads them";
    await Promise.race([
      (async () => {
        while (!stderr().includes(stopped) && client.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      allWritten.then(() => (allRead = true)),
    ]);
    expect(allRead, "the server read every ping while its client read none of the answers").toBe(false);
    expect(stderr()).toMatch(/the client has written more than tacit keeps for it while it reads none of its answers \(10,000 requests past those kept, each answered with an error\)/);
    client.child.stdout.resume();
    const answered = (): Answer[] => client.responses.filter((r) => typeof r.id === "string" && r.id.startsWith("p"));
    while (answered().length < pings && client.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered().map((r) => String(r.id)).sort()).toEqual([...ids].sort());
    // Both kinds: kept and answered, refused at once.
    expect(answered().filter((r) => r.error !== undefined).length).toBeGreaterThan(1000);
    expect(answered().filter((r) => r.error === undefined).length).toBeGreaterThan(1000);
  });
});
