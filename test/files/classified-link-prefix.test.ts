// An absolute classified pattern whose prefix is a link (`/…/vault/*`, vault -> store): its
// prefix is resolved when the evaluation begins, so the files in store/ are classified. The link
// is an ordinary entry a script may otherwise delete; deleted, grepRecursive (whose worker
// resolved the patterns again) read store/'s files in the same run, and the next run read them
// as plain text.

import { existsSync, lstatSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("an absolute classified pattern through a link", () => {
  it("the link cannot be deleted, and no search, read or later run sees the files it classified", async () => {
    const { dir, cleanup } = realTempDir("tacit-link-prefix-");
    try {
      const canary = makeCanary();
      writeTree(dir, { "store/key.txt": `${canary}\n`, vault: { symlink: "store" }, alias: { symlink: "." } });
      const classified = ["--quiet", "--classified-paths", `${path.join(dir, "vault")}/*`];
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("store/key.txt").read());
  attempt("delete the link", () => fs.access("vault").delete());
  attempt("delete the link by another name", () => fs.access("alias/vault").delete());
  attempt("grepRecursive", () => fs.grepRecursive("store", "canary"));
  attempt("grepRecursive above", () => fs.grepRecursive(".", "canary"));
});
`;
      const r = await tacit(dir, script, classified);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["read"], /classified/);
      expectRefused(found, ["delete the link", "delete the link by another name"], /delete refused: a classified pattern/);
      expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: [] });
      expect(attemptOf(found, "grepRecursive above")).toEqual({ status: "ok", value: [] });
      expect(lstatSync(path.join(dir, "vault")).isSymbolicLink()).toBe(true);
      // A run after: the link is still there, and the files behind it still classified.
      const next = await tacit(dir, `${ATTEMPT_PRELUDE}\nrequestFileSystem(".", (fs) => { attempt("read", () => fs.access("store/key.txt").read()); });\n`, classified);
      expectRefused(attempts(next.stdout), ["read"], /classified/);
      expect(r.stdout + r.stderr + next.stdout + next.stderr).not.toContain(canary);
      expect(existsSync(path.join(dir, "store/key.txt"))).toBe(true);
    } finally {
      cleanup();
    }
  });

  it("the link removed by a command: no search of the same evaluation reads the files it classified", async () => {
    const { dir, cleanup } = realTempDir("tacit-link-prefix-rm-");
    try {
      const canary = makeCanary();
      writeTree(dir, { "store/key.txt": `${canary}\n`, vault: { symlink: "store" } });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("rm", () => requestExecPermission(["rm"], (p) => p.exec("rm", ["vault"]).exitCode));
  attempt("read", () => fs.access("store/key.txt").read());
  attempt("grepRecursive", () => fs.grepRecursive("store", "canary"));
  attempt("grepRecursive above", () => fs.grepRecursive(".", "canary"));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--command-permissions", "rm", "--classified-paths", `${path.join(dir, "vault")}/*`]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expect(attemptOf(found, "rm")).toEqual({ status: "ok", value: 0 });
      expect(existsSync(path.join(dir, "vault"))).toBe(false);
      expectRefused(found, ["read"], /classified/);
      expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: [] });
      expect(attemptOf(found, "grepRecursive above")).toEqual({ status: "ok", value: [] });
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });

  it("a pattern written through a link to the project: the link on the way cannot be deleted by its real name either", async () => {
    const { dir, cleanup } = realTempDir("tacit-link-prefix-via-");
    try {
      const canary = makeCanary();
      writeTree(dir, { "real/store/key.txt": `${canary}\n`, "real/vault": { symlink: "store" }, via: { symlink: "real" } });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem("real", (fs) => {
  attempt("delete the link", () => fs.access("vault").delete());
  attempt("grepRecursive", () => fs.grepRecursive(".", "canary"));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", `${path.join(dir, "via", "vault")}/*`]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["delete the link"], /delete refused: a classified pattern/);
      expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: [] });
      expect(lstatSync(path.join(dir, "real/vault")).isSymbolicLink()).toBe(true);
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });
});
