// The operator's LLM key in an HTTP answer's body, for a key whose own escaped forms begin with an
// escape: a base64 key that starts with "+", whose form in ASP.NET's JSON begins "\u002B" and in
// Razor's HTML "&#x2B;". The search that lets a body holding no form of the key through unmasked
// (runner/net/form-presence.ts) looked for those leads before the escapes a form can begin with,
// and where both stood at one place it took the lead and passed over the forms whose first escape
// that was: "+q7&#x2F;…" (mustache.js writes "/" so and "+" as it is) and "+\u0071…" reached the
// script with the key in them. Through the real CLI and a loopback server; asserted: no piece of
// the key of 8 characters reaches the script, as printed or once it undoes the escapes.

import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import type http from "node:http";
import path from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer, type Received, type TestServer } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-host-key-escape-lead-");
afterAll(cleanup);

// Base64-shaped, its first character "+" and its fourth "/"; the random part past them.
const random = randomBytes(24).toString("base64").replace(/[+/=]/g, "x");
const apiKey = `+q7/${random}==`;

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const hex2 = (c: string): string => c.charCodeAt(0).toString(16).padStart(2, "0");

const bodies: Record<string, string> = {
  // mustache.js's escapeHtml (Handlebars' too, but for "/"): "/" "=" as hex references, "+" as it is.
  mustache: `<input value="${apiKey.replace(/\//g, "&#x2F;").replace(/=/g, "&#x3D;")}">`,
  // An encoder that escapes more than it must: the key's second character as \u00XX.
  "json-second": `{"key":"${apiKey[0]}\\u00${hex2(apiKey[1]!)}${apiKey.slice(2)}"}`,
};

/** A text with every escape the bodies above hold undone. */
function decoded(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\u([0-9a-f]{4})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

it("a body with a key that begins with \"+\", one of its first characters escaped, shows the script no piece of it", async () => {
  server = await startServer((request: Received, response: http.ServerResponse) => {
    const body = bodies[decodeURIComponent(new URL(request.url, "http://x").pathname.slice(1))];
    response.writeHead(body === undefined ? 404 : 200, { "content-type": "text/plain; charset=utf-8" });
    response.end(body ?? "");
  });
  const at = `127.0.0.1:${server.port}`;
  const names = Object.keys(bodies);
  const file = path.join(dir, `${randomUUID()}.ts`);
  writeFileSync(
    file,
    `requestNetwork(["${at}"], (net) => {\n` +
      `  for (const name of ${JSON.stringify(names)}) println(name, JSON.stringify(net.httpGet("${server.origin}/" + name)));\n` +
      `});\n`,
  );
  const r = await runCli(unchecked(["run", "--network-permissions", at, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", file]), { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  // Each body was asked for and printed, masked where the key was.
  expect(server.received.map((q) => q.url)).toEqual(names.map((name) => `/${name}`));
  for (const name of names) expect(r.stdout).toMatch(new RegExp(`^${name} ".*\\[redacted\\].*"$`, "m"));
  // The bad thing: a piece of the key, as printed or once the script undid the escapes.
  const printed = JSON.parse(`[${r.stdout.trim().split("\n").map((line) => line.slice(line.indexOf(" ") + 1)).join(",")}]`) as string[];
  for (const seen of [r.stdout, decoded(printed.join("\n"))]) {
    for (let i = 0; i + 8 <= random.length; i++) expect(seen, `holds ${random.slice(i, i + 8)} of the key`).not.toContain(random.slice(i, i + 8));
  }
});
