// The reasons failed classified values keep are counted as values are. A failed value keeps
// why it failed for as long as its session lives (up to 2,048 characters of a map function's
// error), and the budget counted only values that were computed: a security review failed
// 100,000 maps in each session with a function throwing a 4,000-character error, and tacit
// serve grew by about 250 MB a session, bounded by nothing but the 100,000 values a session
// keeps, times its sessions (3.8 GB resident after fifteen, at a 4 GiB heap; at 250 MB, it died
// in the second session of 60,000).
// Counted, a reason that does not fit is replaced by one fixed reason, out of sight, as a value
// that does not fit is.

import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

let server: SmallHeapServe;

beforeAll(async () => {
  server = await smallHeapServe("tacit-failure-reasons-", ["--no-check", "--secure-output", "sink.txt"]);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** 20,000 failed values a snippet, each with a reason of 2,048 two-byte characters and more (4 KiB); the last is printed, so the snippet waits for them all. */
const FAILING = `for (let i = 0; i < 20_000; i++) kept.push(secret.map((v) => { throw new Error("ж".repeat(4000)); }));
println(kept[kept.length - 1]);
kept.length`;

it("two sessions of 60,000 failed values, each keeping a reason of 4 KiB, do not fill a server with a 250 MB heap", async () => {
  const { client, dir } = server;
  // 120,002 values in all: under the server's share of Classified values at this heap (an eighth of
  // its 298 MiB heap limit at 320 bytes a value: 122,060; see classified-values-share.test.ts).
  for (const _ of [1, 2]) {
    const session = await createSession(client);
    expect(await runInSession(client, session, `const secret = classify("s");\nconst kept: Classified<string>[] = [];`, 60_000)).toMatchObject({ exitCode: 0 });
    for (let round = 1; round <= 3; round++) {
      const result = await runInSession(client, session, FAILING, 120_000);
      expect(result, server.stderr().slice(-400)).toMatchObject({ exitCode: 0, stdout: `Classified(***)\n${round * 20_000}\n` });
    }
    expect(await runInSession(client, session, `println("alive", kept.length);`, 60_000)).toMatchObject({ exitCode: 0, stdout: "alive 60000\n" });
  }
  // Past the server's share, a failed value keeps the one fixed reason (the secure output says so).
  expect(readFileSync(path.join(dir, "sink.txt"), "utf8")).toContain("the value failed, and why was not kept:");
}, 600_000);
