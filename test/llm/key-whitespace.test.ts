// An LLM key given with whitespace around it (a paste into an MCP client's env, a config value
// with a trailing newline), through the real CLI and a model server on loopback. fetch sends a
// header's value trimmed, so the server got the key without it, but tacit looked for the key as
// given: a file holding the key as its provider shows it reached the script whole. And a key
// holding a character no header can carry failed each chat with fetch's own error, which named
// that character and where it stands in the key.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-key-whitespace-");
const apiKey = `sk-test-${randomUUID()}`;
/** The Authorization header each question came with. */
const authorizations: string[] = [];

let server: TestServer;
let baseUrl = "";

beforeAll(async () => {
  server = await startServer((request, response) => {
    authorizations.push(request.headers.authorization ?? "");
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ choices: [{ message: { content: "fine" } }] }));
  });
  baseUrl = `${server.origin}/v1`;
  writeFileSync(path.join(dir, "provider-key.txt"), `OPENAI_API_KEY=${apiKey}\n`);
  writeFileSync(path.join(dir, "read-key.ts"), 'requestFileSystem(".", (fs) => println(fs.access("provider-key.txt").read()));\nprintln(chat("hi"));\n');
});
afterAll(async () => {
  await server.close();
  cleanup();
});

describe.concurrent("an LLM key given with whitespace or a character no header carries", () => {
  it.each([
    ["in the environment, with a trailing newline and space", { TACIT_LLM_API_KEY: `${apiKey}\n ` }, []],
    ["as a flag, with a leading space", {}, ["--llm-api-key", ` ${apiKey}`]],
  ])("%s: the key as sent is the key masked in what a script reads", async (_how, keyEnv, keyFlags) => {
    const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-model", "m", ...keyFlags, "read-key.ts"]), { cwd: dir, env: { ...env, ...keyEnv } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("OPENAI_API_KEY=[redacted]\n\nfine\n");
    expect(authorizations).toContain(`Bearer ${apiKey}`);
  });

  it("a key holding a character beyond Latin-1 is refused before any script runs, naming neither it nor where it stands", async () => {
    const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-model", "m", "read-key.ts"]), { cwd: dir, env: { ...env, TACIT_LLM_API_KEY: `${apiKey}\u20ac` } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("the LLM API key holds a line break, another control character or a character beyond Latin-1, which no HTTP header can carry");
    expect(r.stderr).not.toMatch(/8364|€|index/);
    expect(r.stderr).not.toContain(apiKey);
  });
});
