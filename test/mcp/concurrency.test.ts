// `tacit serve` runs at most `maxConcurrentEvaluations` execute_typescript calls at once (each
// is a sandbox process with its own heap): a client sending many at once cannot start a
// process per call. Later calls wait their turn, in order; one cancelled while it waits never
// runs. Each script signals through files it writes, so the test sees what ran, not timings.

import { setMaxListeners } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, describe, expect, it } from "vitest";
import { CALLS_IN_FLIGHT_LIMIT } from "../../runner/limits.js";
import { connectServe } from "../helpers.js";

/**
 * A tacit serve of the test's own, under maxConcurrentEvaluations: 1, in a temp dir of its own
 * (ended after the file). The tests run concurrently: each mostly waits (for a call not to have
 * run while another holds the only slot), and shares neither the slot nor the release file.
 */
async function server(): Promise<{ dir: string; client: Client }> {
  const dir = mkdtempSync(path.join(tmpdir(), "tacit-serve-concurrency-"));
  writeFileSync(path.join(dir, "config.json"), JSON.stringify({ maxConcurrentEvaluations: 1 }));
  const client = await connectServe(["--no-check", "--exec-timeout-ms", "20000", "--config", "config.json"], dir);
  ends.push(async () => {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, client };
}

const ends: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const end of ends.splice(0)) await end();
});

/**
 * Writes `name`, then holds its slot until the file `release` exists: it looks every 20 ms, not
 * in a busy loop, which kept the sandbox and the server's host spinning on requests (two cores'
 * worth, on a machine with two) through each test's waits.
 */
const holding = (name: string) =>
  `await requestFileSystem(".", async (fs) => {\n  fs.access("${name}").write("x");\n  while (!fs.access("release").exists) await new Promise((resolve) => setTimeout(resolve, 20));\n});\n`;
const marking = (name: string) => `requestFileSystem(".", (fs) => fs.access("${name}").write("x"));\nprintln("${name} ran");\n`;

async function until(dir: string, file: string): Promise<void> {
  for (let i = 0; i < 400 && !existsSync(path.join(dir, file)); i++) await sleep(25);
  expect(existsSync(path.join(dir, file)), `${file} was written`).toBe(true);
}

describe.concurrent("tacit serve: concurrent execute_typescript calls", () => {
  it("runs one at a time under maxConcurrentEvaluations: 1, the next when the first has finished", async () => {
    const { dir, client } = await server();
    const first = client.callTool({ name: "execute_typescript", arguments: { code: holding("first-started") } });
    await until(dir, "first-started");
    const second = client.callTool({ name: "execute_typescript", arguments: { code: marking("second") } });
    await sleep(1500);
    expect(existsSync(path.join(dir, "second")), "the second call ran while the first held the only slot").toBe(false);
    writeFileSync(path.join(dir, "release"), "");
    expect((await first).isError).toBeFalsy();
    const answer = await second;
    expect(answer.isError).toBeFalsy();
    expect((answer.structuredContent as { stdout: string }).stdout).toBe("second ran\n");
    expect(existsSync(path.join(dir, "second"))).toBe(true);
    rmSync(path.join(dir, "release"));
  });

  it("a call cancelled while it waits never runs, and the calls after it still do", async () => {
    const { dir, client } = await server();
    const first = client.callTool({ name: "execute_typescript", arguments: { code: holding("holder-started") } });
    await until(dir, "holder-started");
    const abort = new AbortController();
    const cancelled = client.callTool({ name: "execute_typescript", arguments: { code: marking("cancelled") } }, undefined, { signal: abort.signal });
    const after = client.callTool({ name: "execute_typescript", arguments: { code: marking("after") } });
    await sleep(1500); // long enough for it to have run, had it not waited
    expect(existsSync(path.join(dir, "after")), "a call ran while another held the only slot").toBe(false);
    abort.abort("the test cancels it");
    await expect(cancelled).rejects.toThrow();
    writeFileSync(path.join(dir, "release"), "");
    expect((await first).isError).toBeFalsy();
    const answer = await after;
    expect((answer.structuredContent as { stdout: string }).stdout).toBe("after ran\n");
    await sleep(500);
    expect(existsSync(path.join(dir, "cancelled")), "the cancelled call ran").toBe(false);
  });

  it("refuses a call past what the server holds at once, before it waits, and takes calls again as they end", async () => {
    const { dir, client } = await server();
    // Each waiting call holds its code (a message may be 10 MiB) until it ends: unbounded,
    // calls sent faster than they end filled the server's heap.
    const holder = client.callTool({ name: "execute_typescript", arguments: { code: holding("bound-holder") } });
    await until(dir, "bound-holder");
    const abort = new AbortController();
    // One listener per waiting call (the SDK client's): not a leak, and no warning in the suite's output.
    setMaxListeners(CALLS_IN_FLIGHT_LIMIT, abort.signal);
    const waiting = Array.from({ length: CALLS_IN_FLIGHT_LIMIT - 1 }, (_, i) =>
      client.callTool({ name: "execute_typescript", arguments: { code: marking(`waiting-${i}`) } }, undefined, { signal: abort.signal }).catch(() => "cancelled"),
    );
    const refused = await client.callTool({ name: "execute_typescript", arguments: { code: marking("one-too-many") } });
    expect(refused.isError).toBe(true);
    expect((refused.content as Array<{ text: string }>)[0]!.text).toContain(
      `refused before it ran: ${CALLS_IN_FLIGHT_LIMIT} calls are already under way or waiting for their turn`,
    );
    expect((refused.content as Array<{ text: string }>)[0]!.text).toContain("Wait for the answers to calls already sent before sending more");
    abort.abort("the test cancels them");
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(["cancelled"]));
    writeFileSync(path.join(dir, "release"), "");
    expect((await holder).isError).toBeFalsy();
    const admitted = await client.callTool({ name: "execute_typescript", arguments: { code: marking("admitted-again") } });
    expect((admitted.structuredContent as { stdout: string }).stdout).toBe("admitted-again ran\n");
    expect(existsSync(path.join(dir, "one-too-many")), "the refused call ran").toBe(false);
    expect(existsSync(path.join(dir, "waiting-0")), "a cancelled call ran").toBe(false);
    rmSync(path.join(dir, "release"));
  }, 60_000);

  it("counts session snippets too: one waits while another call holds the only slot, and holds it itself", async () => {
    const { dir, client } = await server();
    // Snippets ran outside the limit: with maxSessions at 100, a client could run a hundred
    // sandboxes at once (each with its own heap) by spreading its calls over sessions.
    const session = async (): Promise<string> =>
      ((await client.callTool({ name: "create_repl_session", arguments: {} })).structuredContent as { session_id: string }).session_id;
    const [a, b] = [await session(), await session()];
    const first = client.callTool({ name: "execute_typescript", arguments: { code: holding("call-holds") } });
    await until(dir, "call-holds");
    const inSession = client.callTool({ name: "execute_in_session", arguments: { session_id: a, code: marking("session-a") } });
    await sleep(1500);
    expect(existsSync(path.join(dir, "session-a")), "a snippet ran while a call held the only slot").toBe(false);
    writeFileSync(path.join(dir, "release"), "");
    expect((await first).isError).toBeFalsy();
    expect(((await inSession).structuredContent as { stdout: string }).stdout).toBe("session-a ran\n");
    rmSync(path.join(dir, "release"));

    // And a snippet holds the slot against another session's.
    const holder = client.callTool({ name: "execute_in_session", arguments: { session_id: a, code: holding("snippet-holds") } });
    await until(dir, "snippet-holds");
    const other = client.callTool({ name: "execute_in_session", arguments: { session_id: b, code: marking("session-b") } });
    await sleep(1500);
    expect(existsSync(path.join(dir, "session-b")), "two sessions' snippets ran at once under a limit of 1").toBe(false);
    writeFileSync(path.join(dir, "release"), "");
    expect((await holder).isError).toBeFalsy();
    expect(((await other).structuredContent as { stdout: string }).stdout).toBe("session-b ran\n");
    rmSync(path.join(dir, "release"));
  }, 60_000);

  it("counts a session's rebuild too: replaying its snippets after a failure holds a slot", async () => {
    const { dir, client } = await server();
    // A failed snippet's session replays every earlier snippet in a new sandbox at once, and
    // did so outside the limit: a client failing a snippet in each of its sessions ran as many
    // replays at once (each a sandbox, each up to the time limit per snippet) as it had sessions.
    const s = ((await client.callTool({ name: "create_repl_session", arguments: {} })).structuredContent as { session_id: string }).session_id;
    // Four seconds of waiting, not of a busy loop: the replay holds its slot as long, without a
    // core (twice the 2 s the test gives a call to run meanwhile; 5 s made this the file's longest
    // test). Only the replay waits: the snippet reads the clock (not an effect, so not answered
    // from the recording) and waits once it is past `waitFrom`, which the test lets pass before
    // the failure. The first run, sent before then to the session's sandbox (started by the
    // snippet before it), needs no wait (4 s of the file's time); run late on a loaded machine,
    // it waits too, which changes nothing of what is tested.
    expect((await client.callTool({ name: "execute_in_session", arguments: { session_id: s, code: "const warm = 1;" } })).isError).toBeFalsy();
    const waitFrom = Date.now() + 1000;
    const busy = `const started = Date.now();\nif (started > ${waitFrom}) await new Promise((resolve) => setTimeout(resolve, 4000));\n`;
    expect((await client.callTool({ name: "execute_in_session", arguments: { session_id: s, code: busy } }, undefined, { timeout: 60_000 })).isError).toBeFalsy();
    while (Date.now() <= waitFrom) await sleep(50);
    // The failure starts the rebuild, whose replay of the snippet waits 4 s.
    await client.callTool({ name: "execute_in_session", arguments: { session_id: s, code: 'throw new Error("fail")' } });
    const during = client.callTool({ name: "execute_typescript", arguments: { code: marking("during-rebuild") } });
    await sleep(2000);
    expect(existsSync(path.join(dir, "during-rebuild")), "a call ran while a session's rebuild held the only slot").toBe(false);
    expect(((await during).structuredContent as { stdout: string }).stdout).toBe("during-rebuild ran\n");
    const after = await client.callTool({ name: "execute_in_session", arguments: { session_id: s, code: "typeof started" } });
    expect((after.structuredContent as { stdout: string }).stdout).toBe('"number"\n');
  }, 60_000);
});
