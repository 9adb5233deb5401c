// A secret header with characters past ASCII, echoed with those characters written in a way no
// form of redaction's knows, through the real CLI: an HTML character reference in decimal
// (Python's xmlcharrefreplace) or by name (PHP's htmlentities), Python's namereplace, or "?" for
// what ASCII cannot hold (Java's and Python's ASCII encoders). The rest of the word came back
// whole: "pässwörd-<canary>" as "p&#228;ssw&#246;rd-<canary>", the canary in plaintext.

import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { echoedNonAsciiSecret, perTestResources } from "./fixtures.js";

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
    const shapes = Object.keys(SHAPES);
    const { seen, random, root, canary, result } = await echoedNonAsciiSecret(resources, shapes, (shape, value) => value.replace(/[^\x00-\x7f]/g, SHAPES[shape]!));
    for (const shape of shapes) {
      const got = seen(shape);
      expect(got.status, JSON.stringify(got)).toBe("ok");
      expect(String(got.value), shape).toContain("[redacted]");
      for (let at = 0; at + 8 <= random.length; at++) expect(String(got.value), `${shape}: a piece of the canary`).not.toContain(random.slice(at, at + 8));
    }
    expectNoLeak(canary, result, root, (file) => file.endsWith(".env"));
  });
});
