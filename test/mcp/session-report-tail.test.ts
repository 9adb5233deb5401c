// A session snippet is answered only once its sandbox has finished writing its report. Agent code
// can replace TextEncoder's encode and encodeInto, which the stub calls for every frame it writes,
// and make the report ("done") carry more after it in the same write. Deno writes the two apart
// (its stdout is line-buffered: up to the last newline, then the rest), and the host could take
// the report before the rest came: it then answered the snippet as a success, and the violation,
// arriving while the sandbox waited for its next snippet, was told to no one.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, runInSession, tempDir } from "../helpers.js";
import { REPORT_WITH_TAIL } from "../report-with-tail.js";

let cleanup: () => void;
let client: Client;

beforeAll(async () => {
  let dir: string;
  ({ dir, cleanup } = tempDir("tacit-report-tail-"));
  client = await connectServe(["--no-check"], dir);
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

it("a session snippet whose sandbox goes on writing after its report fails as a protocol violation, not a success", async () => {
  const session = await createSession(client);
  const result = await runInSession(client, session, REPORT_WITH_TAIL, 60_000);
  expect(result.exitCode, JSON.stringify(result).slice(0, 400)).not.toBe(0);
  expect(result.error).toMatch(/protocol violation: the sandbox wrote to the protocol channel after reporting its result/);
  expect(result.error).toMatch(/leave its writing of frames alone/);
  // The session goes on in a new sandbox.
  expect(await runInSession(client, session, "1 + 1", 60_000)).toMatchObject({ exitCode: 0, stdout: "2\n" });
}, 60_000);
