// A tools/call is held, all of it, until it is answered, and only its code counted towards what
// the server holds of calls at once (InFlightBound: 64 Mi characters). Its id and _meta (the
// progress token, which the server also echoes in every progress notification) were not: 30
// calls waiting for their turn, each with an 8 MiB progress token, ended a tacit serve of a
// 200 MB heap out of memory. Beside its arguments, a call may now hold 64 KiB of JSON; past it,
// it is answered with InvalidRequest and nothing in it runs.

import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { tempDirWithHome } from "../helpers.js";
import { type RawClient, rawClient } from "./raw-client.js";

interface Answer {
  id?: unknown;
  result?: { structuredContent?: { exitCode: number } };
  error?: { code: number; message: string };
}

let dir: string;
let cleanup: () => void;
let client: RawClient<Answer>;
beforeAll(async () => {
  let env: Record<string, string>;
  ({ dir, env, cleanup } = tempDirWithHome("tacit-call-envelope-"));
  client = rawClient<Answer>(["--no-check", "--allowed-roots", "."], dir, env);
  await client.initialize();
});
afterAll(() => {
  client.close();
  cleanup();
});

/** A call whose code writes `file` (so that whether it ran shows). */
const writing = (file: string) => ({ name: "execute_typescript", arguments: { code: `requestFileSystem(".", (fs) => fs.access(${JSON.stringify(file)}).write("ran"));` } });
const LONG = "t".repeat(100 * 1024);

it("a call whose progress token, id or other member of its params is longer than 64 KiB is refused, nothing in it runs; the next call runs", async () => {
  client.send({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { ...writing("by-token"), _meta: { progressToken: LONG } } });
  client.send({ jsonrpc: "2.0", id: LONG, method: "tools/call", params: writing("by-id") });
  client.send({ jsonrpc: "2.0", id: 12, method: "tools/call", params: { ...writing("by-member"), padding: LONG } });
  client.send({ jsonrpc: "2.0", id: 13, method: "tools/call", params: { ...writing("by-short-token"), _meta: { progressToken: "p-13" } } });
  for (const id of [10, LONG, 12]) {
    const answer = await client.answer(id);
    expect(answer.error?.code).toBe(-32600);
    expect(answer.error?.message).toContain("more than the 65,536 tacit serve holds for a call until it is answered; nothing ran");
  }
  expect((await client.answer(13)).result?.structuredContent?.exitCode).toBe(0);
  expect(existsSync(path.join(dir, "by-short-token"))).toBe(true);
  for (const file of ["by-token", "by-id", "by-member"]) expect(existsSync(path.join(dir, file)), file).toBe(false);
});

// Measured with JSON.stringify, which recurses: a _meta nested 100,000 arrays deep (200 KB) threw
// RangeError inside the edge check, the request was never answered (nothing on stderr or in the
// log either), and its id stayed "under way" for good: the next request with that id was refused.
it("a call whose _meta is nested too deeply to measure is refused, nothing in it runs, and its id is free after", async () => {
  const depth = 100_000;
  const deep = "[".repeat(depth) + "]".repeat(depth);
  const call = writing("by-deep-meta");
  client.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"execute_typescript","arguments":${JSON.stringify(call.arguments)},"_meta":{"progressToken":"p-20","x":${deep}}}}\n`);
  const refused = await client.answer(20);
  expect(refused.error?.code).toBe(-32600);
  expect(refused.error?.message).toContain("nested");
  expect(refused.error?.message).toContain("nothing ran");
  // The id is not left under way: a well-formed call with it runs.
  client.send({ jsonrpc: "2.0", id: 21, method: "tools/call", params: writing("by-next") });
  expect((await client.answer(21)).result?.structuredContent?.exitCode).toBe(0);
  client.responses.splice(0);
  client.send({ jsonrpc: "2.0", id: 20, method: "tools/call", params: writing("by-same-id") });
  expect((await client.answer(20)).result?.structuredContent?.exitCode).toBe(0);
  expect(existsSync(path.join(dir, "by-deep-meta"))).toBe(false);
}, 30_000);
