// An absolute classified pattern whose prefix is a link (`/…/Vault/*`, Vault -> store): the link
// may not be deleted, or the files behind it are ordinary from the next evaluation on
// (classified-link-prefix.test.ts). The refusal compared the name deleted with the pattern's as
// written: on a case-insensitive file system (a casefold directory, a FAT drive, macOS), `vault`
// names the link `Vault`, and a normalizing one (macOS, casefold) finds `schlüssel` by either Unicode
// normalization; a script deleted the link by such a spelling. This kernel may have no casefold, so
// the other spellings are made as links of their own, to the same store: on a case-insensitive file
// system they would be the pattern's link itself, and they are kept all the same (as classified
// names match in any case), the files behind them still classified.

import { lstatSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

const NFC = "Schl\u00fcssel";
const NFD = "Schlu\u0308ssel";

describe("an absolute classified pattern through a link, the link named in another spelling", () => {
  it("is not deleted by its name in another case or normalization, and what it classifies stays classified", async () => {
    const { dir, cleanup } = realTempDir("tacit-link-prefix-spelling-");
    try {
      const canary = makeCanary();
      const others = ["vault", "VAULT", NFD.toLowerCase()];
      writeTree(dir, {
        "store/key.txt": `${canary}\n`,
        Vault: { symlink: "store" },
        [NFC]: { symlink: "store" },
        ...Object.fromEntries(others.map((name) => [name, { symlink: "store" }])),
      });
      const classified = ["--quiet", "--classified-paths", `${path.join(dir, "Vault")}/*,${path.join(dir, NFC)}/*`];
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const name of ${JSON.stringify(others)}) attempt("delete " + name, () => fs.access(name).delete());
  attempt("read", () => fs.access("store/key.txt").read());
  attempt("delete plain", () => fs.access("plain-link").delete());
});
`;
      writeTree(dir, { "plain-link": { symlink: "store" } });
      const r = await tacit(dir, script, classified);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      // Each deleted before: on a case-insensitive, normalizing file system, the pattern's own link.
      expectRefused(found, others.map((name) => `delete ${name}`), /delete refused: a classified pattern/);
      for (const name of others) expect(lstatSync(path.join(dir, name)).isSymbolicLink(), name).toBe(true);
      expectRefused(found, ["read"], /classified/);
      // A link no pattern leads through, in no spelling, is deleted as before.
      expect(attemptOf(found, "delete plain")).toEqual({ status: "ok", value: null });
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });
});
