// The operator's LLM key in an HTTP answer's body, through the real CLI and a loopback server
// that serves it. Every reply to the sandbox is scrubbed of the key's whole forms (as it is, in
// base64, hex, UTF-16, percent-encoded whole), but a body that escaped some of its characters, as
// encoders of HTML, JavaScript, CSS and JSON do (an attribute with "&#x2F;" for "/", "\x2B" for
// "+", "%73k-…" for an encoder that escapes more than it must), held none of those forms, and the
// script decoded the key out of it. Answer bodies are now masked as the texts a server chose that
// an error quotes (HostSecrets.inServerText). Asserted: no piece of the key of 8 characters
// reaches the script, however it decodes the body; and a body that holds no form of the key, near
// misses included, reaches it unchanged, character for character.

import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import type http from "node:http";
import path from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { runCutAnswers, startServer, type Received, type TestServer } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-host-key-body-");
afterAll(cleanup);

// A base64-shaped key with "/", "+" and "=" (an encoder escapes those), its random part past "sk-test/".
const random = randomBytes(24).toString("base64").replace(/[+/=]/g, "x");
const apiKey = `sk-test/${random}+k==`;

let server: TestServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const hex2 = (c: string): string => c.charCodeAt(0).toString(16).padStart(2, "0");
/** The key with each character that is not a letter or a digit written by `escape`. */
const escapingPunctuation = (escape: (c: string) => string): string => apiKey.replace(/[^A-Za-z0-9]/g, escape);

/** The key as encoders write it, each in a body of its own (with text around it). */
const bodies: Record<string, string> = {
  // Forms the reply's scrub knew already: the key as it is, percent-encoded whole.
  plain: `KEY=${apiKey}\n`,
  query: `GET /v1?key=${encodeURIComponent(apiKey)}\n`,
  // Twig's html_attr, OWASP ESAPI: every character but letters and digits as a hex reference.
  "html-attr": `<input value="${escapingPunctuation((c) => `&#x${hex2(c).toUpperCase()};`)}">`,
  // PHP's htmlentities with ENT_HTML5: "/" "+" "=" by name.
  "html5-named": `<p>${apiKey.replace(/\//g, "&sol;").replace(/\+/g, "&plus;").replace(/=/g, "&equals;")}</p>`,
  // Laminas escapeJs: "\x2F".
  javascript: `var key = "${escapingPunctuation((c) => `\\x${hex2(c).toUpperCase()}`)}";`,
  // Laminas escapeCss: "\2F ".
  css: `.k { content: "${escapingPunctuation((c) => `\\${hex2(c)} `)}"; }`,
  // ASP.NET Core's System.Text.Json: "+" as \u002B.
  "dotnet-json": `{"key":"${apiKey.replace(/\+/g, "\\u002B")}"}`,
  // Every character as \u00XX, as a JSON encoder that escapes all but ASCII letters would for a text past ASCII.
  "json-unicode": `{"key":"${[...apiKey].map((c) => `\\u00${hex2(c)}`).join("")}"}`,
  // An encoder that escapes more than it must: the first character, and every other one.
  "first-escaped": `/${`%${hex2(apiKey[0]!).toUpperCase()}${apiKey.slice(1)}`}/`,
  "every-other": `?k=${[...apiKey].map((c, i) => (i % 2 === 0 ? `%${hex2(c)}` : c)).join("")}`,
};

/** Runs `script` (lines inside requestNetwork, `origin` defined) against a server answering each path with `answer`; what tacit printed. */
async function fetchBodies(answer: (name: string) => string | undefined, script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  server = await startServer((request: Received, response: http.ServerResponse) => {
    const body = answer(decodeURIComponent(new URL(request.url, "http://x").pathname.slice(1)));
    response.writeHead(body === undefined ? 404 : 200, { "content-type": "text/plain; charset=utf-8" });
    response.end(body ?? "");
  });
  const at = `127.0.0.1:${server.port}`;
  const file = path.join(dir, `${randomUUID()}.ts`);
  writeFileSync(file, `const origin = "${server.origin}";\nrequestNetwork(["${at}"], (net) => {\n${script}\n});\n`);
  const r = await runCli(unchecked(["run", "--network-permissions", at, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", file]), {
    cwd: dir,
    env,
  });
  return { code: r.code ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A text with every escape any of the encoders above writes undone. */
function decoded(text: string): string {
  return text
    .replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/&(sol|plus|equals);/g, (_, name: string) => ({ sol: "/", plus: "+", equals: "=" })[name]!)
    .replace(/\\u([0-9a-f]{4})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\x([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\([0-9a-f]{1,6}) ?/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

it("a body that holds the key with some of its characters escaped, as HTML, JavaScript, CSS and JSON encoders write it, shows the script no piece of it", async () => {
  const names = Object.keys(bodies);
  const { code, stdout, stderr } = await fetchBodies(
    (name) => bodies[name],
    `  for (const name of ${JSON.stringify(names)}) println(name, JSON.stringify(net.httpGet(origin + "/" + name)));`,
  );
  expect(code, stderr).toBe(0);
  // Each body was asked for and printed, masked where the key was.
  expect(server!.received.map((r) => r.url)).toEqual(names.map((name) => `/${name}`));
  for (const name of names) expect(stdout).toMatch(new RegExp(`^${name} ".*\\[redacted\\].*"$`, "m"));
  // The bad thing: a piece of the key, in the body as printed or once the script undid its escapes.
  for (const seen of [stdout, decoded(JSON.parse(`[${stdout.trim().split("\n").map((line) => line.slice(line.indexOf(" ") + 1)).join(",")}]`).join("\n"))]) {
    for (let at = 0; at + 8 <= random.length; at++) expect(seen, `holds ${random.slice(at, at + 8)} of the key`).not.toContain(random.slice(at, at + 8));
  }
});

it("a body with the key escaped in it is masked there and nowhere else, and one with no form of the key reaches the script unchanged", async () => {
  // Near misses: the key's public lead, its first 40 characters, the key with a character
  // changed (each on the masking's slow path: they begin like the key), and escapes, HTML and text
  // past ASCII around them; none is a form of the key.
  const nearMisses =
    `sk-test/ ${apiKey.slice(0, 40)} ${apiKey.slice(0, 20)}${apiKey[20] === "A" ? "B" : "A"}${apiKey.slice(21)} ` +
    `%73k-test%2F &#x73;k-test&#x2F; \\x73k \\u0073k-t "quoted" \\n \\\\ &amp; &lt;b&gt; %E4%B8%AD 中文 emoji 😀 \r\n tab\t end`;
  const escaped = bodies["html-attr"]!;
  const { code, stdout, stderr } = await fetchBodies(
    (name) => (name === "near" ? nearMisses : name === "around" ? `before ${escaped} after ${nearMisses}` : undefined),
    `  println("near", JSON.stringify(net.httpGet(origin + "/near")));\n  println("around", JSON.stringify(net.httpGet(origin + "/around")));`,
  );
  expect(code, stderr).toBe(0);
  const printed = (label: string): string => JSON.parse(stdout.split("\n").find((line) => line.startsWith(`${label} `))!.slice(label.length + 1)) as string;
  expect(printed("near")).toBe(nearMisses);
  expect(printed("around")).toBe(`before <input value="[redacted]"> after ${nearMisses}`);
});

it("an answer cut at its size limit inside the key written with every character escaped shows no piece of it, wherever the cut falls", async () => {
  // Every character as \u00XX (6 characters each), and as &#xXX; with the zeros an encoder may pad with.
  const escapedEvery = [...apiKey].map((c) => `\\u00${hex2(c)}`).join("");
  const limit = 4096;
  const cuts = [8, 100, 180, 220, 260, escapedEvery.length - 1];
  server = await startServer((request: Received, response: http.ServerResponse) => {
    const n = Number(new URL(request.url, "http://x").searchParams.get("n"));
    response.writeHead(200, { "content-type": "application/json" });
    response.end(`{"k":"${"f".repeat(limit - 7 - n)}${escapedEvery}"}\n`);
  });
  const r = await runCutAnswers(dir, env, server, apiKey, limit, cuts);
  expect(r.code, r.stderr).toBe(0);
  // Each answer came, cut at the limit (the script ran to its end).
  for (const n of cuts) expect(r.stdout).toContain(`cut ${n} "`);
  expect(r.stdout.split(`response truncated at ${limit} bytes`).length - 1, r.stdout).toBe(cuts.length);
  // The bad thing: the escaped first part of the key the cut left, decoded.
  const seen = decoded(JSON.parse(`[${r.stdout.trim().split("\n").map((line) => line.replace(/^cut \d+ /, "")).join(",")}]`).join("\n"));
  // Its random part's first characters, any four of them: a cut 260 characters in left 14 (six past "sk-test/").
  for (let at = 0; at + 4 <= random.length; at++) expect(seen, `holds ${random.slice(at, at + 4)} of the key`).not.toContain(random.slice(at, at + 4));
});
