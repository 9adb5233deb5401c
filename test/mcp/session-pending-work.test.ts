// A session's next snippet starts without waiting for the classified work the last one left:
// its classified writes and its secure output, which wait for the map functions computing them.
// Waited for, the next snippet's Date.now() minus a time the last one saved told how long those
// functions ran on a secret (2307 ms against 73 ms, through tacit serve). The work is kept
// pending in the session: a later classified read waits for the writes, and everything lands
// after the session is deleted (deleting it no longer waits for that work either: its answer told
// the next call the same time), so the files are read once it has landed.
//
// Judged by what the agent's own code prints: a map that never ends for one secret and answers
// at once for another, under a time limit; the attack's clock is in the script, not in the test.
// Waited for, the looping map held the next snippet until the limit stopped it (seconds); now
// both secrets' snippets print the same.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectServe, createSession, fileOnce, runInSession, tempDir } from "../helpers.js";
import { makeCanary } from "../files/fixtures.js";

const LIMIT_MS = 4000;

const ends: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const end of ends.splice(0)) await end();
});

interface Run {
  first: { exitCode: number; stdout: string };
  second: { exitCode: number; stdout: string };
  /** A file of the work directory, once `holds` says it has landed (see fileOnce). */
  file: (name: string, holds: (text: string) => boolean) => Promise<string>;
  sink: (holds: (text: string) => boolean) => Promise<string>;
  canary: string;
}

/** Two snippets of one session on a server of its own, whose `.env` holds `prefix` and a canary; the session deleted after. */
async function twoSnippets(prefix: string): Promise<Run> {
  const { dir, cleanup } = tempDir("tacit-session-pending-");
  ends.push(cleanup);
  const work = path.join(dir, "work");
  const sink = path.join(dir, "sink.log");
  const canary = makeCanary();
  mkdirSync(work);
  writeFileSync(path.join(work, ".env"), `${prefix}${canary}`);
  const client: Client = await connectServe(["--no-check", "--exec-timeout-ms", String(LIMIT_MS), "--secure-output", sink], work);
  ends.unshift(() => client.close());
  const session = await createSession(client);
  const first = await runInSession(
    client,
    session,
    `requestFileSystem(".", (fs) => {
  const value = fs.readClassified(".env").map((t) => {
    if (t.startsWith("loop")) for (;;) {}
    return t + "!";
  });
  fs.writeClassified(".env.out", value);
  println("first", value);
});
const saved = Date.now();`,
  );
  // The attack: how long after the last snippet's end this one started. Waited for, the
  // looping map's snippet ended when the limit stopped it, seconds later.
  const second = await runInSession(
    client,
    session,
    `println(Date.now() - saved < ${LIMIT_MS / 2} ? "started at once" : "started late");
requestFileSystem(".", (fs) => fs.writeClassified(".env.copy", fs.readClassified(".env.out")));
println("second");`,
  );
  // What the snippets left lands after the session is deleted.
  await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
  return { first, second, file: (name, holds) => fileOnce(path.join(work, name), holds), sink: (holds) => fileOnce(sink, holds), canary };
}

describe("a session's next snippet", () => {
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
      const { dir, cleanup } = tempDir("tacit-session-delete-");
      ends.push(cleanup);
      writeFileSync(path.join(dir, ".env"), `${prefix}${makeCanary()}`);
      const client: Client = await connectServe(["--no-check", "--exec-timeout-ms", String(LIMIT_MS)], dir);
      ends.unshift(() => client.close());
      const session = await createSession(client);
      const snippet = await runInSession(
        client,
        session,
        `requestFileSystem(".", (fs) => {
  fs.writeClassified(".env.out", fs.readClassified(".env").map((t) => {
    if (t.startsWith("loop")) for (;;) {}
    return t + "!";
  }));
  fs.access("saved").write(String(Date.now()));
});`,
      );
      expect(snippet).toMatchObject({ exitCode: 0 });
      // Waited for, the deletion was answered when the limit stopped the looping map, seconds later.
      await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
      const next = await client.callTool({
        name: "execute_typescript",
        arguments: { code: `requestFileSystem(".", (fs) => println(Date.now() - Number(fs.access("saved").read()) < ${LIMIT_MS / 2} ? "started at once" : "started late"));` },
      });
      expect(next.structuredContent, prefix).toMatchObject({ exitCode: 0, stdout: "started at once\n" });
    }
  }, 60_000);

  it("lands the writes of a file in the order they were asked for, whichever value took longer", async () => {
    // The first snippet's value takes a while to compute; the next snippet, no longer waiting
    // for it, writes the same file with a value known at once, which must be what it keeps.
    const { dir, cleanup } = tempDir("tacit-session-order-");
    ends.push(cleanup);
    writeFileSync(path.join(dir, ".env"), "slow");
    const client: Client = await connectServe(["--no-check"], dir);
    ends.unshift(() => client.close());
    const session = await createSession(client);
    const first = await runInSession(
      client,
      session,
      `requestFileSystem(".", (fs) => fs.writeClassified(".env.out", fs.readClassified(".env").map((t) => {
  let x = 0;
  for (let i = 0; i < 3e8; i++) x += i % 7;
  return "the first value, longer than the second: " + t + x;
})));`,
    );
    const second = await runInSession(client, session, `requestFileSystem(".", (fs) => fs.writeClassified(".env.out", classify("second")));`);
    expect(first).toMatchObject({ exitCode: 0 });
    expect(second).toMatchObject({ exitCode: 0 });
    await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
    expect(await fileOnce(path.join(dir, ".env.out"), (text) => text === "second")).toBe("second");
  }, 60_000);
});
