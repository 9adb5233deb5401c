// The end of an answer cut at the size limit, through the real CLI: a script that pads an echo so
// that the limit falls inside the secret header it carries must see none of the secret there.
// Redaction masks a partial secret at a cut end only from 4 characters on (a mask on fewer told a
// script its guess of a secret's first character), and found none before an escape the cut went
// through; both ends are left out now, whatever they hold.

import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { attemptOf, attempts, configFile, isEnvFile, lit, permit, perTestResources, secretCutMarker, secretNetScript, tacit, writeTree } from "./fixtures.js";
import { expectNoLeak } from "../files/fixtures.js";

const resources = perTestResources("tacit-net-cut-end-");

const LIMIT = 4096;

/** No 8 characters of the canary's random part in a row, anywhere the script could print. */
function expectNoPieceOf(canary: string, seen: { stdout: string; stderr: string }): void {
  const random = canary.slice("canary-".length);
  for (let at = 0; at + 8 <= random.length; at++) {
    const piece = random.slice(at, at + 8);
    expect(seen.stdout.includes(piece), `stdout holds ${piece} of the canary`).toBe(false);
    expect(seen.stderr.includes(piece), `stderr holds ${piece} of the canary`).toBe(false);
  }
}

describe("an answer cut at the size limit inside an echoed secret header", () => {
  it("shows none of the secret's first one to three characters, so no suffix of it sent as the header tells its characters", async () => {
    // An ordinary JSON echo of the request (method, url, headers, body): the script pads the URL so
    // that the cut falls three characters into the secret, and sends each third suffix of it
    // (a map's slice), each a secret long enough to be sent. Before, each answer ended with the
    // suffix's first three characters, unmasked, and the script printed the whole secret.
    const server = await resources.server();
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${server.port}`], `
  const url = ${lit(`${server.origin}/?p=`)};
  // Where the header's value stands in the echo: its mask, with no padding.
  const at = net.httpGet(url, { secretHeaders: { "x-key": token } }).indexOf("[redacted]");
  // Made first: a request waits for a map to settle, and these settle together.
  const pieces = [];
  for (let from = 0; from + 4 <= ${canary.length}; from += 3) pieces.push(token.map((t) => t.slice(from)));
  let got = "";
  for (const [i, piece] of pieces.entries()) {
    const cut = net.httpGet(url + "_".repeat(${LIMIT} - 3 - at), { secretHeaders: { "x-key": piece } });
    got += cut.split("\\n[tacit:")[0]!.slice(-3);
    if (i === 0) attempt("marker", () => cut.slice(cut.indexOf("\\n[tacit:")));
  }
  attempt("got", () => got);
`),
      [...permit(`127.0.0.1:${server.port}`), "--config", configFile(root, { networkResponseLimitBytes: LIMIT })],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    // The attack was made: every suffix went out as the header, the first with no padding.
    const suffixes = [canary, ...Array.from({ length: Math.floor((canary.length - 4) / 3) + 1 }, (_, i) => canary.slice(3 * i))];
    expect(server.received.map((request) => request.headers["x-key"])).toEqual(suffixes);
    expect(String(attemptOf(found, "got").value)).not.toContain(canary.slice(3, 9));
    expectNoPieceOf(canary, result);
    expectNoLeak(canary, result, root, isEnvFile);
    expect(attemptOf(found, "marker").value).toBe(secretCutMarker(LIMIT));
  });

  it("shows none of the secret before an escape the cut went through, in each escape syntax redaction decodes", async () => {
    // A server that writes the header escaped, as Twig's html_attr, Python's quote and Laminas'
    // escapeJs do, after `pad` characters of its own: the script chooses the padding so that the cut
    // falls inside the escape of the "/" after the canary and more. Before, "canary-…&#x2" ended the answer
    // unmasked (no decoding undoes half an escape, and the partial secret before it ended nowhere).
    const escapes: Record<string, (text: string) => string> = {
      html: (text) => text.replace(/[^a-zA-Z0-9,.\-_]/g, (c) => `&#x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")};`),
      url: (text) => text.replace(/[^a-zA-Z0-9\-_.~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`),
      js: (text) => text.replace(/[^a-zA-Z0-9,._]/g, (c) => `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`),
      json: (text) => text.replace(/[^a-zA-Z0-9]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`),
      // html_attr's escapes HTML-escaped again, as a page that escapes what it was handed escaped writes them.
      "attr-html": (text) => text.replace(/[^a-zA-Z0-9,.\-_]/g, (c) => `&amp;#x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")};`),
    };
    const server = await resources.server((request, response) => {
      const url = new URL(request.url, "http://x");
      const escape = escapes[url.pathname.slice(1)]!;
      response.setHeader("content-type", "text/plain");
      response.end("_".repeat(Number(url.searchParams.get("pad"))) + escape(String(request.headers["x-key"])) + "_".repeat(100));
    });
    const { root, canary } = resources.projectWithSecret();
    // Longer before its "/" than an answer's end left out when not masked (see the test above), 103 characters.
    const before = `${canary}_${randomUUID()}_${randomUUID()}`;
    const secret = `${before}/+end`;
    writeTree(root, { ".env": `${secret}\n` });
    // Each cut: the secret escaped up to its "/", and each length of that escape short of its whole.
    const cuts = Object.entries(escapes).flatMap(([shape, escape]) =>
      Array.from({ length: escape("/").length - 1 }, (_, i) => ({ label: `${shape}-${i + 1}`, shape, keep: escape(before).length + i + 1 })),
    );
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${server.port}`], `
  for (const { label, shape, keep } of ${JSON.stringify(cuts)}) {
    attempt(label, () => net.httpGet(${lit(server.origin)} + "/" + shape + "?pad=" + (${LIMIT} - keep), { secretHeaders: { "x-key": token } }).replace(/^_+/, ""));
  }
`),
      [...permit(`127.0.0.1:${server.port}`), "--config", configFile(root, { networkResponseLimitBytes: LIMIT })],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(server.received.map((request) => request.headers["x-key"])).toEqual(cuts.map(() => secret));
    const found = attempts(result.stdout);
    for (const { label } of cuts) {
      const { status, value } = attemptOf(found, label);
      expect(status, label).toBe("ok");
      expect(value, label).toBe(`[redacted]${secretCutMarker(LIMIT)}`);
    }
    expectNoPieceOf(canary, result);
    expectNoLeak(canary, result, root, isEnvFile);
  });
});
