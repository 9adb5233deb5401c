// What a map function answers is measured before the host parses it. A map function decides
// the text of its own reply: an array that holds one empty array millions of times is cheap to
// make, and its JSON is "[[],[],…]" (a patch of the evaluator's JSON.stringify made the same text
// before its built-ins were frozen). Cheap text, and a costly value: parsed, 45 MB of it took tacit
// 2.4 GB resident, far past what the store's budget (which counted the text's length) saw. And
// the function decides whether to answer so from the plaintext: a security review made tacit
// serve die, every session with it, only when a classified .env began with a guessed prefix,
// and the MCP client saw the server end: a bit of the secret per guess, and a server killed.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, fileOnce, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

/**
 * The body of a map function that answers, for the secret it is given, with a value of `arrays`
 * empty arrays (three characters of text each, one array in the evaluator) when the secret starts as guessed.
 */
function wideAnswer(arrays: number): string {
  return `(s) => {
  if (!s.startsWith("TOKEN=Alpha")) return "wrong guess";
  return new Array(${arrays}).fill([]);
}`;
}

/** Five million empty arrays, 15 MB of text, in one answer. */
const GUESS = `
const secret = requestFileSystem(".", (fs) => fs.readClassified(".env"));
const guess = secret.map(${wideAnswer(5_000_000)});
println("guessed", guess);
`;

/** A million empty arrays (3 MB of text) an answer, ten times: each fits alone, and the host kept them all. */
const GUESSES = `
const secret = requestFileSystem(".", (fs) => fs.readClassified(".env"));
const guesses = [];
for (let i = 0; i < 10; i++) guesses.push(secret.map(${wideAnswer(1_000_000)}));
println("guessed", guesses.length);
for (const guess of guesses) println(guess);
`;

let server: SmallHeapServe;

beforeAll(async () => {
  server = await smallHeapServe("tacit-pure-wide-", ["--no-check", "--secure-output", "sink.txt"], (dir) => {
    writeFileSync(path.join(dir, ".env"), "TOKEN=Alpha-canary-9f3e\n");
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

it("a reply that would cost more than the store keeps is not parsed: the value fails out of sight, and the server lives", async () => {
  const session = await createSession(server.client);
  const result = await runInSession(server.client, session, GUESS, 60_000);
  expect(result, server.stderr().slice(0, 400)).toMatchObject({ exitCode: 0, stdout: "guessed Classified(***)\n" });
  const sink = await fileOnce(path.join(server.dir, "sink.txt"), (text) => text.includes("guessed <"));
  expect(sink).toContain("guessed <classified value unavailable: the evaluator answered with a value whose arrays and objects alone would take more than");
  // The server, the session and its classified value go on; a fresh evaluator answers the next map.
  const next = await runInSession(server.client, session, `println("again", secret.map((s) => s.length));`, 60_000);
  expect(next).toMatchObject({ exitCode: 0, stdout: "again Classified(***)\n" });
  expect(await fileOnce(path.join(server.dir, "sink.txt"), (text) => text.includes("again 24\n"))).toContain("again 24\n");
}, 120_000);

it("values are kept by what they cost parsed, not by their text's length: ten wide answers are not all held, and the server lives", async () => {
  const session = await createSession(server.client);
  const result = await runInSession(server.client, session, GUESSES, 60_000);
  expect(result, server.stderr().slice(0, 400)).toMatchObject({ exitCode: 0, stdout: "guessed 10\n" + "Classified(***)\n".repeat(10) });
  const sink = await fileOnce(path.join(server.dir, "sink.txt"), (text) => text.includes("<classified value unavailable: map: not kept:"));
  expect(sink).toContain("<classified value unavailable: map: not kept:");
  expect(await runInSession(server.client, session, `println("alive");`, 60_000)).toMatchObject({ exitCode: 0, stdout: "alive\n" });
}, 120_000);
