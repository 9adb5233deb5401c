// What the host keeps of a failed map function's error is its own copy, not a view into the
// whole message. The store keeps the first 2,048 characters of a function's error with the
// failed value, for as long as the session lives; V8 made that cut a slice of the message the
// evaluator sent, which kept all of it alive (up to the 256 Mi characters a reply may hold). A
// security review threw a 10-million-character error from a map function in a loop: tacit serve
// grew by 10 MB a failed value, and at a small heap died after a few, every session with it. The
// function decides whether it throws from the plaintext, so the server's death told the client
// whether a classified .env began with a guessed prefix.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, fileOnce, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

/** Six failed values, each thrown with an error of 10 million characters when the secret starts as guessed (printed, so the snippet waits for them). */
const FAILURES = `
for (let i = 0; i < 6; i++) {
  failures.push(secret.map((s) => {
    if (s.startsWith("TOKEN=Alpha")) throw new Error("x".repeat(10_000_000));
    return "wrong guess";
  }));
}
for (const failure of failures.slice(-6)) println(failure);
`;

let server: SmallHeapServe;

beforeAll(async () => {
  server = await smallHeapServe("tacit-pure-long-error-", ["--no-check", "--secure-output", "sink.txt"], (dir) => {
    writeFileSync(path.join(dir, ".env"), "TOKEN=Alpha-canary-5d1c\n");
  }, 128);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

it("a failed value keeps 2,048 characters of its function's error, not the whole message: eighteen 10-million-character errors, and the server lives", async () => {
  const session = await createSession(server.client);
  const setup = `const secret = requestFileSystem(".", (fs) => fs.readClassified(".env"));\nconst failures: Classified<string>[] = [];`;
  expect(await runInSession(server.client, session, setup, 60_000)).toMatchObject({ exitCode: 0 });
  // 18 × 10 MB held would be far past the server's 128 MB heap.
  for (let round = 0; round < 3; round++) {
    const result = await runInSession(server.client, session, FAILURES, 120_000);
    expect(result, server.stderr().slice(-400)).toMatchObject({ exitCode: 0, stdout: "Classified(***)\n".repeat(6) });
  }
  expect(await runInSession(server.client, session, `println("alive", failures.length);`, 60_000)).toMatchObject({ exitCode: 0, stdout: "alive 18\n" });
  // Each failure is written to the secure output, cut, as before.
  const reasons = /<classified value unavailable: Error: x{2041}… \(9997959 more characters\)>/g;
  const sink = await fileOnce(path.join(server.dir, "sink.txt"), (text) => (text.match(reasons) ?? []).length >= 18);
  expect(sink.match(/<classified value unavailable: Error: x{2041}… \(9997959 more characters\)>/g)).toHaveLength(18);
}, 600_000);
