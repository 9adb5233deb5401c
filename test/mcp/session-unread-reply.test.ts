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

/**
 * Sends a read of big.txt and then a report of success in a print's place (a print waits for no
 * reply), and blocks, reading nothing more. The library now reads each reply with built-ins it
 * took before agent code ran (line-reader.ts), so a script can no longer stop its reading
 * partway, as the review did by replacing TextDecoder's decode; but the library still writes with
 * TextEncoder's encodeInto, which a script can replace, and so can send what it likes in a print's place.
 */
const LEAVES_REPLY_UNREAD = `
const encodeInto = TextEncoder.prototype.encodeInto;
const stringify = JSON.stringify;
let scope = "";
let sendInstead: string | null = null;
(JSON as any).stringify = function (value: any, ...rest: any[]) {
  if (value?.action?.kind === "FsStat") scope = value.action.scope;
  return stringify.call(JSON, value, ...rest);
};
TextEncoder.prototype.encodeInto = function (this: TextEncoder, text: string, into: Uint8Array) {
  if (sendInstead !== null && text.startsWith('{"type":"post"')) {
    const frames = sendInstead;
    sendInstead = null;
    // As if all of the print's text had been encoded: the library then writes what was.
    return { read: text.length, written: encodeInto.call(this, frames, into).written };
  }
  return encodeInto.call(this, text, into);
};
requestFileSystem(".", (fs) => {
  const file = fs.access("big.txt");
  if (!file.exists) throw new Error("big.txt is missing");
  println("a read and a report of success go out in the next print's place; the read's reply is left in the pipe");
  sendInstead = stringify({ type: "request", id: 1_000_000, action: { kind: "FsRead", scope, path: file.path, as: "text" } }) + "\\n" + stringify({ type: "done" }) + "\\n";
  println("never printed");
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
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
  // The host finds the reply unread at the snippet's time limit, and the snippet then waits
  // (Atomics.wait) for it: the limit is most of the file's time (5 s before, 3 s now, ample for
  // the snippet to send its frames and block, or for the next one to run).
  client = await connectServe(["--no-check", "--exec-timeout-ms", "3000"], dir, { onStderr: (text) => (stderr += text) });
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

it("a snippet that reports its result without reading the host's last reply does not succeed, and the session goes on", async () => {
  const session = await createSession(client);
  const result = await runInSession(client, session, LEAVES_REPLY_UNREAD, 60_000);
  // The attack ran as written: the marker went out before the frames sent in a print's place.
  expect(result.stdout, stderr).toContain("a read and a report of success go out");
  expect(result.stdout).not.toContain("never printed");
  // Not a success that leaves the sandbox idle with the reply held by the host: ended, saying why.
  expect(result.exitCode, JSON.stringify(result)).not.toBe(0);
  expect(result.error).toMatch(/protocol violation: the sandbox reported its result without reading all of the host's last reply/);
  expect(result.error).toMatch(/leave the library's reading of its replies alone/);
  // The session's sandbox was replaced; the session answers as before.
  expect(await runInSession(client, session, "1 + 1", 60_000)).toMatchObject({ exitCode: 0, stdout: "2\n" });
}, 60_000);
