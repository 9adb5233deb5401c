// The LLM key in files that hold it in another encoding than UTF-8 or UTF-16, read through the
// real CLI: UTF-32, hex, percent-encoded (a saved request's query) and JSON with "/" escaped (as
// PHP's json_encode writes it). A key with "/", "+" or "=" in it (base64-shaped keys have them)
// was handed to a script in each, which decoded it and had the key. No chat is made: the model's
// URL is a closed port, and the key is only what the host masks.

import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-key-encodings-");
afterAll(cleanup);

// Base64 of random bytes, with a "/", a "+" and "==" placed in it so that every form below differs from the key.
const apiKey = `sk-test/${randomBytes(18).toString("base64").replace(/[+/=]/g, "x")}+k==`;

const files: Record<string, Buffer> = {
  "utf32le.txt": Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), ...[...`KEY=${apiKey}\n`].map((c) => Buffer.from([c.charCodeAt(0), 0, 0, 0]))]),
  "utf32be.txt": Buffer.concat([Buffer.from([0, 0, 0xfe, 0xff]), ...[...`KEY=${apiKey}\n`].map((c) => Buffer.from([0, 0, 0, c.charCodeAt(0)]))]),
  "hex.txt": Buffer.from(`${Buffer.from(apiKey).toString("hex")}\n${Buffer.from(apiKey).toString("hex").toUpperCase()}\n`),
  "query.txt": Buffer.from(`GET /v1?key=${encodeURIComponent(apiKey)}\nGET /v1?key=${encodeURIComponent(apiKey).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())}\n`),
  "python-quote.txt": Buffer.from(`${apiKey.replace(/[+=]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}\n`),
  "php.json": Buffer.from(`{"llm":{"apiKey":"${apiKey.replaceAll("/", "\\/")}"}}\n`),
};
for (const [name, bytes] of Object.entries(files)) writeFileSync(path.join(dir, name), bytes);

it("a key in UTF-32, hex, percent-encoded or JSON-escaped text is masked, read as text, as bytes, a line at a time and by cat", async () => {
  const script = path.join(dir, "decode.ts");
  // Each file by every route, decoded every way its encoding is undone.
  writeFileSync(
    script,
    [
      `const names = ${JSON.stringify(Object.keys(files))};`,
      "const undo = (text: string): string[] => {",
      "  const hex = text.replace(/[^0-9a-fA-F]/g, ' ').split(' ').filter((h) => h.length % 2 === 0 && h.length > 0).map((h) => new TextDecoder().decode(new Uint8Array(h.match(/../g)!.map((b) => parseInt(b, 16)))));",
      "  let unescaped = text; try { unescaped = decodeURIComponent(text); } catch { /* not percent-encoded */ }",
      "  return [text, text.replace(/\\0/g, ''), unescaped, text.replace(/\\\\\\//g, '/'), ...hex];",
      "};",
      "requestFileSystem('.', (fs) => {",
      "  for (const name of names) {",
      "    const file = fs.access(name);",
      "    const bytes = file.readBytes();",
      "    let lines = ''; file.forEachLine((line) => { lines += line + '\\n'; });",
      "    for (const text of [file.read(), new TextDecoder('latin1').decode(bytes), lines]) for (const form of undo(text)) println(name, form);",
      "  }",
      "});",
      "requestExecPermission(['cat'], (proc) => { for (const form of undo(proc.execOutput('cat', names))) println('cat', form); });",
    ].join("\n") + "\n",
  );
  const r = await runCli(unchecked(["run", "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", "--command-permissions", "cat", script]), {
    cwd: dir,
    env,
  });
  expect(r.code, r.stderr).toBe(0);
  // Every file was read by each route (the script ran to its end).
  for (const name of [...Object.keys(files), "cat"]) expect(r.stdout).toContain(`${name} `);
  // The bad thing: the key, or a long piece of it, decoded by the script.
  const random = apiKey.slice("sk-test/".length);
  for (let at = 0; at + 8 <= random.length; at++) expect(r.stdout, `holds ${random.slice(at, at + 8)} of the key`).not.toContain(random.slice(at, at + 8));
});
