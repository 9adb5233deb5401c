// What chat() tells a script when the model's server fails below HTTP: it said "fetch failed"
// whatever happened (a connection refused or dropped, an answer that was no HTTP), with the
// cause Node knew left out; and a model still thinking when the evaluation ended "could not be
// reached", which sent the operator to check a server that was up. Through the real CLI and raw
// TCP servers on loopback.

import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-chat-failure-cause-");
const servers: Server[] = [];
/** Connections a model that never answers holds open. */
const silent: Socket[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  for (const socket of silent) socket.destroy();
  cleanup();
});

/** A TCP server on loopback that does `answer` with each connection once the request starts; its base URL. */
async function rawModel(answer: (socket: Socket) => void): Promise<string> {
  const server = createServer((socket) => socket.once("data", () => answer(socket)));
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

it.concurrent.each([
  ["drops the connection", (socket: Socket) => socket.destroy(), "fetch failed: other side closed"],
  ["answers no HTTP", (socket: Socket) => socket.end("HTTP/1.1 200 OK\r\nX-Broken: a\u0001b\r\n\r\n"), "fetch failed: Response does not match the HTTP/1.1 protocol"],
])("a model server that %s: the script is told what Node knew", async (what, answer, expected) => {
  const baseUrl = await rawModel(answer);
  const script = path.join(dir, `${what.replace(/ /g, "-")}.ts`);
  writeFileSync(script, "try { chat(\"hi\"); } catch (error) { println((error as Error).message); }\n");
  const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", "sk-test-failure-cause-0000", "--llm-model", "m", script]), { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(`chat: the model at ${new URL(baseUrl).origin} could not be reached: ${expected}`);
});

// Concurrent with the two above: this run waits out its time limit (3 s) with a question the model never answers.
it.concurrent("a classified question the model had not answered when the evaluation ended says so, not that the model could not be reached", async () => {
  const baseUrl = await rawModel((socket) => void silent.push(socket));
  const script = path.join(dir, "never-answered.ts");
  const sink = path.join(dir, "never-answered.sink");
  writeFileSync(script, 'println(chat(classify("a question")));\n');
  const r = await runCli(
    unchecked(["run", "--exec-timeout-ms", "3000", "--llm-base-url", baseUrl, "--llm-api-key", "sk-test-failure-cause-0000", "--llm-model", "m", "--secure-output", sink, script]),
    { cwd: dir, env },
  );
  expect(r.stdout).toBe("Classified(***)\n");
  const noted = readFileSync(sink, "utf8");
  expect(noted).toContain(`[tacit] chat failed: chat: the model at ${new URL(baseUrl).origin} had not answered when tacit stopped waiting: the evaluation is over`);
  expect(noted).not.toContain("could not be reached");
});
