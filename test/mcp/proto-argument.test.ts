// An argument named "__proto__" is an unknown argument like any other, refused with
// InvalidParams (-32602) naming it, and the call does not run. The edge check copied the
// arguments into a new object (zod's record) before checking for unknown keys, and assigning
// "__proto__" there set the copy's prototype instead of making a key: the check saw no unknown
// key, and the call ran with an argument the tool does not take. Through a real tacit serve,
// with the raw JSON text a client sends (a JavaScript client's JSON.stringify of an object
// literal would not carry the key).

import { afterEach, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { rawClient } from "./raw-client.js";
import { argumentProblem } from "../../runner/mcp-arguments.js";
import { z } from "zod";

interface Message {
  id?: unknown;
  result?: { content?: Array<{ text: string }> };
  error?: { code: number; message: string };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

it("a tools/call with a __proto__ argument is refused as an unknown argument, and its code does not run", async () => {
  const { dir, cleanup } = realTempDir("tacit-proto-argument-");
  cleanups.push(cleanup);
  const client = rawClient<Message>(["--quiet"], dir, { TACIT_HOME: `${dir}/home` });
  cleanups.push(() => client.close());
  await client.initialize();
  const canary = `ran-${crypto.randomUUID()}`;
  // Written as text: the key must reach the server as an own key of the arguments object.
  client.send(
    `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_typescript","arguments":{"code":${JSON.stringify(`println(${JSON.stringify(canary)})`)},"__proto__":{"polluted":true}}}}\n`,
  );
  const reply = await client.answer(7);
  // The bad thing: the call ran (its output came back), the unknown argument unnoticed.
  expect(JSON.stringify(reply)).not.toContain(canary);
  expect(reply.error?.code).toBe(-32602);
  expect(reply.error?.message).toBe(`execute_typescript: unknown argument "__proto__" (it takes "code")`);
  // The server goes on answering well-formed calls.
  client.send({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "execute_typescript", arguments: { code: `println("fine")` } } });
  expect((await client.answer(8)).result?.content?.map((c) => c.text).join("")).toContain("fine");
}, 30_000);

it("the edge check names a __proto__ key among other unknown ones", () => {
  const tools = new Map<string, z.ZodRawShape>([["list_sessions", {}]]);
  const params = JSON.parse(`{"name":"list_sessions","arguments":{"all":true,"__proto__":{"x":1}}}`) as unknown;
  expect(argumentProblem(tools, params)).toBe(`list_sessions: unknown arguments "all", "__proto__" (it takes no arguments)`);
});
