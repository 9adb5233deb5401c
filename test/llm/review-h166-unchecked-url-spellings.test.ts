// chat() while NODE_TLS_REJECT_UNAUTHORIZED=0 stands in tacit's environment, to a base URL that
// the URL parser reads as https but that does not begin with "https:" as written: a leading space,
// or a tab inside the scheme, which the parser (fetch's too) drops. The refusal tested the text's
// start, so the key and the question went to a self-signed server answering for the model's address.
// Through the real CLI and an https server on loopback with a certificate nothing trusts.

import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { selfSignedCertificate } from "./self-signed.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-chat-url-spellings-");
const apiKey = `sk-test-${randomUUID()}`;
/** The authorization header of each request the server received. */
const received: string[] = [];
let server: Server;
let port = 0;

beforeAll(async () => {
  server = createServer(selfSignedCertificate(dir), (request, response) => {
    received.push(request.headers.authorization ?? "");
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ choices: [{ message: { content: "answered" } }] }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
  writeFileSync(path.join(dir, "chat.ts"), 'try { println(chat("hello")); } catch (error) { println((error as Error).message); }\n');
});
afterAll(async () => {
  server.close();
  await once(server, "close");
  cleanup();
});

describe.concurrent("an https base URL spelled so that its text does not begin with https:", () => {
  for (const [what, spell] of [
    ["a leading space", (url: string) => ` ${url}`],
    ["a tab inside the scheme", (url: string) => url.replace("https", "ht\ttps")],
  ] as const) {
    it(`${what}: refused as https://… is, and the key is sent nowhere`, async () => {
      const baseUrl = spell(`https://127.0.0.1:${port}/v1`);
      const args = unchecked(["run", "--no-check", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "m", "chat.ts"]);
      const r = await runCli(args, { cwd: dir, env: { ...env, NODE_TLS_REJECT_UNAUTHORIZED: "0" } });
      expect(r.code, r.stderr).toBe(0);
      expect(received).toEqual([]);
      expect(r.stdout).toContain("chat: NODE_TLS_REJECT_UNAUTHORIZED=0 in tacit's environment turns off Node's checks of the model server's certificate");
      expect(r.stdout).not.toContain("answered");
      expect(r.stdout + r.stderr).not.toContain(apiKey);
    });
  }
});
