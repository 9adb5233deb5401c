// The LLM key in a model server's error answer, which chat() quotes (its first 500 characters),
// through the real CLI and an OpenAI-compatible server on loopback that knows the key (a proxy
// that echoes the Authorization it was sent, as some do in their errors). The key itself was
// masked before the cut; as UTF-16 (a NUL beside each character) the cut left its first part,
// and with a character escaped it was no form the scrub of replies knew: the script printed
// it, and a classified question's failure, noted in the secure output, wrote it there.
// Asserted: no piece of the key of 8 characters reaches stdout, stderr or the secure output.

import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { questionOf } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-key-error-answer-");
const apiKey = `sk-test-${randomUUID()}`;
const utf16Key = [...apiKey].join("\0");
/** The key with its first character percent-escaped. */
const escapedKey = `%${apiKey.charCodeAt(0).toString(16).toUpperCase()}${apiKey.slice(1)}`;

/** The error answer for a question: "utf16 N" puts the key's UTF-16 form where the 500-character quote ends N characters into it. */
function errorAnswer(question: string): string {
  const [kind, n] = question.split(" ");
  if (kind === "utf16") return `${"e".repeat(500 - Number(n))}${utf16Key} after`;
  if (kind === "escaped") return `{"error":"invalid key ${escapedKey}"}`;
  return "no such question";
}

let baseUrl = "";
const server = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk: Buffer) => (body += chunk.toString()));
  request.on("end", () => {
    const question = questionOf(body);
    if (question === "answer") {
      // A success whose text holds the key escaped and upper-cased (a proxy that reports what it forwarded).
      response.writeHead(200, { "content-type": "application/json" });
      return void response.end(JSON.stringify({ choices: [{ message: { content: `forwarded with ${escapedKey} (${apiKey.toUpperCase()})` } }] }));
    }
    // The status text too: tacit never quotes it, and that stays so.
    response.writeHead(401, `Invalid key ${apiKey}`, { "content-type": "text/plain" });
    response.end(errorAnswer(question));
  });
});

beforeAll(async () => {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => {
  server.close();
  cleanup();
});

/** Runs `code` with the model configured and a secure output; all tacit wrote. */
async function run(code: string): Promise<{ code: number; stdout: string; seen: string }> {
  const name = randomUUID();
  const script = path.join(dir, `${name}.ts`);
  const sink = path.join(dir, `${name}.sink`);
  writeFileSync(script, code);
  const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "m", "--secure-output", sink, script]), { cwd: dir, env });
  return { code: r.code ?? -1, stdout: r.stdout, seen: [r.stdout, r.stderr, existsSync(sink) ? readFileSync(sink, "utf8") : ""].join("\n") };
}

/** No piece of the key of 8 characters, with escapes and NULs (UTF-16) taken out. */
function expectNoPieceOfKey(seen: string): void {
  const plain = decodeURIComponent(seen.replace(/%(?![0-9a-f]{2})/gi, "%25")).replace(/\\u0000|\0/g, "").toLowerCase();
  for (let at = 0; at + 8 <= apiKey.length; at++) expect(plain, `holds ${apiKey.slice(at, at + 8)} of the key`).not.toContain(apiKey.slice(at, at + 8));
}

const cuts = [16, 30, 2 * apiKey.length - 2];

it("an error answer whose 500-character quote ends inside the key's UTF-16 form shows no first part of it", async () => {
  const r = await run(
    `for (const n of ${JSON.stringify(cuts)}) {\n  try { println(chat("utf16 " + n)); } catch (e) { println("cut", n, JSON.stringify((e as Error).message)); }\n}\n`,
  );
  expect(r.code, r.seen).toBe(0);
  for (const n of cuts) expect(r.stdout).toContain(`cut ${n} "chat: the model answered HTTP 401: eee`);
  expectNoPieceOfKey(r.seen);
});

it("an error answer that holds the key with a character escaped is quoted with the key masked", async () => {
  const r = await run(`try { println(chat("escaped")); } catch (e) { println("escaped", (e as Error).message); }\n`);
  expect(r.code, r.seen).toBe(0);
  expect(r.stdout).toContain('escaped chat: the model answered HTTP 401: {"error":"invalid key [redacted]"}');
  expectNoPieceOfKey(r.seen);
});

it("a classified question's failure, noted in the secure output, holds no piece of the key either", async () => {
  const questions = [...cuts.map((n) => `utf16 ${n}`), "escaped"];
  const r = await run(`for (const q of ${JSON.stringify(questions)}) println(chat(classify(q)));\n`);
  expect(r.code, r.seen).toBe(0);
  // Each failure was noted (the answer is a value that could not be computed), and its print says so.
  expect(r.seen.split("[tacit] chat failed: chat: the model answered HTTP 401: ").length - 1, r.seen).toBe(questions.length);
  expect(r.seen.split("<classified value unavailable: chat failed: chat: the model answered HTTP 401: ").length - 1, r.seen).toBe(questions.length);
  expectNoPieceOfKey(r.seen);
});

it("a model's answer that holds the key escaped or upper-cased reaches the script, and a classified one the secure output, with the key masked", async () => {
  const r = await run(`println(chat("answer"));\nprintln(chat(classify("answer")));\n`);
  expect(r.code, r.seen).toBe(0);
  expect(r.stdout).toContain("forwarded with [redacted] ([redacted])\nClassified(***)");
  expect(r.seen).toContain("forwarded with [redacted] ([redacted])\n");
  expectNoPieceOfKey(r.seen);
});
