// The operator's LLM key, escaped, whole in an answer cut at its size limit, ending within the
// characters a cut answer leaves out at its end (HostSecrets.cutMargin). Those are left out so
// that a key the limit cut through shows no first part; but the key's escaped forms were masked
// only after, in what was left: one that ended within that margin was cut by leaving it out, and
// the script read the key escaped but for its last character, which no whole form matched. The
// forms are now masked before the cut. Through the real CLI and a loopback server, with a key
// that has no word of its own to mask (no "=", as "sk-proj-…" keys); asserted: no four characters
// of its random part reach the script once it undoes the escapes, wherever the form ends.

import { randomBytes } from "node:crypto";
import type http from "node:http";
import { afterAll, afterEach, expect, it } from "vitest";
import { tempDirWithHome } from "../helpers.js";
import { runCutAnswers, startServer, type Received, type TestServer } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-host-key-cut-margin-");
afterAll(cleanup);

const random = randomBytes(24).toString("base64").replace(/[+/=]/g, "x");
const apiKey = `sk-proj-${random}`;

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

it("an answer cut at its size limit, the key escaped whole in it near its end, shows no piece of the key wherever the form ends", async () => {
  // Every character as \u00XX, six for each, as a JSON encoder that escapes all but ASCII letters writes a text past ASCII.
  const escaped = [...apiKey].map((c) => `\\u00${c.charCodeAt(0).toString(16).padStart(2, "0")}`).join("");
  const limit = 4096;
  // How far before the limit the form ends: from at it to past any margin a key this long is given.
  const before = Array.from({ length: 21 }, (_, i) => i * 40);
  server = await startServer((request: Received, response: http.ServerResponse) => {
    const n = Number(new URL(request.url, "http://x").searchParams.get("n"));
    response.writeHead(200, { "content-type": "application/json" });
    response.end(`{"k":"${"f".repeat(limit - 6 - escaped.length - n)}${escaped}${"z".repeat(n + 1000)}"}\n`);
  });
  const r = await runCutAnswers(dir, env, server, apiKey, limit, before);
  expect(r.code, r.stderr).toBe(0);
  // Each answer came, cut at the limit.
  expect(r.stdout.split(`response truncated at ${limit} bytes`).length - 1, r.stdout).toBe(before.length);
  // The bad thing: a piece of the key, once the script undid the escapes.
  const printed = JSON.parse(`[${r.stdout.trim().split("\n").map((line) => line.replace(/^cut \d+ /, "")).join(",")}]`) as string[];
  const seen = printed.join("\n").replace(/\\u([0-9a-f]{4})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  for (let i = 0; i + 4 <= random.length; i++) expect(seen, `holds ${random.slice(i, i + 4)} of the key`).not.toContain(random.slice(i, i + 4));
});
