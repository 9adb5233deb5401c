// libraryConfig.llm.answerLimitChars: how much of one chat() answer tacit keeps, 8 MiB of
// characters by default and at most. Against a fake OpenAI-compatible server on loopback (a cloud
// model cannot run here), through the real CLI: an answer past the setting is cut there, one whose
// JSON is past what is read for it is refused unread, and a setting that would raise the limit or
// is no count is refused with the key named.

import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";

let server: Server;
let baseUrl: string;
let dir: string;
const apiKey = `sk-test-${randomUUID()}`;
/** The answer the server gives for the model named "<count>": that many characters. */
const answerOf = (count: number): string => "abcdefghij".repeat(Math.ceil(count / 10)).slice(0, count);

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const { model } = JSON.parse(body) as { model: string };
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ choices: [{ message: { content: answerOf(Number(model)) } }] }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  dir = mkdtempSync(path.join(tmpdir(), "tacit-answer-limit-"));
});

afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `tacit run` of `script` with a config file whose libraryConfig.llm is `llm`, asking the model named `model`. */
function runWith(llm: Record<string, unknown>, model: string, script: string) {
  const config = path.join(dir, `config-${randomUUID()}.json`);
  writeFileSync(config, JSON.stringify({ libraryConfig: { llm: { baseUrl, model, ...llm } } }));
  const file = path.join(dir, `script-${randomUUID()}.ts`);
  writeFileSync(file, script);
  return runCli(unchecked(["run", "--config", config, file]), { cwd: dir, env: { TACIT_LLM_API_KEY: apiKey } });
}

describe("libraryConfig.llm.answerLimitChars", () => {
  it("cuts an answer longer than the setting to it, and keeps a shorter one whole", async () => {
    const script = 'println(chat("long").length);\nconst short = chat("short");\nprintln(short.length);\n';
    // The same model answers both: 5,000 characters, against a limit of 1,000 and then of 8,000.
    const cut = await runWith({ answerLimitChars: 1000 }, "5000", script);
    expect(cut.stderr).toBe("");
    expect(cut.stdout).toBe("1000\n1000\n");
    const whole = await runWith({ answerLimitChars: 8000 }, "5000", script);
    expect(whole.stdout).toBe("5000\n5000\n");
    // Unset: the default keeps it whole too.
    expect((await runWith({}, "5000", script)).stdout).toBe("5000\n5000\n");
  }, 60_000);

  it("refuses unread an answer whose JSON is larger than is read for the setting, and says which setting", async () => {
    // 6 bytes a character of 1,000, and 64 KiB more: an answer of 200,000 characters is past it.
    const r = await runWith({ answerLimitChars: 1000 }, "200000", 'try { chat("q"); } catch (e) { println(String(e)); }\n');
    expect(r.stdout).toContain("the model's answer is larger than the 71536 bytes tacit reads of one");
    expect(r.stdout).toContain("config libraryConfig.llm.answerLimitChars");
    expect(r.stdout).not.toContain("abcdefghij");
  }, 60_000);

  it("refuses a setting past the default, or no positive whole number, naming the key", async () => {
    for (const bad of [8 * 1024 * 1024 + 1, 0, 1.5, "1000"]) {
      const r = await runWith({ answerLimitChars: bad }, "10", 'println("ran");\n');
      expect(r.stdout, String(bad)).not.toContain("ran");
      expect(r.code, String(bad)).not.toBe(0);
      expect(r.stderr, String(bad)).toContain("libraryConfig.llm.answerLimitChars");
    }
  }, 60_000);
});
