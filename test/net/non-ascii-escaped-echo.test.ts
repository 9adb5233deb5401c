// A secret header with characters past ASCII, echoed with those characters written in a way no
// form of redaction's knows, through the real CLI: an HTML character reference in decimal
// (Python's xmlcharrefreplace) or by name (PHP's htmlentities), Python's namereplace, or "?" for
// what ASCII cannot hold (Java's and Python's ASCII encoders). The rest of the word came back
// whole: "pässwörd-<canary>" as "p&#228;ssw&#246;rd-<canary>", the canary in plaintext.

import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { attemptOf, attempts, lit, perTestResources, permit, secretNetScript, tacit, writeTree } from "./fixtures.js";

const resources = perTestResources("tacit-net-non-ascii-escaped-", { concurrent: true });

const NAMES: Record<string, string> = { "ä": "auml", "ö": "ouml" };
const UNICODE_NAMES: Record<string, string> = { "ä": "LATIN SMALL LETTER A WITH DIAERESIS", "ö": "LATIN SMALL LETTER O WITH DIAERESIS" };

/** How a server writes each character past ASCII of the header's value. */
const SHAPES: Record<string, (character: string) => string> = {
  "html-decimal": (c) => `&#${c.charCodeAt(0)};`,
  "html-named": (c) => `&${NAMES[c] ?? "?"};`,
  "python-namereplace": (c) => `\\N{${UNICODE_NAMES[c] ?? "?"}}`,
  "ascii-replace": () => "?",
};

describe.concurrent("a secret header whose characters past ASCII an echo writes in a way of its own", () => {
  it("is masked past them: the canary after the last of them does not come back", async () => {
    const server = await resources.server((request, response) => {
      const value = String(request.headers["x-key"]);
      response.setHeader("content-type", "text/plain");
      response.end(value.replace(/[^\x00-\x7f]/g, SHAPES[request.url.slice(1)]!));
    });
    const { root, canary } = resources.projectWithSecret();
    const secret = `pässwörd-${canary}`;
    writeTree(root, { ".env": `${secret}\n` });
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${server.port}`], `
  for (const shape of ${JSON.stringify(Object.keys(SHAPES))}) {
    attempt(shape, () => net.httpGet(${lit(server.origin)} + "/" + shape, { secretHeaders: { "x-key": token } }));
  }
`),
      permit(`127.0.0.1:${server.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(server.received.filter((r) => r.headers["x-key"] === secret)).toHaveLength(Object.keys(SHAPES).length);
    const found = attempts(result.stdout);
    const random = canary.slice("canary-".length);
    for (const shape of Object.keys(SHAPES)) {
      const seen = attemptOf(found, shape);
      expect(seen.status, JSON.stringify(seen)).toBe("ok");
      expect(String(seen.value), shape).toContain("[redacted]");
      for (let at = 0; at + 8 <= random.length; at++) expect(String(seen.value), `${shape}: a piece of the canary`).not.toContain(random.slice(at, at + 8));
    }
    expectNoLeak(canary, result, root, (file) => file.endsWith(".env"));
  });
});
