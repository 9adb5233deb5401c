// Answers a client sends for questions tacit serve did not ask: a yes sent ahead, by every id the
// server's questions could take, and a second answer to a question already answered no. Only the
// client's first answer to the question asked counts; the others change nothing.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { tempDirWithHome } from "../helpers.js";
import { rawClient } from "./raw-client.js";

interface Message {
  id?: unknown;
  method?: string;
  result?: { isError?: boolean; structuredContent?: { error: string | null } };
}

it("a yes sent before any question, and a yes after a no, approve nothing: the always-ask delete is refused", async () => {
  const { dir, env, cleanup } = tempDirWithHome("tacit-elicitation-unasked-");
  const work = path.join(dir, "work");
  mkdirSync(work);
  writeFileSync(path.join(work, "victim.txt"), "keep me\n");
  writeFileSync(path.join(dir, "tacit.json"), JSON.stringify({ policy: { rules: [{ action: "fs.delete", tier: "always-ask" }] } }));
  const client = rawClient<Message>(["--no-check", "--quiet", "--config", path.join(dir, "tacit.json")], work, env);
  const yes = { action: "accept", content: { approve: true } };
  try {
    client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: { elicitation: {} }, clientInfo: { name: "t", version: "0" } } });
    await client.answer(1);
    client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // Ahead of any question, by every id the server's own requests could take.
    for (let id = 0; id < 20; id++) client.send({ jsonrpc: "2.0", id, result: yes });
    client.send({ jsonrpc: "2.0", id: "c", method: "tools/call", params: { name: "execute_typescript", arguments: { code: 'requestFileSystem(".", (fs) => fs.access("victim.txt").delete());' } } });
    let question: Message | undefined;
    while (!(question = client.responses.find((r) => r.method === "elicitation/create")) && client.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(question, "the person was asked").toBeDefined();
    client.send({ jsonrpc: "2.0", id: question!.id, result: { action: "decline" } });
    client.send({ jsonrpc: "2.0", id: question!.id, result: yes });
    const answer = await client.answer("c");
    expect(answer.result?.isError).toBe(true);
    expect(answer.result?.structuredContent?.error).toContain("a person was asked (elicitation (decline)) and did not approve it");
    expect(existsSync(path.join(work, "victim.txt"))).toBe(true);
    expect(client.responses.filter((r) => r.method === "elicitation/create")).toHaveLength(1);
  } finally {
    client.close();
    cleanup();
  }
});
