// chat() while NODE_TLS_REJECT_UNAUTHORIZED=0 stands in tacit's environment, through the real CLI
// and an https server on loopback with a self-signed certificate that nothing trusts: a stand-in
// for whoever answers for the model's address. Node's fetch, which the chat client uses, took the
// variable as "accept any certificate", and the server received the key and the question. The
// network capability checks certificates whatever the variable says (test/net/https.test.ts).
// Asserted: no request reaches the server, and the script is told why and what to do instead.

import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import type { Server } from "node:https";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { untrustedModelServer } from "./self-signed.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-chat-unchecked-");
const apiKey = `sk-test-${randomUUID()}`;
const canary = `CANARY-${randomUUID()}`;
/** The authorization header and body of each request the server received. */
let received: string[] = [];

let server: Server;
let baseUrl = "";

beforeAll(async () => {
  ({ server, baseUrl, received } = await untrustedModelServer(dir));
  writeFileSync(path.join(dir, ".env"), `${canary}\n`);
});
afterAll(async () => {
  server.close();
  await once(server, "close");
  cleanup();
});

it("with NODE_TLS_REJECT_UNAUTHORIZED=0, chat() sends neither the key nor a question (classified or not) to an https model, and says why", async () => {
  const script = path.join(dir, "unchecked.ts");
  writeFileSync(
    script,
    [
      'try { println(chat("hello")); } catch (error) { println((error as Error).message); }',
      'requestFileSystem(".", (fs) => println(chat(fs.readClassified(".env"))));',
    ].join("\n") + "\n",
  );
  const sink = path.join(dir, "unchecked.sink");
  const args = unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "m", "--secure-output", sink, script]);
  const r = await runCli(args, { cwd: dir, env: { ...env, NODE_TLS_REJECT_UNAUTHORIZED: "0" } });
  expect(r.code, r.stderr).toBe(0);
  expect(received).toEqual([]);
  const refusal =
    `chat: NODE_TLS_REJECT_UNAUTHORIZED=0 in tacit's environment turns off Node's checks of the model server's certificate, so the API key ` +
    `and the question would go to whoever answers for ${new URL(baseUrl).origin}; nothing was sent. The operator can run tacit without it, ` +
    "and trust a private certificate authority with NODE_EXTRA_CA_CERTS instead";
  expect(r.stdout).toBe(`${refusal}\nClassified(***)\n`);
  expect(readFileSync(sink, "utf8")).toContain(`[tacit] chat failed: ${refusal}`);
  expect(r.stdout + r.stderr).not.toContain(apiKey);
  expect(r.stdout + r.stderr).not.toContain(canary);

  // Trusted the way the refusal says, the same server answers.
  const trusted = await runCli(args, { cwd: dir, env: { ...env, NODE_EXTRA_CA_CERTS: path.join(dir, "cert.pem") } });
  expect(trusted.code, trusted.stderr).toBe(0);
  expect(trusted.stdout).toBe("answered\nClassified(***)\n");
  expect(received).toHaveLength(2);
  expect(received.every((request) => request.startsWith(`Bearer ${apiKey} `))).toBe(true);
});
