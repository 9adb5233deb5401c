// A session's sandbox waits for its next snippet only once it has read everything the host
// wrote to it. The stub reads each reply whole before it sends anything more, but agent code can
// replace TextDecoder's decode, which the stub calls on every piece it reads: a security review
// made it throw on the first piece of a large reply (the request's caller caught the error) and
// block, without CPU, on the next, then let the snippet end. The snippet was reported a success
// and the session went idle while tacit serve held the rest of the reply for as long as the
// session lived: about 500 MB a session of a 30 MiB file of control characters (6 bytes each as
// JSON), 3 GB for six idle sessions, through the real server and the MCP SDK client.

import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, runInSession, tempDir } from "../helpers.js";

/** Reads big.txt in a scope whose block never settles (so no request follows), and leaves the reply unread. */
const LEAVES_REPLY_UNREAD = `
const originalDecode = TextDecoder.prototype.decode;
let armed = 0;
const never = new Int32Array(new SharedArrayBuffer(4));
TextDecoder.prototype.decode = function (this: TextDecoder, input?: any, options?: any): string {
  if (armed === 1) { armed = 2; throw new Error("stop reading here"); }
  if (armed === 2) Atomics.wait(never, 0, 0);
  return originalDecode.call(this, input, options);
};
requestFileSystem(".", async (fs) => {
  const file = fs.access("big.txt");
  armed = 1;
  try { file.read(); } catch { println("the reply's first piece was read; the rest is left in the pipe"); }
  await new Promise(() => {});
});
`;

let dir: string;
let cleanup: () => void;
let client: Client;
let stderr = "";

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("tacit-unread-reply-"));
  // 4 MiB of control characters: a reply of 24 Mi characters, far more than a pipe holds.
  writeFileSync(path.join(dir, "big.txt"), Buffer.alloc(4 * 1024 * 1024, 1));
  client = await connectServe(["--no-check", "--exec-timeout-ms", "5000"], dir, { onStderr: (text) => (stderr += text) });
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

it("a snippet that reports its result without reading the host's last reply does not succeed, and the session goes on", async () => {
  const session = await createSession(client);
  const result = await runInSession(client, session, LEAVES_REPLY_UNREAD, 60_000);
  // The attack ran as written: the first piece was read and the caller caught the error.
  expect(result.stdout, stderr).toContain("the reply's first piece was read");
  // Not a success that leaves the sandbox idle with the reply held by the host: ended, saying why.
  expect(result.exitCode, JSON.stringify(result)).not.toBe(0);
  expect(result.error).toMatch(/protocol violation: the sandbox reported its result without reading all of the host's last reply/);
  expect(result.error).toMatch(/leave the library's reading of its replies alone/);
  // The session's sandbox was replaced; the session answers as before.
  expect(await runInSession(client, session, "1 + 1", 60_000)).toMatchObject({ exitCode: 0, stdout: "2\n" });
}, 60_000);
