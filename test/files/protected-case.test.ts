// tacit's own files are refused by any spelling of their names. On a case-insensitive file system
// whose paths keep the case they were named in (Linux's casefold directories, FAT drives, SMB
// shares, WSL's /mnt/c) `SECURE.LOG` opens the secure output `secure.log` and `Home/` tacit's home
// `home/`, and both the path as named and its real path read `SECURE.LOG`: compared by their
// letters as written, a script read the plaintext a run printed, or planted approvals. The test
// kernel may have no casefold, so nothing is there under those spellings: on a case-sensitive file
// system they are other files, refused all the same, and none of them is made.

import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attempts, expectRefused, makeCanary, realTempDir, writeTree } from "./fixtures.js";

describe("tacit's files inside the allowed root, named in another case", () => {
  it("are refused to reads, writes, mkdir and delete, and nothing is made under those names", async () => {
    const { dir, cleanup } = realTempDir("tacit-protected-case-");
    try {
      const canary = makeCanary();
      writeTree(dir, { ".env": `TOKEN=${canary}\n` });
      const home = path.join(dir, "home");
      mkdirSync(home, { mode: 0o700 });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  println(fs.readClassified(".env"));
  attempt("read SECURE.LOG", () => fs.access("SECURE.LOG").read());
  attempt("grep Secure.Log", () => fs.grep("Secure.Log", "TOKEN"));
  attempt("write SECURE.LOG", () => fs.access("SECURE.LOG").write("forged"));
  attempt("append Secure.log", () => fs.access("Secure.log").append("forged"));
  attempt("delete SECURE.LOG", () => fs.access("SECURE.LOG").delete());
  attempt("mkdir HOME", () => fs.access("HOME").mkdir());
  attempt("write Home/approvals.json", () => fs.access("Home/approvals.json").write("{}"));
  attempt("children HOME", () => fs.access("HOME").children().length);
});
`;
      const r = await runScript(script, ["--secure-output", "secure.log"], { cwd: dir, env: { TACIT_HOME: home } });
      expect(r.code, r.stderr).toBe(0);
      const labels = ["read SECURE.LOG", "grep Secure.Log", "write SECURE.LOG", "append Secure.log", "delete SECURE.LOG", "mkdir HOME", "write Home/approvals.json", "children HOME"];
      expectRefused(attempts(r.stdout), labels, /secure output file|tacit's home/);
      expect(r.stdout + r.stderr).not.toContain(canary);
      expect(readFileSync(path.join(dir, "secure.log"), "utf8")).toContain(canary);
      expect(readdirSync(dir).sort()).toEqual([".env", "home", "secure.log"]);
      expect(existsSync(path.join(dir, "HOME"))).toBe(false);
    } finally {
      cleanup();
    }
  });
});
