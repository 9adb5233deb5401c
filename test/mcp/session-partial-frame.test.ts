// Nothing may come from a session's sandbox between a report and the next program, not even
// part of a frame. The stub writes whole frames; agent code can replace TextEncoder's encode and
// encodeInto, which the stub calls for every frame it writes: a security review sent the snippet's "done"
// with 4 Mi characters of a line that never ended after it. The snippet succeeded, and tacit
// serve held those characters (the host keeps an unended line until its end arrives) for as
// long as the idle session lived, every session of a server the same way.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, runInSession, tempDir } from "../helpers.js";

/**
 * Sends the snippet's report with the start of a frame after it, never ended, in one writeSync.
 * Deno's stdout is line-buffered: it writes up to the last newline, then the rest, two system
 * calls (strace shows them). The host nearly always read both before it had taken the report; on
 * a loaded machine it could take the report between them (a CI run did). It now calls the snippet
 * over only once the sandbox's main thread waits for the next (runner/sandbox.ts reportWritten),
 * after the second write, whose bytes it has read by then: the snippet fails in either order.
 */
const UNENDED_AFTER_REPORT = `
const unended = '{"type":"post","action":' + "x".repeat(2000);
const encode = TextEncoder.prototype.encode;
TextEncoder.prototype.encode = function (this: TextEncoder, text?: string): Uint8Array<ArrayBuffer> {
  if (text !== undefined && text.startsWith('{"type":"done"}')) return encode.call(this, text + unended);
  return encode.call(this, text);
};
// The stub encodes a frame into a buffer of its own (encodeInto) where it fits: the report is written with the same tail.
const encodeInto = TextEncoder.prototype.encodeInto;
TextEncoder.prototype.encodeInto = function (this: TextEncoder, text: string, into: Uint8Array): TextEncoderEncodeIntoResult {
  if (text.startsWith('{"type":"done"}')) return { read: text.length, written: encodeInto.call(this, text + unended, into).written };
  return encodeInto.call(this, text, into);
};
println("reported with an unended frame behind it");
`;

let cleanup: () => void;
let client: Client;

beforeAll(async () => {
  let dir: string;
  ({ dir, cleanup } = tempDir("tacit-partial-frame-"));
  client = await connectServe(["--no-check"], dir);
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

it("part of a frame written after a session snippet's report ends its sandbox, which the session replaces", async () => {
  const session = await createSession(client);
  const result = await runInSession(client, session, UNENDED_AFTER_REPORT, 60_000);
  expect(result.stdout).toContain("reported with an unended frame behind it");
  // Not a success that leaves the sandbox idle with the host holding the unended line: ended, saying why.
  expect(result.exitCode, JSON.stringify(result).slice(0, 400)).not.toBe(0);
  expect(result.error).toMatch(/protocol violation: the sandbox wrote to the protocol channel after reporting its result/);
  expect(result.error).toMatch(/leave its writing of frames alone/);
  // The session goes on in a new sandbox.
  expect(await runInSession(client, session, "1 + 1", 60_000)).toMatchObject({ exitCode: 0, stdout: "2\n" });
}, 60_000);
