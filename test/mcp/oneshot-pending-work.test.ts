// A one-shot call of tacit serve is answered when its script ends, without waiting for the
// classified work it left: its classified writes and its secure output, which wait for the map
// functions computing them. Waited for, the next call's Date.now() minus a time the last one saved
// in a file told how long those functions ran on a secret (3907 ms against 182 ms, through tacit
// serve), as a session's next snippet's did before it stopped waiting. The work is kept pending in
// the server: a later call's classified read waits for the writes, and they land before it stops.
//
// Judged by what the agent's own code prints: a map that never ends for one secret and answers at
// once for another, under a time limit; the attack's clock is in the script, not in the test.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectServe, fileOnce, tempDir, type ToolResult } from "../helpers.js";
import { makeCanary } from "../files/fixtures.js";

const LIMIT_MS = 4000;

const ends: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const end of ends.splice(0)) await end();
});

async function execute(client: Client, code: string): Promise<ToolResult> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  return response.structuredContent as unknown as ToolResult;
}

/** Two execute_typescript calls on a server of its own, whose `.env` holds `prefix` and a canary. */
async function twoCalls(prefix: string) {
  const { dir, cleanup } = tempDir("tacit-oneshot-pending-");
  ends.push(cleanup);
  const work = path.join(dir, "work");
  const sink = path.join(dir, "sink.log");
  const canary = makeCanary();
  mkdirSync(work);
  writeFileSync(path.join(work, ".env"), `${prefix}${canary}`);
  const client: Client = await connectServe(["--no-check", "--exec-timeout-ms", String(LIMIT_MS), "--secure-output", sink], work);
  ends.unshift(() => client.close());
  const first = await execute(
    client,
    `requestFileSystem(".", (fs) => {
  const value = fs.readClassified(".env").map((t) => {
    if (t.startsWith("loop")) for (;;) {}
    return t + "!";
  });
  fs.writeClassified(".env.out", value);
  println("first", value);
  fs.access("saved").write(String(Date.now()));
});`,
  );
  // The attack: how long after the last call's script ended this one started. Waited for, the
  // looping map's call was answered when the limit stopped it, seconds later.
  const second = await execute(
    client,
    `requestFileSystem(".", (fs) => {
  println(Date.now() - Number(fs.access("saved").read()) < ${LIMIT_MS / 2} ? "started at once" : "started late");
  fs.writeClassified(".env.copy", fs.readClassified(".env.out"));
});
println("second");`,
  );
  const read = (name: string): string => readFileSync(path.join(work, name), "utf8");
  return { first, second, read, sink, canary };
}

describe("a one-shot call of tacit serve", () => {
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
    expect(await fileOnce(path.join(path.dirname(quick.sink), "work", ".env.copy"), (text) => text === value)).toBe(value);
    expect(quick.read(".env.out")).toBe(value);
    // Each call's own secure output, in order (the second call's may come between the first's
    // text and a value still being computed, as two calls at once may).
    const printed = (text: string): string => text.replace("started at once\nsecond\n", "");
    expect(printed(await fileOnce(quick.sink, (text) => printed(text) === `first ${value}\n`))).toBe(`first ${value}\n`);
    // The looping one was stopped at the first call's limit: its file left empty, its print noted unavailable.
    const unavailable = /^first <classified value unavailable: [^\n]*>\n/;
    expect(printed(await fileOnce(looping.sink, (text) => unavailable.test(printed(text))))).toMatch(unavailable);
    expect(looping.read(".env.out")).toBe("");
    expect(looping.read(".env.copy")).toBe("");
  }, 60_000);
});
