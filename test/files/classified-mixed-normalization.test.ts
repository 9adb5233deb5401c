// Classified patterns past ASCII match in either Unicode normalization (classified-case.test.ts):
// `gültig-clé.txt` with each accented letter as one character (NFC) or as a letter and an accent
// (NFD). A name can mix them, one letter composed and the other not: it is neither spelling of the
// pattern, and a script read it as text, while a casefold directory (ext4, f2fs, tmpfs) or macOS finds
// the classified file by it. Such a name is now also tried composed (classified-paths.ts,
// inAnyNormalization). This kernel may have no casefold, so the mixed names are files of their own
// here, classified all the same.

import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

/** "ü" decomposed, "é" composed; and the other way round. */
const MIXED_NAMES = ["gu\u0308ltig-cl\u00e9.txt", "g\u00fcltig-cle\u0301.txt"];
const MIXED_DIRECTORY = "schlu\u0308ssel-caf\u00e9";

describe.concurrent("a classified name that mixes Unicode normalizations", () => {
  it("is refused as text, left out of searches, and said to be classified, by a name pattern and a path pattern", async () => {
    const { dir, cleanup } = realTempDir("tacit-classified-mixed-");
    try {
      const canary = makeCanary();
      const names = [...MIXED_NAMES, `${MIXED_DIRECTORY}/token.txt`];
      writeTree(dir, { ...Object.fromEntries(names.map((name) => [name, `TOKEN=${canary}\n`])), "plain.txt": "ordinary\n" });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const name of ${JSON.stringify(names)}) {
    attempt("read " + name, () => fs.access(name).read());
    attempt("classified " + name, () => fs.access(name).isClassified);
  }
  attempt("grepRecursive", () => fs.grepRecursive(".", "TOKEN|ordinary").map((m) => m.line));
});
`;
      // Both patterns as typed on most keyboards: NFC.
      const patterns = ["g\u00fcltig-cl\u00e9.txt", "**/schl\u00fcssel-caf\u00e9"].join(",");
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", patterns]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, names.map((name) => `read ${name}`), /classified/);
      for (const name of names) expect(attemptOf(found, `classified ${name}`), name).toEqual({ status: "ok", value: true });
      expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["ordinary"] });
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });
});
