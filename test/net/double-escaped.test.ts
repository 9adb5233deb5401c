// A secret escaped twice in an answer, through the real CLI and loopback servers: an echo that
// escapes a header as Twig's html_attr does ("&#x2F;" for "/") and then escapes that again as a
// page does with what it was handed ("&amp;#x2F;"), or as ASP.NET Core's JSON writes it
// ("\u0026#x2F;"), or percent-encodes it for a link ("%26%23x2F%3B"). Redaction undid escapes
// once, which left "&#x2F;" where the secret had "/", no form of it: a secret with a "/" or a "+"
// (an AWS secret key, a base64 token) came back whole between the escapes, in plaintext. The same
// for the operator's LLM key in any answer (its masking's quick search read escapes once too).

import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { attemptOf, attempts, isEnvFile, lit, permit, perTestResources, secretNetScript, tacit, writeTree } from "./fixtures.js";
import { expectNoLeak } from "../files/fixtures.js";

const resources = perTestResources("tacit-net-double-escaped-");

const hex2 = (c: string): string => c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0");
/** Twig's html_attr: every character but letters, digits and ",.-_" as a hex reference. */
const htmlAttr = (text: string): string => text.replace(/[^a-zA-Z0-9,.\-_]/g, (c) => `&#x${hex2(c)};`);
/** PHP's htmlentities with ENT_HTML5, for the characters these secrets hold: "/" and "+" by name. */
const html5Named = (text: string): string => text.replace(/\//g, "&sol;").replace(/\+/g, "&plus;");
/** HTML escaping of a text that was escaped already. */
const htmlAgain = (text: string): string => text.replace(/&/g, "&amp;");

/** A secret's escaped-twice spellings, by the path a server answers with each. */
const twice: Record<string, (text: string) => string> = {
  "attr-html": (text) => htmlAgain(htmlAttr(text)),
  "named-html": (text) => htmlAgain(html5Named(text)),
  "attr-dotnet-json": (text) => `{"v":"${htmlAttr(text).replace(/&/g, "\\u0026")}"}`,
  "attr-url": (text) => encodeURIComponent(htmlAttr(text)),
  "attr-html-html": (text) => htmlAgain(htmlAgain(htmlAttr(text))),
};

/** Undoes every escape the spellings above write, as often as it takes: what a script does with such an answer. */
function undone(text: string): string {
  let before = "";
  let after = text;
  while (after !== before) {
    before = after;
    after = after
      .replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\u([0-9a-f]{4})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/&(amp|sol|plus);/g, (_, name: string) => ({ amp: "&", sol: "/", plus: "+" })[name]!);
  }
  return after;
}

/** No 8 characters of `random` in a row in `seen`, as printed or once its escapes are undone. */
function expectNoPieceOf(random: string, seen: string): void {
  for (const text of [seen, undone(seen)]) {
    for (let at = 0; at + 8 <= random.length; at++) expect(text.includes(random.slice(at, at + 8)), `holds ${random.slice(at, at + 8)}`).toBe(false);
  }
}

describe("a secret escaped twice in an answer", () => {
  it("a secret header echoed escaped twice is masked, in each spelling", async () => {
    const server = await resources.server((request, response) => {
      response.setHeader("content-type", "text/html; charset=utf-8");
      response.end(`<p>${twice[request.url.slice(1)]!(String(request.headers["x-key"]))}</p>`);
    });
    const { root, canary } = resources.projectWithSecret();
    // Shaped like an AWS secret access key: a "/" and a "+", which html_attr escapes.
    const secret = `${canary}/${randomBytes(6).toString("hex")}+z`;
    writeTree(root, { ".env": `${secret}\n` });
    const names = Object.keys(twice);
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${server.port}`], `
  for (const name of ${JSON.stringify(names)}) attempt(name, () => net.httpGet(${lit(server.origin)} + "/" + name, { secretHeaders: { "x-key": token } }));
`),
      permit(`127.0.0.1:${server.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    // Each spelling was asked for with the secret, and answered.
    expect(server.received.map((request) => [request.url, request.headers["x-key"]])).toEqual(names.map((name) => [`/${name}`, secret]));
    expectNoPieceOf(canary.slice("canary-".length), result.stdout);
    expectNoLeak(canary, result, root, isEnvFile);
    const found = attempts(result.stdout);
    for (const name of names) expect(attemptOf(found, name), name).toEqual({ status: "ok", value: expect.stringContaining("[redacted]") });
  });

  it("the operator's LLM key in an answer escaped twice is masked, in each spelling", async () => {
    const random = randomBytes(24).toString("base64").replace(/[+/=]/g, "x");
    const apiKey = `sk-test/${random}+k`;
    const names = Object.keys(twice);
    const server = await resources.server((request, response) => {
      response.setHeader("content-type", "text/html; charset=utf-8");
      response.end(`<p>${twice[request.url.slice(1)]!(apiKey)}</p>`);
    });
    const dir = resources.dir();
    const at = `127.0.0.1:${server.port}`;
    const file = path.join(dir, `${randomUUID()}.ts`);
    writeFileSync(file, `requestNetwork(["${at}"], (net) => {\n  for (const name of ${JSON.stringify(names)}) println(name, JSON.stringify(net.httpGet("${server.origin}/" + name)));\n});\n`);
    const result = await runCli(unchecked(["run", "--network-permissions", at, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", file]), { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(server.received.map((request) => request.url)).toEqual(names.map((name) => `/${name}`));
    expectNoPieceOf(random, result.stdout);
    for (const name of names) expect(result.stdout).toMatch(new RegExp(`^${name} ".*\\[redacted\\].*"$`, "m"));
  });
});
