// The operator's LLM key in an answer whose Content-Type names UTF-16 while its bytes hold the key
// as ASCII (a server's mislabel, or a type an object store lets the request choose, as S3's
// response-content-type does). tacit read the body as UTF-16: characters that held no form of the
// key, which the script wrote back as UTF-16 bytes and had the key whole. Such an answer is now
// refused, as one holding a request's secret in another reading is. Through the real CLI and a
// loopback server; asserted: no piece of the key of 8 characters reaches the script, however it
// re-encodes what it got, and a UTF-16 answer that holds no form of the key still reads as it is.

import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import type http from "node:http";
import path from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer, type Received, type TestServer } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-host-key-charset-");
afterAll(cleanup);

const random = randomBytes(24).toString("base64").replace(/[+/=]/g, "x");
const apiKey = `sk-test/${random}+k==`;
const ordinary = "hello wörld, no key here";

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

it("a body of the key's ASCII bytes labelled UTF-16 is refused, and an ordinary UTF-16 body reads as it is", async () => {
  server = await startServer((request: Received, response: http.ServerResponse) => {
    const query = new URL(request.url, "http://x").searchParams;
    const charset = query.get("charset")!;
    const body = query.get("ordinary") === null ? Buffer.from(`KEY=${apiKey}\n`, "latin1") : Buffer.from(ordinary, "utf16le");
    response.writeHead(200, { "content-type": `text/plain; charset=${charset}` });
    response.end(body);
  });
  const at = `127.0.0.1:${server.port}`;
  const file = path.join(dir, `${randomUUID()}.ts`);
  writeFileSync(
    file,
    `requestNetwork(["${at}"], (net) => {\n` +
      `  for (const charset of ["utf-16le", "utf-16be", "utf-16"]) {\n` +
      `    try {\n` +
      `      const text = net.httpGet("${server.origin}/?charset=" + charset);\n` +
      `      const le: number[] = [], be: number[] = [];\n` +
      `      for (let i = 0; i < text.length; i++) { const c = text.charCodeAt(i); le.push(c & 255, c >> 8); be.push(c >> 8, c & 255); }\n` +
      `      println(charset, "read", JSON.stringify(String.fromCharCode(...le)), JSON.stringify(String.fromCharCode(...be)));\n` +
      `    } catch (e) { println(charset, (e as Error).name, (e as Error).message); }\n` +
      `  }\n` +
      `  println("ordinary", JSON.stringify(net.httpGet("${server.origin}/?ordinary=1&charset=utf-16le")));\n` +
      `});\n`,
  );
  const r = await runCli(unchecked(["run", "--network-permissions", at, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", file]), { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  for (const charset of ["utf-16le", "utf-16be", "utf-16"]) {
    expect(r.stdout).toMatch(new RegExp(`^${charset} SecurityError .*hold the operator's LLM key`, "m"));
  }
  expect(r.stdout).toContain(`ordinary ${JSON.stringify(ordinary)}`);
  // The bad thing: a piece of the key, in what the script printed of the bytes it rebuilt.
  for (let i = 0; i + 8 <= random.length; i++) expect(r.stdout, `holds ${random.slice(i, i + 8)} of the key`).not.toContain(random.slice(i, i + 8));
});
