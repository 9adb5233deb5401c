// Classified patterns match a path in any case, and in either Unicode normalization. On a
// case-insensitive file system whose paths keep the case they were named in (Linux's casefold
// directories, FAT drives, SMB shares, WSL's /mnt/c) `.ENV` opens `.env`, `ID.PEM` opens `id.pem`
// and `.ſsh` (long s) opens `.ssh`: matched by their letters as written, a script read a secret as
// text by spelling its name in another case. A casefold directory also finds a name in either
// Unicode normalization (ü as one character or u and a diaeresis). The test kernel may have no
// casefold, so the files are made under those spellings: on a case-sensitive file system they
// are other files, classified all the same.

import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

describe.concurrent("classified names in another case", () => {
  it("are refused as text and left out of searches, with the default patterns", async () => {
    const { dir, cleanup } = realTempDir("tacit-classified-case-");
    try {
      const canary = makeCanary();
      const names = [".ENV", ".Env.Local", "ID.PEM", ".SSH/id", "deploy.\u212Aey", ".\u017Fsh/config", "home/.CONFIG/GH/hosts.yml", ".GIT-CREDENTIALS"];
      writeTree(dir, { ...Object.fromEntries(names.map((name) => [name, `TOKEN=${canary}\n`])), "plain.txt": "ordinary\n" });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const name of ${JSON.stringify(names)}) {
    attempt("read " + name, () => fs.access(name).read());
    attempt("grep " + name, () => fs.grep(name, "TOKEN"));
    attempt("classified " + name, () => fs.access(name).isClassified);
  }
  attempt("grepRecursive", () => fs.grepRecursive(".", "TOKEN|ordinary").map((m) => m.line));
  attempt("read plain", () => fs.access("plain.txt").read());
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        names.flatMap((name) => [`read ${name}`, `grep ${name}`]),
        /classified/,
      );
      for (const name of names) expect(attemptOf(found, `classified ${name}`), name).toEqual({ status: "ok", value: true });
      expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["ordinary"] });
      expect(attemptOf(found, "read plain")).toEqual({ status: "ok", value: "ordinary\n" });
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });

  it("an operator's pattern in upper case classifies its lower case too, and a pattern still classifies what it matches as written", async () => {
    const { dir, cleanup } = realTempDir("tacit-classified-case-own-");
    try {
      const canary = makeCanary();
      writeTree(dir, {
        "vault/Secrets/a.txt": `${canary}\n`,
        "vault/secrets/b.txt": `${canary}\n`,
        "notes.TOKEN": `${canary}\n`,
        // `.env.[!e]*` leaves .env.example ordinary; `.env.Example` on this file system is another file, which it classifies as written.
        ".env.Example": `${canary}\n`,
        ".env.example": "EXAMPLE=1\n",
      });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const name of ["vault/Secrets/a.txt", "vault/secrets/b.txt", "notes.TOKEN", ".env.Example"]) attempt("read " + name, () => fs.access(name).read());
  attempt("read .env.example", () => fs.access(".env.example").read());
  attempt("grepRecursive", () => fs.grepRecursive(".", ${lit(canary)}));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", "**/SECRETS,*.Token,.env.[!e]*"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["read vault/Secrets/a.txt", "read vault/secrets/b.txt", "read notes.TOKEN", "read .env.Example"], /classified/);
      expect(attemptOf(found, "read .env.example")).toEqual({ status: "ok", value: "EXAMPLE=1\n" });
      expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: [] });
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });

  it("a pattern past ASCII classifies a name in either Unicode normalization (a casefold directory finds a file by either)", async () => {
    const { dir, cleanup } = realTempDir("tacit-classified-normalization-");
    try {
      const canary = makeCanary();
      // The patterns typed composed (NFC), the files named decomposed (NFD, as macOS hands names over), and the other way round.
      const nfd = { file: "schlu\u0308ssel.txt", dir: "gehe\u0301im/a.txt" };
      const nfc = { file: "passw\u00f6rter.txt" };
      writeTree(dir, { [nfd.file]: `${canary}\n`, [nfd.dir]: `${canary}\n`, [nfc.file]: `${canary}\n`, "plain.txt": "ordinary\n" });
      const names = [nfd.file, nfd.dir, nfc.file];
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const name of ${JSON.stringify(names)}) attempt("read " + name, () => fs.access(name).read());
  attempt("grepRecursive", () => fs.grepRecursive(".", "${canary}|ordinary").map((m) => m.line));
});
`;
      const patterns = ["schl\u00fcssel.txt", "**/geh\u00e9im", "passwo\u0308rter.txt"].join(",");
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", patterns]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        names.map((name) => `read ${name}`),
        /classified/,
      );
      expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["ordinary"] });
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });
});
