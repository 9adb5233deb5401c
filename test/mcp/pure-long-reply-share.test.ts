// What the host reads of the pure evaluator's replies is bounded by what classified values may
// still take: a map function decides how long its reply is, and one reply was read to the
// frame limit (256 Mi characters) before any budget applied. Each store bounds its own reply
// (test/runner/host-limits.test.ts); the replies of a server's sessions read at the same time are
// bounded together by the share all their classified values draw on (a quarter of the heap), so
// several sessions answering long at once cannot take tacit serve past its heap.

import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, fileOnce, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

let server: SmallHeapServe;

beforeAll(async () => {
  server = await smallHeapServe("tacit-pure-long-reply-", ["--no-check", "--secure-output", "sink.txt"], undefined, 128);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

it("maps of three sessions answering 40 million characters at once are read no further than the server's share allows: they fail out of sight, and the server lives", async () => {
  const sessions = await Promise.all([0, 1, 2].map(() => createSession(server.client)));
  const results = await Promise.all(
    sessions.map((session, i) => runInSession(server.client, session, `println("long ${i}", classify("x").map((s) => s.repeat(40_000_000)));`, 90_000)),
  );
  results.forEach((result, i) => expect(result, server.stderr().slice(0, 400)).toMatchObject({ exitCode: 0, stdout: `long ${i} Classified(***)\n` }));
  // The three values as written, whether read whole or not (each on its session's line: test/mcp/sink-lines-whole).
  const values = (text: string) => text.match(/<classified value unavailable: [^>\n]*>|x{1000,}/g) ?? [];
  const sink = await fileOnce(path.join(server.dir, "sink.txt"), (text) => values(text).length === 3);
  // Each session's own store (256 MiB by default) would have read it whole; the share is what stopped them, all three.
  expect(values(sink).map((value) => value.slice(0, 1000))).toEqual(
    Array(3).fill(
      "<classified value unavailable: the evaluator's reply, still being read, would take more than the classified values of all this server's sessions and calls may still take together (a quarter of tacit's heap limit)>",
    ),
  );
  expect(sink).not.toContain("x".repeat(1000));
  expect((sink.match(/long \d /g) ?? []).sort()).toEqual(["long 0 ", "long 1 ", "long 2 "]);
  // The server and the sessions go on; a fresh evaluator answers the next map.
  const next = await runInSession(server.client, sessions[0]!, `println("again", classify("abc").map((s) => s.length));`, 60_000);
  expect(next).toMatchObject({ exitCode: 0, stdout: "again Classified(***)\n" });
  expect(await fileOnce(path.join(server.dir, "sink.txt"), (text) => text.includes("again 3\n"))).toContain("again 3\n");
}, 180_000);
