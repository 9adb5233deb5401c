// A client's answer to a question that is no answer (an "action" none of accept, decline or
// cancel; an accept without a boolean "approve") counts as no, and the refusal says in one line
// what was wrong with it. It quoted the SDK validator's issues as a multi-line JSON dump, then
// advised running tacit "where it can ask", which the client could: it answered wrongly. A client
// whose SDK refuses its own malformed answer sends an error instead: that error is quoted on one
// line. Through a real tacit serve, driven by a raw JSON-RPC client that answers as told.

import { existsSync } from "node:fs";
import { afterEach, expect, it } from "vitest";
import { rawClient } from "../mcp/raw-client.js";
import { realTempDir } from "../files/fixtures.js";
import { executeShownError, makeWorld, serveWorld, type World } from "./fixtures.js";

interface Message {
  id?: unknown;
  method?: string;
  result?: { content?: Array<{ text: string }>; isError?: boolean };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function world(): { world: World; config: string } {
  const temp = realTempDir("tacit-elicit-malformed-");
  cleanups.push(temp.cleanup);
  const made = makeWorld(temp.dir);
  return { world: made, config: made.config([{ action: "fs.write", tier: "always-ask" }]) };
}

const WRITE = `requestFileSystem(".", (fs) => fs.access("a.txt").write("x"));\n`;

/** The refusal a raw client gets when it answers the question with `answer` (the JSON-RPC result). */
async function refusalFor(answer: unknown): Promise<{ text: string; wrote: boolean }> {
  const { world: w, config } = world();
  const client = rawClient<Message>(["--config", config], w.work, w.env);
  cleanups.push(() => client.close());
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: { elicitation: {} }, clientInfo: { name: "t", version: "0" } } });
  await client.answer(1);
  client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  client.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "execute_typescript", arguments: { code: WRITE } } });
  // The question comes as a request of the server's; it is answered with `answer`.
  for (;;) {
    const question = client.responses.find((m) => m.method === "elicitation/create");
    if (question !== undefined) {
      client.send({ jsonrpc: "2.0", id: question.id, result: answer });
      break;
    }
    if (client.responses.some((m) => m.id === 2)) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const reply = await client.answer(2);
  // The error as tacit's report (the answer's second item) shows it, after its exit line.
  return { text: (reply.result?.content?.[1]?.text ?? "").split("\n").slice(1).join("\n"), wrote: w.exists("a.txt") };
}

const CASES: Array<[string, unknown, string]> = [
  ["an unknown action", { action: "sure" }, `its "action" was "sure", not "accept", "decline" or "cancel"`],
  ["an action that is no string", { action: 42, content: { approve: true } }, `its "action" was 42, not "accept", "decline" or "cancel"`],
  ["an accept without content", { action: "accept" }, `it accepted with no object holding "approve"`],
  ["a content that is no object", { action: "accept", content: "yes" }, `it accepted with a "content" that was "yes", not an object holding "approve"`],
  ["an approve that is no boolean", { action: "accept", content: { approve: "true" } }, `it accepted with "approve" "true", not true or false`],
];

for (const [what, answer, words] of CASES) {
  it(`an answer with ${what} is a no, refused in one line that says what was wrong`, async () => {
    const { text, wrote } = await refusalFor(answer);
    // The bad things: the write went ahead, or the refusal dumps the validator's issues.
    expect(wrote, text).toBe(false);
    const refusal = text.split("\n")[0]!;
    expect(refusal).toContain(`the MCP client answered the question with something that is no answer (${words}), which counts as no.`);
    expect(refusal).not.toContain("where it can ask");
    expect(text).not.toContain(`"code"`);
  }, 30_000);
}

it("an accept with approve true is still a yes", async () => {
  const { text, wrote } = await refusalFor({ action: "accept", content: { approve: true } });
  expect(wrote, text).toBe(true);
}, 30_000);

it("an error a client's SDK sends for its own malformed answer is quoted on one line, and is a no", async () => {
  const { world: w, config } = world();
  const client = await serveWorld(w, ["--config", config], { onElicit: () => ({ action: "sure" }) as never });
  cleanups.push(() => void client.close());
  const text = await executeShownError(client, WRITE);
  expect(w.exists("a.txt"), text).toBe(false);
  const refusal = text.split("\n")[0]!;
  expect(refusal).toContain("asking the user through the MCP client failed (the client answered the question with an error instead of the user's answer: ");
  expect(refusal).toContain("Invalid elicitation result");
  // The dump's lines are one line now; what follows the refusal is the script's stack.
  expect(text.split("\n")[1]).toMatch(/^\s+at script\.ts/);
  expect(existsSync(w.at("a.txt"))).toBe(false);
}, 30_000);
