// A call of tacit serve is answered, and a session's next snippet starts, without waiting for
// the classified work the last script left: its classified writes and its secure output, which
// wait for the map functions computing them. Waited for, the next call's Date.now() minus a time
// the last one saved told how long those functions ran on a secret (through tacit serve: 3907 ms
// against 182 ms for a one-shot call, 2307 ms against 73 ms for a session's snippet). The work is
// kept pending in the server or session: a later classified read waits for the writes, and they
// land, in order, before it stops. Deleting a session does not wait for it either: its answer
// told the next call the same time.
//
// Judged by what the agent's own code prints: a map that never ends for one secret and answers
// at once for another, under a time limit; the attack's clock is in the script, not in the test.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectServe, createSession, fileOnce, runInSession, tempDir, type ToolResult } from "../helpers.js";
import { makeCanary } from "../files/fixtures.js";

const LIMIT_MS = 4000;

// The tests run concurrently (each has servers and directories of its own, and mostly waits:
// for a map stopped at the time limit, for work landing), so what they started ends after the
// file: a test's afterEach would close the servers of tests still running.
const ends: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const end of ends.splice(0)) await end();
});

/**
 * A map that never ends when the secret starts with "loop", and answers at once otherwise. It
 * blocks (Atomics.wait, no time limit) rather than spins: to the host a job that never returns
 * all the same, until the limit kills its process, without taking a core meanwhile.
 */
const LOOPING_MAP = `(t) => {
    if (t.startsWith("loop")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    return t + "!";
  }`;

const STARTED = `Date.now() - Number(fs.access("saved").read()) < ${LIMIT_MS / 2} ? "started at once" : "started late"`;

interface World {
  dir: string;
  canary: string;
  client: Client;
  /** A file of the directory, once `holds` says it has landed (see fileOnce). */
  file: (name: string, holds: (text: string) => boolean) => Promise<string>;
  sink: (holds: (text: string) => boolean) => Promise<string>;
}

/** A server of its own, with the time limit and a secure sink, whose `.env` holds `secret` (or `prefix` and a canary). */
async function world(prefix: string, secret = `${prefix}${makeCanary()}`): Promise<World> {
  const temp = tempDir("tacit-pending-work-");
  ends.push(temp.cleanup);
  const dir = path.join(temp.dir, "work");
  const sink = path.join(temp.dir, "sink.log");
  mkdirSync(dir);
  writeFileSync(path.join(dir, ".env"), secret);
  const client = await connectServe(["--no-check", "--exec-timeout-ms", String(LIMIT_MS), "--secure-output", sink], dir);
  ends.unshift(() => client.close());
  return {
    dir,
    canary: secret.slice(prefix.length),
    client,
    file: (name, holds) => fileOnce(path.join(dir, name), holds),
    sink: (holds) => fileOnce(sink, holds),
  };
}

async function execute(client: Client, code: string): Promise<ToolResult> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  return response.structuredContent as unknown as ToolResult;
}

const deleteSession = (client: Client, session: string) => client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });

describe.concurrent("a one-shot call of tacit serve", () => {
  /** Two execute_typescript calls: the first leaves a map's write and print; the second times its start and reads the write back. */
  async function twoCalls(prefix: string) {
    const w = await world(prefix);
    const first = await execute(
      w.client,
      `requestFileSystem(".", (fs) => {
  const value = fs.readClassified(".env").map(${LOOPING_MAP});
  fs.writeClassified(".env.out", value);
  println("first", value);
  fs.access("saved").write(String(Date.now()));
});`,
    );
    // The attack: how long after the last call's script ended this one started. Waited for, the
    // looping map's call was answered when the limit stopped it, seconds later.
    const second = await execute(
      w.client,
      `requestFileSystem(".", (fs) => {
  println(${STARTED});
  fs.writeClassified(".env.copy", fs.readClassified(".env.out"));
});
println("second");`,
    );
    return { ...w, first, second };
  }

  it("is answered without waiting for the classified work it left, and that work still lands, in order", async () => {
    const quick = await twoCalls("fast-");
    const looping = await twoCalls("loop-");
    for (const run of [quick, looping]) {
      expect(run.first).toMatchObject({ exitCode: 0, stdout: "first Classified(***)\n" });
      expect(run.second).toMatchObject({ exitCode: 0, stdout: "started at once\nsecond\n" });
      expect(run.first.stdout + run.second.stdout).not.toContain(run.canary);
    }
    // The quick value was written, and read back by the next call after its write landed.
    const value = `fast-${quick.canary}!`;
    expect(await quick.file(".env.copy", (text) => text === value)).toBe(value);
    expect(await quick.file(".env.out", () => true)).toBe(value);
    // Each call's own secure output, in order (the second call's may come between the first's
    // text and a value still being computed, as two calls at once may).
    const printed = (text: string): string => text.replace("started at once\nsecond\n", "");
    expect(printed(await quick.sink((text) => printed(text) === `first ${value}\n`))).toBe(`first ${value}\n`);
    // The looping one was stopped at the first call's limit: its file left empty, its print noted unavailable.
    const unavailable = /^first <classified value unavailable: [^\n]*>\n/;
    expect(printed(await looping.sink((text) => unavailable.test(printed(text))))).toMatch(unavailable);
    expect(await looping.file(".env.out", () => true)).toBe("");
    expect(await looping.file(".env.copy", () => true)).toBe("");
  }, 60_000);
});

describe.concurrent("a session's next snippet", () => {
  /** Two snippets of one session: the first leaves a map's write and print; the second times its start and reads the write back. The session is deleted after. */
  async function twoSnippets(prefix: string) {
    const w = await world(prefix);
    const session = await createSession(w.client);
    const first = await runInSession(
      w.client,
      session,
      `requestFileSystem(".", (fs) => {
  const value = fs.readClassified(".env").map(${LOOPING_MAP});
  fs.writeClassified(".env.out", value);
  println("first", value);
});
const saved = Date.now();`,
    );
    // The attack: how long after the last snippet's end this one started. Waited for, the
    // looping map's snippet ended when the limit stopped it, seconds later.
    const second = await runInSession(
      w.client,
      session,
      `println(Date.now() - saved < ${LIMIT_MS / 2} ? "started at once" : "started late");
requestFileSystem(".", (fs) => fs.writeClassified(".env.copy", fs.readClassified(".env.out")));
println("second");`,
    );
    // What the snippets left lands after the session is deleted.
    await deleteSession(w.client, session);
    return { ...w, first, second };
  }

  it("starts without waiting for the classified work the last one left, and that work still lands, in order", async () => {
    const quick = await twoSnippets("fast-");
    const looping = await twoSnippets("loop-");
    for (const run of [quick, looping]) {
      expect(run.first).toMatchObject({ exitCode: 0, stdout: "first Classified(***)\n" });
      expect(run.second).toMatchObject({ exitCode: 0, stdout: "started at once\nsecond\n" });
      expect(run.first.stdout + run.second.stdout).not.toContain(run.canary);
    }
    // The quick value was written, read back after its write by the next snippet, and printed
    // before what the next snippet printed; the looping one was stopped at the first snippet's
    // limit, its file left empty and its print noted unavailable.
    const value = `fast-${quick.canary}!`;
    expect(await quick.file(".env.out", (text) => text === value)).toBe(value);
    expect(await quick.file(".env.copy", (text) => text === value)).toBe(value);
    const quickSink = `first ${value}\nstarted at once\nsecond\n`;
    expect(await quick.sink((text) => text === quickSink)).toBe(quickSink);
    const loopingSink = /^first <classified value unavailable: [^\n]*>\n(?:[^\n]*\n)*started at once\nsecond\n/;
    expect(await looping.sink((text) => loopingSink.test(text))).toMatch(loopingSink);
    expect(await looping.file(".env.out", () => true)).toBe("");
    expect(await looping.file(".env.copy", () => true)).toBe("");
  }, 60_000);

  it("is not waited for by the session's deletion: the next call cannot time the map by it", async () => {
    for (const prefix of ["fast-", "loop-"]) {
      const w = await world(prefix);
      const session = await createSession(w.client);
      const snippet = await runInSession(
        w.client,
        session,
        `requestFileSystem(".", (fs) => {
  fs.writeClassified(".env.out", fs.readClassified(".env").map(${LOOPING_MAP}));
  fs.access("saved").write(String(Date.now()));
});`,
      );
      expect(snippet).toMatchObject({ exitCode: 0 });
      // Waited for, the deletion was answered when the limit stopped the looping map, seconds later.
      await deleteSession(w.client, session);
      const next = await execute(w.client, `requestFileSystem(".", (fs) => println(${STARTED}));`);
      expect(next, prefix).toMatchObject({ exitCode: 0, stdout: "started at once\n" });
    }
  }, 60_000);

  it("lands the writes of a file in the order they were asked for, whichever value took longer", async () => {
    // The first snippet's value takes a while to compute; the next snippet, no longer waiting
    // for it, writes the same file with a value known at once, which must be what it keeps. The
    // map waits 2 s (Atomics.wait) rather than spins 3e8 times (0.7 s of a core, longer on a loaded
    // machine): to the host a job under way all the same, whose value comes after the second's
    // (and within the snippet's 4 s limit, which bounds the work it leaves).
    const w = await world("", "slow");
    const session = await createSession(w.client);
    const first = await runInSession(
      w.client,
      session,
      `requestFileSystem(".", (fs) => fs.writeClassified(".env.out", fs.readClassified(".env").map((t) => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
  return "the first value, longer than the second: " + t;
})));`,
    );
    const second = await runInSession(w.client, session, `requestFileSystem(".", (fs) => fs.writeClassified(".env.out", classify("second")));`);
    expect(first).toMatchObject({ exitCode: 0 });
    expect(second).toMatchObject({ exitCode: 0 });
    await deleteSession(w.client, session);
    expect(await w.file(".env.out", (text) => text === "second")).toBe("second");
  }, 60_000);
});
