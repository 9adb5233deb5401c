// The pure evaluator's reply counts only once the evaluator has read its whole job (the host
// checks so). A map function ran in the evaluator's own realm and could patch it for the jobs
// after its own; the sandbox rewrites the source it sends (it can replace JSON.stringify), and
// the host runs whatever source arrives. A security review's patch answered the next job from the
// first piece it read and blocked without CPU: the host took the answer, left the evaluator idle,
// and held the rest of the job (a 40 Mi-character value captured under ten names: 440 Mi
// characters) for as long as the session lived, about 1.3 GB resident for one idle session of
// tacit serve. Map functions now run in a realm of their own whose built-ins are frozen: the
// patch fails (out of sight), and neither reaches how the evaluator reads jobs or answers them.

import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, fileOnce, runInSession, tempDir } from "../helpers.js";

/** Patches the evaluator with the source of `patched`, then asks for `victim`, whose job carries the value three times. */
const ANSWERS_NEXT_JOB_UNREAD = `
const realStringify = JSON.stringify;
let replaceSource: string | null = null;
JSON.stringify = ((value: any, ...rest: any[]) => {
  if (replaceSource !== null && value?.action?.kind === "ClassifiedMap") {
    value.action.source = replaceSource;
    replaceSource = null;
  }
  return realStringify(value, ...rest);
}) as typeof JSON.stringify;
const piece = classify("a".repeat(1_000_000));
const big = piece.map((v) => v.repeat(4));
const b1 = big, b2 = big;
replaceSource = \`(v) => {
  const stringify = JSON.stringify;
  let lastId = 0;
  JSON.stringify = function (value, ...rest) {
    if (value !== null && typeof value === "object" && typeof value.id === "number") lastId = value.id;
    return stringify.call(this, value, ...rest);
  };
  TextDecoder.prototype.decode = function () {
    console.log(stringify({ id: lastId + 1, ok: true, value: 0 }));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    return "";
  };
  return 0;
}\`;
const patched = piece.map((v) => 0);
const victim = big.map((v) => [b1, b2].length + v.length);
`;

let dir: string;
let cleanup: () => void;
let client: Client;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("tacit-pure-unread-"));
  client = await connectServe(["--no-check", "--secure-output", path.join(dir, "sink.txt")], dir);
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

it("a map function cannot patch how the evaluator reads the next job: the patch fails out of sight, and the next job is read whole and computed", async () => {
  const session = await createSession(client);
  expect(await runInSession(client, session, ANSWERS_NEXT_JOB_UNREAD, 60_000)).toMatchObject({ exitCode: 0 });
  // The sink waits for each value: the patch failed (JSON.stringify, TextDecoder are not the
  // function's to change), and the victim, read whole, has its value: 4,000,000 characters and two captures.
  expect(await runInSession(client, session, `println("patched", patched, "victim", victim);`, 60_000)).toMatchObject({ exitCode: 0 });
  const sink = await fileOnce(path.join(dir, "sink.txt"), (text) => text.includes("victim "));
  expect(sink).toContain("patched <classified value unavailable: TypeError: Cannot assign to read only property 'stringify'");
  expect(sink).toContain("victim 4000002\n");
  expect(sink).not.toContain("the evaluator answered a job before it had read all of it");
  // The session goes on, and its next map is computed too.
  expect(await runInSession(client, session, `const again = piece.map((v) => v.length);\nprintln(again);`, 60_000)).toMatchObject({ exitCode: 0 });
  expect(await fileOnce(path.join(dir, "sink.txt"), (text) => text.includes("1000000"))).toContain("1000000");
}, 60_000);
