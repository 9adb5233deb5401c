// chat() on a Classified message returns at once, with a Classified answer computed in the
// background: nothing waited for one to finish before the next was asked. A seventh security
// review called it in a loop against a model that took its time: 3,801 requests open to the
// operator's model at once after 4 s, one socket and one billed question each, on their way
// to the host's limit of open files (every other session's work with them, under tacit serve).
// Classified chats are now asked a few at a time; the rest wait their turn, out of sight.

import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLASSIFIED_CHATS_AT_ONCE } from "../../runner/llm/chat-client.js";
import { runCli } from "../helpers.js";

let server: Server;
let baseUrl: string;
let dir: string;
let open = 0;
let most = 0;
let total = 0;

beforeAll(async () => {
  // A model that answers each question after a while.
  server = createServer((request, response) => {
    open++;
    total++;
    most = Math.max(most, open);
    request.resume();
    const timer = setTimeout(() => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "later" } }] }));
    }, 300);
    response.on("close", () => {
      clearTimeout(timer);
      open--;
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  dir = mkdtempSync(path.join(tmpdir(), "tacit-chat-flood-"));
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a flood of classified chats", () => {
  it("asks the model a few at a time, however many the script sends", async () => {
    const script = path.join(dir, "flood.ts");
    writeFileSync(script, 'const secret = classify("question");\nlet n = 0;\nfor (let i = 0; i < 500; i++) { chat(secret); n++; }\nprintln(n);\n');
    const r = await runCli(["run", "--no-check", "--exec-timeout-ms", "3000", "--llm-base-url", baseUrl, "--llm-api-key", "k", "--llm-model", "m", script], { cwd: dir });
    expect(r.stdout).toBe("500\n");
    // The waiting chats share one listener on the evaluation's signal: a listener each made Node
    // print a MaxListenersExceededWarning ("possible memory leak") on the run's stderr.
    expect(r.stderr).not.toContain("Warning");
    expect(total).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(CLASSIFIED_CHATS_AT_ONCE);
  }, 30_000);
});
