// A model server that redirects chat() elsewhere, through the real CLI and two servers on
// loopback: the model's, which answers every question with a redirect, and another, on a port
// no one configured, that records what reaches it. Node's fetch followed the redirects: it left
// the key out, but took the question there (a 307 keeps the body: a classified question's
// plaintext too), and a 303 made tacit GET any address the model's server named, whose answer
// reached the script. Asserted: nothing reaches the other server, and the script is told why.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { questionOf } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-chat-redirect-");
const apiKey = `sk-test-${randomUUID()}`;
const canary = `CANARY-${randomUUID()}`;
/** What reached the server the redirects point to: method, path and body of each request. */
const elsewhere: string[] = [];

let otherServer: TestServer;
let otherOrigin = "";
let modelServer: TestServer;
let baseUrl = "";

beforeAll(async () => {
  otherServer = await startServer((request, response) => {
    elsewhere.push(`${request.method} ${request.url} ${request.headers.authorization ?? ""} ${request.body}`);
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ choices: [{ message: { content: `elsewhere got ${request.body}` } }] }));
  });
  otherOrigin = otherServer.origin.replace("127.0.0.1", "localhost");
  // Redirects each question: "303" to the other server's /metadata, "same" to a path of its own (a loop), else 307 to the other server.
  modelServer = await startServer((request, response) => {
    const question = questionOf(request.body);
    const location = question === "303" ? `${otherOrigin}/metadata` : question === "same" ? "/v1/chat/completions" : `${otherOrigin}/v1/chat/completions`;
    response.writeHead(question === "303" ? 303 : 307, { location });
    response.end();
  });
  baseUrl = `${modelServer.origin}/v1`;
  writeFileSync(path.join(dir, ".env"), `${canary}\n`);
});
afterAll(async () => {
  await otherServer.close();
  await modelServer.close();
  cleanup();
});

it("a redirect from the model's server is not followed: neither a question nor a classified one's plaintext goes where it points", async () => {
  const script = path.join(dir, "redirected.ts");
  const sink = path.join(dir, "redirected.sink");
  writeFileSync(
    script,
    [
      'for (const question of ["307", "303", "same"]) {',
      "  try { println(chat(question)); } catch (error) { println((error as Error).message); }",
      "}",
      'requestFileSystem(".", (fs) => println(chat(fs.readClassified(".env"))));',
    ].join("\n") + "\n",
  );
  const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "m", "--secure-output", sink, script]), { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  expect(elsewhere).toEqual([]);
  const refusal = (status: number): string =>
    `chat: the model at ${new URL(baseUrl).origin} answered HTTP ${status}, a redirect, which tacit does not follow ` +
    "(the question would go where that server chose, not where --llm-base-url says); set --llm-base-url to the URL it redirects to";
  expect(r.stdout).toBe(`${refusal(307)}\n${refusal(303)}\n${refusal(307)}\nClassified(***)\n`);
  const seen = [r.stdout, r.stderr, existsSync(sink) ? readFileSync(sink, "utf8") : ""].join("\n");
  expect(seen).toContain(`[tacit] chat failed: ${refusal(307)}`);
  expect(seen).not.toContain(apiKey);
  expect(r.stdout + r.stderr).not.toContain(canary);
});
