// chat() under `tacit serve`, through the real MCP SDK client: no test drove the model through
// the MCP server, whose answers (structuredContent and text, a session's snippets, the tool list)
// are built apart from `tacit run`'s output. The model's server on loopback echoes the key it
// was sent in a plain answer, in a classified one and in a 401, and redirects a question; a file
// in the project holds the key. Asserted: nothing the MCP client receives holds the key, as it
// is or in base64, nor the classified file's canary, and nothing reaches the redirect's target.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, runInSession } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { questionOf } from "./fixtures.js";

const apiKey = `sk-test-${randomUUID()}`;
const canary = `CANARY-${randomUUID()}`;
const elsewhere: string[] = [];
let dir = "";
let client: Client;
const servers: TestServer[] = [];

beforeAll(async () => {
  // It records each request and never answers: none should come.
  const other = await startServer((request) => void elsewhere.push(`${request.method} ${request.url}`));
  const model = await startServer((request, response) => {
    const question = questionOf(request.body);
    const auth = request.headers.authorization ?? "";
    if (question === "refuse") return void response.writeHead(401, { "content-type": "text/plain" }).end(`bad key ${auth}`);
    if (question === "redirect") return void response.writeHead(307, { location: `${other.origin}/v1/chat/completions` }).end();
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ choices: [{ message: { content: `to ${question}: ${auth} ${Buffer.from(auth.slice(7)).toString("base64")}` } }] }));
  });
  servers.push(other, model);
  dir = mkdtempSync(path.join(tmpdir(), "tacit-serve-chat-key-"));
  writeFileSync(path.join(dir, "key.txt"), `OPENAI_API_KEY=${apiKey}\n`);
  writeFileSync(path.join(dir, ".env"), `${canary}\n`);
  client = await connectServe(["--llm-base-url", `${model.origin}/v1`, "--llm-model", "m"], dir, { env: { TACIT_HOME: path.join(dir, "home"), TACIT_LLM_API_KEY: apiKey } });
});
afterAll(async () => {
  await client.close();
  await Promise.all(servers.map((server) => server.close()));
  rmSync(dir, { recursive: true, force: true });
});

it("nothing an MCP client receives holds the key or a classified question, whatever the model's server answers", async () => {
  const code = [
    'for (const q of ["hello", "refuse", "redirect"]) { try { println(chat(q)); } catch (e) { println((e as Error).message); } }',
    'requestFileSystem(".", (fs) => { println(fs.access("key.txt").read()); println(chat(fs.readClassified(".env"))); });',
  ].join("\n");
  const call = await client.callTool({ name: "execute_typescript", arguments: { code } });
  const session = await createSession(client);
  const snippet = await runInSession(client, session, 'chat("in a session")');
  const tools = await client.listTools();
  const received = JSON.stringify([call, snippet, tools]);
  expect(received).toContain("to hello: Bearer [redacted] [redacted]");
  expect(received).toContain("chat: the model answered HTTP 401: bad key Bearer [redacted]");
  expect(received).toContain("answered HTTP 307, a redirect, which tacit does not follow");
  expect(received).toContain("OPENAI_API_KEY=[redacted]");
  expect(received).toContain("to in a session: Bearer [redacted]");
  for (const secret of [apiKey, Buffer.from(apiKey).toString("base64").slice(0, 40), canary]) expect(received).not.toContain(secret);
  expect(elsewhere).toEqual([]);
}, 60_000);
