// A classified question larger than any plain one can be: a plain question is cut off at what
// one call from the sandbox carries (4 Mi characters), but a classified one is made in the host
// by a map and was sent whole (a 20-million-character one, asked 12 times, four at a time,
// peaked tacit at 740 MB). Through the real CLI and a model server on loopback that records
// the size of what it is sent. Asserted: no request larger than the limit reaches it, and the
// secure output says why.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-classified-question-size-");
/** The size in bytes of each request body the model was sent. */
const sizes: number[] = [];

let server: TestServer;
let baseUrl = "";

beforeAll(async () => {
  server = await startServer((request, response) => {
    sizes.push(Buffer.byteLength(request.body));
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ choices: [{ message: { content: "short" } }] }));
  });
  baseUrl = `${server.origin}/v1`;
});
afterAll(async () => {
  await server.close();
  cleanup();
});

it("a classified question longer than a plain one may be is not sent, and the secure output says why", async () => {
  const limit = 4 * 1024 * 1024;
  const script = path.join(dir, "large.ts");
  const sink = path.join(dir, "large.sink");
  writeFileSync(script, `println(chat(classify("x").map((s) => s.repeat(${limit + 1}))));\n`);
  const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", "sk-test-question-size-0000", "--llm-model", "m", "--secure-output", sink, script]), { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("Classified(***)\n");
  expect(sizes).toEqual([]);
  expect(readFileSync(sink, "utf8")).toContain(
    `[tacit] chat failed: chat: the question is ${limit + 1} characters, more than the ${limit} tacit sends a model in one chat; nothing was sent`,
  );
});
