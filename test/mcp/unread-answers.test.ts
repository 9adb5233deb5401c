// A client of tacit serve that sends requests and does not read its answers: the server kept
// every answer in memory until the client read it, without bound (2,000 show_interface calls
// took it from 62 MB to 257 MB; 100 calls each printing 4 MB, to 2.1 GB). Past 4 MiB unread,
// it now reads no more requests and starts no evaluation until the client has read them; then
// everything is answered. Each test waits for the server's word that it waits (or, where it does
// not, for what it would have done without waiting), so nothing depends on timings.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NOT_TAKEN_WHILE_UNREAD } from "../../runner/mcp-stdin.js";
import { tempDirWithHome } from "../helpers.js";
import { type RawClient, rawClient } from "./raw-client.js";

interface Answer {
  id?: unknown;
  method?: string;
  params?: { data?: unknown };
  result?: { content?: Array<{ text: string }>; structuredContent?: { stdout: string } };
  error?: unknown;
}

const WAITS = "the client has left";

const ends: Array<() => void> = [];
afterAll(() => {
  for (const end of ends.splice(0)) end();
});

function server(args: string[], config: object = {}): { client: RawClient<Answer>; dir: string; stderr: () => string } {
  const { dir, env, cleanup } = tempDirWithHome("tacit-unread-answers-");
  writeFileSync(path.join(dir, "config.json"), JSON.stringify(config));
  const client = rawClient<Answer>([...args, "--config", "config.json"], dir, env);
  let stderr = "";
  client.child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  ends.push(() => {
    client.close();
    cleanup();
  });
  return { client, dir, stderr: () => stderr };
}

/** Settles once `holds` is true, or once `client`'s server has ended (the test's assertions then say what went wrong). */
async function until(client: RawClient<Answer>, holds: () => boolean): Promise<void> {
  while (!holds() && client.child.exitCode === null && client.child.signalCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe.concurrent("tacit serve and a client that does not read its answers", () => {
  it("takes none of its requests past a few MiB unread; once it reads, every request is answered", async () => {
    const { client, stderr } = server([]);
    await client.initialize();
    client.child.stdout.pause();
    // 2,000 calls of 15 KB answers each: without the bound the server read them all and held every
    // answer (2,000 took it from 62 MB to 257 MB; 20,000 would take 2 GB). Each request is padded
    // to 1 KB, so that what a pipe and the server's stdin hold (a few hundred KiB) is a fraction of them.
    const calls = 2000;
    const padding = "p".repeat(1000);
    const requests = Array.from({ length: calls }, (_, i) =>
      client.line({ jsonrpc: "2.0", id: 100 + i, method: "tools/call", params: { name: "show_interface", arguments: {}, _meta: { padding } } }),
    );
    client.child.stdin.write(requests.join(""));
    await until(client, () => stderr().includes(WAITS));
    client.child.stdout.resume();
    const answered = (): Answer[] => client.responses.filter((r) => typeof r.id === "number" && r.id >= 100);
    await until(client, () => answered().length === calls);
    expect(new Set(answered().map((r) => r.id)).size).toBe(calls);
    // It waited after the first 4 MiB of answers (about 300 requests, 300 KB), and kept 512 KiB of requests more
    // for when its client reads; those past that were answered at once with an error, and not run (see
    // write-all-then-read.test.ts, which shows where it stops reading altogether).
    const ran = answered().filter((answer) => answer.result !== undefined);
    const refused = answered().filter((answer) => answer.error !== undefined);
    expect(ran.length + refused.length).toBe(calls);
    expect(ran.length, "calls the server took while its client read none of the answers").toBeLessThan(calls / 2);
    for (const answer of ran) expect(answer.result?.content?.[0]?.text).toContain("requestFileSystem");
    for (const answer of refused) expect(answer.error).toMatchObject({ code: NOT_TAKEN_WHILE_UNREAD, message: expect.stringContaining("was not taken, and nothing in it ran") });
    // 2,000 sends waited for the output to drain, each with a listener of the SDK's: Node warned of a leak on stderr.
    expect(stderr()).not.toContain("MaxListenersExceededWarning");
    // The client is told why, once it reads.
    const told = client.responses.find((r) => r.method === "notifications/message" && String(r.params?.data).includes(WAITS));
    expect(String(told?.params?.data)).toMatch(/unread: tacit takes none of its requests and starts no evaluation until it has read them/);
    expect(stderr().split(WAITS).length - 1, "the warning is said once").toBe(1);
  });

  it("counts short answers too: 20,000 pings unread are not all read, though their answers take less than a MiB", async () => {
    const { client, stderr } = server([]);
    await client.initialize();
    client.child.stdout.pause();
    // Each ping's request is held by the SDK until its answer is written (some 9 KB): 200,000 took
    // the server to 982 MB, with far less than the byte bound unread. 20,000 is 900 KB of requests.
    const pings = 20_000;
    const requests = Array.from({ length: pings }, (_, i) => client.line({ jsonrpc: "2.0", id: `p${i}`, method: "ping" }));
    let allRead = false;
    const allWritten = new Promise<void>((resolve) => client.child.stdin.write(requests.join(""), () => resolve()));
    await Promise.race([until(client, () => stderr().includes(WAITS)), allWritten.then(() => (allRead = true))]);
    expect(allRead, "the server read every ping while its client read none of the answers").toBe(false);
    expect(stderr()).toMatch(/the client has left 1,00\d answers \(0\.\d MiB\) unread/);
    client.child.stdout.resume();
    const answered = (): number => client.responses.filter((r) => typeof r.id === "string" && r.id.startsWith("p")).length;
    await until(client, () => answered() === pings);
    expect(answered()).toBe(pings);
  });

  it("starts no evaluation while its answers are unread: queued calls run once the client has read them", async () => {
    const { client, dir, stderr } = server(["--no-check", "--exec-timeout-ms", "30000"], { maxConcurrentEvaluations: 1 });
    await client.initialize();
    client.child.stdout.pause();
    // Each answer holds 3 MB of output twice: one is more than the server lets a client leave unread.
    const calls = 4;
    const code = `requestFileSystem(".", (fs) => fs.access("runs.txt").append("ran\\n"));\nprint("y".repeat(3_000_000));\n`;
    for (let i = 0; i < calls; i++) client.send({ jsonrpc: "2.0", id: 100 + i, method: "tools/call", params: { name: "execute_typescript", arguments: { code } } });
    const runs = (): number => {
      try {
        return readFileSync(path.join(dir, "runs.txt"), "utf8").split("\n").length - 1;
      } catch {
        return 0;
      }
    };
    // Either the server says it waits for the client, or every call has run unread (what it did before).
    await Promise.race([until(client, () => stderr().includes(WAITS)), until(client, () => runs() === calls)]);
    // The first call's answer made it wait; the second may have started before that answer was sent.
    expect(runs(), "calls that ran before the client read anything").toBeLessThanOrEqual(2);
    client.child.stdout.resume();
    for (let i = 0; i < calls; i++) expect((await client.answer(100 + i)).result?.structuredContent?.stdout).toBe("y".repeat(3_000_000));
    expect(runs()).toBe(calls);
  });

  it("sends no progress for a call held meanwhile; once the client reads, the call runs and is answered", async () => {
    const { client, stderr } = server(["--no-check", "--exec-timeout-ms", "30000"], { maxConcurrentEvaluations: 1 });
    await client.initialize();
    client.child.stdout.pause();
    const call = (id: number, code: string, progressToken?: string) =>
      client.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "execute_typescript", arguments: { code }, ...(progressToken ? { _meta: { progressToken } } : {}) } });
    // The first answer makes the server wait; the second call takes the slot as the first ends,
    // before its answer; the third is held, and asked for progress.
    call(100, 'print("y".repeat(3_000_000));');
    call(101, 'print("second");');
    const sentAt = Date.now();
    call(102, 'print("third");', "held");
    await until(client, () => stderr().includes(WAITS));
    // Long enough for progress (once a second) to have been sent without the change.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const readFrom = Date.now() - sentAt;
    client.child.stdout.resume();
    expect(JSON.stringify((await client.answer(102)).result)).toContain("third");
    // A notification saying the call had run for less than the time before the client read was
    // written before it read (the server took the call after the test sent it): while it waited.
    const progress = client.responses.filter((r) => r.method === "notifications/progress");
    const whileWaiting = progress.filter((r) => (r.params as { progress: number }).progress < readFrom - 200);
    expect(whileWaiting, "progress notifications sent while the client read nothing").toEqual([]);
  });

  it("that closes its end of stdout: the server stops reading it, exits 1 and says why", async () => {
    const { client, stderr } = server([]);
    await client.initialize();
    // The client's end goes; the server's next write (its first ping, or an answer) fails with EPIPE.
    client.child.stdout.destroy();
    client.child.stdin.on("error", () => undefined);
    const exited = new Promise<number | null>((resolve) => client.child.once("exit", (code) => resolve(code)));
    // Without the stop, the server read all 50,000 (each held by the SDK until an answer that can never be written).
    const pings = Array.from({ length: 50_000 }, (_, i) => client.line({ jsonrpc: "2.0", id: `p${i}`, method: "ping" })).join("");
    const readAll = new Promise<boolean>((resolve) => client.child.stdin.write(pings, (error) => resolve(!error)));
    const first = await Promise.race([exited.then(() => "exited"), readAll.then((all) => (all ? "read every ping" : "exited"))]);
    expect(first).toBe("exited");
    expect(await exited).toBe(1);
    expect(stderr()).toContain("tacit: the MCP client closed its end of stdout: no answer can reach it");
  });
});
