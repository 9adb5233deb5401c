// Model answers that are no chat completion tacit reads, each holding the key where a lax reader
// would pick it up: a tool call's arguments, content as an array of parts, a number, JSON cut
// short, a `__proto__` member, a streamed (SSE) answer nobody asked for. Through the real CLI and
// a server on loopback that knows the key. Asserted: each is an Error that says what was wrong and
// quotes none of the answer, and no form of the key reaches stdout, stderr or the secure output.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { questionOf } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-malformed-answer-");
const apiKey = `sk-test-${randomUUID()}`;

/** The answer's body for each question: none is a completion with a string content. */
function malformed(question: string): string {
  const completion = (message: unknown): string => JSON.stringify({ choices: [{ message }] });
  switch (question) {
    case "tool call":
      return completion({ content: null, tool_calls: [{ type: "function", function: { name: "f", arguments: JSON.stringify({ key: apiKey }) } }] });
    case "parts":
      return completion({ content: [{ type: "text", text: apiKey }] });
    case "number":
      return JSON.stringify({ choices: [{ message: { content: 42 } }], key: apiKey });
    case "cut JSON":
      return `{"choices":[{"message":{"content":"${apiKey}`;
    case "__proto__":
      return `{"__proto__":{"choices":[{"message":{"content":"${apiKey}"}}]}}`;
    default:
      return `data: ${completion({ content: apiKey })}\n\ndata: [DONE]\n\n`;
  }
}

let server: TestServer;
let baseUrl = "";

beforeAll(async () => {
  server = await startServer((request, response) => {
    const question = questionOf(request.body);
    response.writeHead(200, { "content-type": question === "stream" ? "text/event-stream" : "application/json" });
    response.end(malformed(question));
  });
  baseUrl = `${server.origin}/v1`;
});
afterAll(async () => {
  await server.close();
  cleanup();
});

it("an answer that is no chat completion is refused without quoting it, plain or classified", async () => {
  const script = path.join(dir, "malformed.ts");
  const sink = path.join(dir, "malformed.sink");
  writeFileSync(
    script,
    [
      'for (const question of ["tool call", "parts", "number", "cut JSON", "__proto__", "stream"]) {',
      "  try { println(chat(question)); } catch (error) { println(`${question}: ${(error as Error).message}`); }",
      "}",
      'println(chat(classify("tool call")));',
    ].join("\n") + "\n",
  );
  const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "m", "--secure-output", sink, script]), { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  const noContent = "chat: the model's answer has no choices[0].message.content";
  const notJson = "chat: the model's answer is not JSON";
  expect(r.stdout).toBe(
    [`tool call: ${noContent}`, `parts: ${noContent}`, `number: ${noContent}`, `cut JSON: ${notJson}`, `__proto__: ${noContent}`, `stream: ${notJson}`, "Classified(***)", ""].join("\n"),
  );
  const seen = [r.stdout, r.stderr, existsSync(sink) ? readFileSync(sink, "utf8") : ""].join("\n");
  expect(seen).toContain(`[tacit] chat failed: ${noContent}`);
  for (const form of [apiKey, Buffer.from(apiKey).toString("base64"), apiKey.slice(8)]) expect(seen).not.toContain(form);
});
