// What all the sessions and one-shot calls of one tacit serve hold of classified plaintext
// together is bounded: each session's or call's store is bounded by classifiedStoreLimitBytes
// (256 MiB by default), but a server holds up to maxSessions sessions and runs
// maxConcurrentEvaluations calls at once. Unbounded together, a few sessions or calls each
// within its own limit made a server with a 250 MB heap die (every session with it). A value
// past the server's share is not kept, out of sight, like one past the store's own limit.

import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, fileOnce, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

let server: SmallHeapServe;
// Each session or call makes 4,517 values, each a round trip to the host: the first test took
// 18 s alone at 6,017, 40 s of its 60 in a run of the tests on a loaded 2-core machine, and ran
// out of them with four copies of this file at once. The bound tested is on memory, not on time.
/** The time limit of each snippet or call (tacit's --exec-timeout-ms). */
const SNIPPET_LIMIT_MS = 120_000;
/** How long the client waits for a snippet's or call's answer. */
const CALL_TIMEOUT_MS = SNIPPET_LIMIT_MS + 30_000;

/**
 * tacit serve's heap (--max-old-space-size): what each session or call holds is sized from it, so
 * that three together are past it. At 128 MB each held a third more, for the same proof (at 64 MB
 * and half of it, the server's collector worked near its limit and the file took twice the CPU).
 */
const HEAP_MB = 96;

beforeAll(async () => {
  server = await smallHeapServe("tacit-classified-share-", ["--no-check", "--exec-timeout-ms", String(SNIPPET_LIMIT_MS), "--classified-paths", "*.secret"], undefined, HEAP_MB);
});

afterAll(async () => {
  await server?.close();
});

it("sessions each within their own limit cannot together fill the server with classified values; deleting them gives their share back", async () => {
  const { client, dir } = server;
  // 17 values of 2.25 MiB and 2,250 of 2,000 characters: about 43 MiB of plaintext per session (86 MiB as counted), under
  // the 256 MiB a session holds, and past the server's share (a quarter of its heap limit, 36 MiB) alone; three
  // sessions' would be past the server's 96 MB heap.
  const classifying = `const kept: unknown[] = [];\nconst chunk = "c".repeat(2.25 * 1024 * 1024);\nfor (let i = 0; i < 17; i++) kept.push(classify(chunk + i));\n` +
    // Smaller ones after them, so that what is held fills the server's share to its last few bytes.
    `for (let i = 0; i < 2250; i++) kept.push(classify("f".repeat(2000) + i));\n` +
    `for (let i = 0; i < 2250; i++) kept.push(classify("s" + i));\nkept.length`;
  const sessions: string[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await createSession(client);
    sessions.push(s);
    expect(await runInSession(client, s, classifying, CALL_TIMEOUT_MS), server.stderr()).toMatchObject({ exitCode: 0, stdout: "4517\n" });
  }
  for (const s of sessions) await client.callTool({ name: "delete_repl_session", arguments: { session_id: s } });
  // The server still answers, and a new session's classified values are kept and written.
  const fresh = await createSession(client);
  const written = await runInSession(
    client,
    fresh,
    `requestFileSystem(".", (fs) => fs.writeClassified("out.secret", classify("kept-after-the-flood").map((t) => t.toUpperCase())));\n"done"`,
    CALL_TIMEOUT_MS,
  );
  expect(written, server.stderr()).toMatchObject({ exitCode: 0 });
  expect(await fileOnce(path.join(dir, "out.secret"), (text) => text !== "")).toBe("KEPT-AFTER-THE-FLOOD");
}, 5 * CALL_TIMEOUT_MS);

it("one-shot calls under way together cannot fill the server with classified values either; each gives its share back as it ends", async () => {
  const { client, dir } = server;
  // The same 43 MiB of plaintext per call, held by three calls at once: each, its values made, marks a file and waits
  // until all three have (a wait of 6 s stood for this before; now the three surely hold theirs together).
  const classifying = (call: number) =>
    `const kept: unknown[] = [];\nconst chunk = "c".repeat(2.25 * 1024 * 1024);\nfor (let i = 0; i < 17; i++) kept.push(classify(chunk + i));\n` +
    `for (let i = 0; i < 2250; i++) kept.push(classify("f".repeat(2000) + i));\n` +
    `for (let i = 0; i < 2250; i++) kept.push(classify("s" + i));\n` +
    `await requestFileSystem(".", async (fs) => {\n  fs.access("holding-${call}").write("x");\n` +
    `  while (![0, 1, 2].every((n) => fs.access("holding-" + n).exists)) await new Promise((resolve) => setTimeout(resolve, 20));\n});\n` +
    `println(kept.length);`;
  const calls = [0, 1, 2].map((call) => client.callTool({ name: "execute_typescript", arguments: { code: classifying(call) } }, undefined, { timeout: CALL_TIMEOUT_MS }));
  for (const call of await Promise.all(calls)) expect(call.structuredContent, server.stderr()).toMatchObject({ exitCode: 0, stdout: "4517\n" });
  const written = await client.callTool(
    {
      name: "execute_typescript",
      arguments: { code: `requestFileSystem(".", (fs) => fs.writeClassified("one-shot.secret", classify("kept-after-the-calls").map((t) => t.toUpperCase())));` },
    },
    undefined,
    { timeout: CALL_TIMEOUT_MS },
  );
  expect(written.structuredContent, server.stderr()).toMatchObject({ exitCode: 0 });
  // A call is answered when its script ends; the classified write it left lands after that.
  expect(await fileOnce(path.join(dir, "one-shot.secret"), (text) => text === "KEPT-AFTER-THE-CALLS")).toBe("KEPT-AFTER-THE-CALLS");
}, 5 * CALL_TIMEOUT_MS);
