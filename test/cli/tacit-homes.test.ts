// tacit's home where runs without TACIT_HOME keep it: a run with TACIT_HOME set elsewhere (a
// container, a test, a shell that exports it) refused its scripts only that home, so a script
// whose allowed root held the user's home directory read ~/.config/tacit/audit-key.json, the
// private key that signs the audit logs of every run without TACIT_HOME, and could plant
// approvals there. Every place a run of this user may keep the home is refused now
// (runner/tacit-home.ts, tacitHomes), and so are the files remembered there
// (runner/remembered-files.ts). Through the real CLI and a real Deno.

import { existsSync, mkdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, makeCanary, realTempDir } from "../files/fixtures.js";

describe("tacit's home of runs started without TACIT_HOME", () => {
  it("is refused to a run whose TACIT_HOME lies elsewhere: the signing key is not read, no approval is planted", async () => {
    const { dir, cleanup } = realTempDir("tacit-homes-");
    try {
      const user = path.join(dir, "user");
      mkdirSync(user);
      // The user's own runs keep their home in ~/.config/tacit: the signing key is made there.
      const made = await runCli(["audit", "key"], { cwd: user, env: { HOME: user, TACIT_HOME: "", XDG_CONFIG_HOME: "" } });
      expect(made.code, made.stderr).toBe(0);
      const keyFile = path.join(user, ".config", "tacit", "audit-key.json");
      const privateKey = (JSON.parse(readFileSync(keyFile, "utf8")) as { privateKey: string }).privateKey;

      // A run started in the home directory (the default root) with TACIT_HOME set elsewhere.
      const approvals = JSON.stringify({ version: 1, approvals: [{ pattern: "exec git push *", directory: user, grantedAt: "2026-12-01T00:00:00.000Z", expiresAt: "2030-01-01T00:00:00.000Z", via: "terminal" }] });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read key", () => fs.access(".config/tacit/audit-key.json").read());
  attempt("classified key", () => String(fs.readClassified(".config/tacit/audit-key.json")));
  attempt("plant approvals", () => fs.access(".config/tacit/approvals.json").write(${lit(approvals)}));
  attempt("search", () => fs.grepRecursive(".config", ${lit(privateKey.slice(0, 16))}));
});
`;
      const r = await runScript(script, [], { cwd: user, env: { HOME: user, TACIT_HOME: path.join(dir, "elsewhere"), XDG_CONFIG_HOME: "" } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(privateKey);
      const found = attempts(r.stdout);
      for (const label of ["read key", "classified key", "plant approvals"]) {
        expect(attemptOf(found, label).status, label).toBe("SecurityError");
        expect(String(attemptOf(found, label).value), label).toContain("tacit's home");
      }
      expect(attemptOf(found, "search")).toEqual({ status: "ok", value: [] });
      expect(existsSync(path.join(user, ".config", "tacit", "approvals.json"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  // Run in that home (nothing is written there); a user the database gives no home directory has none to protect.
  it.skipIf(!existsSync(os.userInfo().homedir))("is refused where the password database puts the user's home, when HOME names another", async () => {
    // HOME and TACIT_HOME both elsewhere (a test, a sandboxed shell): the home a run of this user
    // started normally keeps, in the passwd home's ~/.config/tacit, was an ordinary path, and a
    // script whose root held that directory read its signing key. Only read here: nothing is written.
    const { dir, cleanup } = realTempDir("tacit-homes-passwd-");
    try {
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read key", () => fs.access(".config/tacit/audit-key.json").read());
  attempt("list", () => fs.access(".config/tacit").children().map((e) => e.name));
});
`;
      const r = await runScript(script, [], { cwd: os.userInfo().homedir, env: { HOME: dir, TACIT_HOME: path.join(dir, "elsewhere"), XDG_CONFIG_HOME: "" } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      for (const label of ["read key", "list"]) {
        expect(attemptOf(found, label).status, label).toBe("SecurityError");
        expect(String(attemptOf(found, label).value), label).toContain("tacit's home");
      }
    } finally {
      cleanup();
    }
  });

  it("the files runs without TACIT_HOME remembered there stay refused to a run with TACIT_HOME elsewhere", async () => {
    const { dir, cleanup } = realTempDir("tacit-homes-remembered-");
    try {
      const user = path.join(dir, "user");
      const project = path.join(user, "project");
      mkdirSync(project, { recursive: true });
      const canary = makeCanary();
      const own = { HOME: user, TACIT_HOME: "", XDG_CONFIG_HOME: "", TACIT_TYPECHECK_CACHE: "off" };
      const first = await runScript(`println(classify(${lit(canary)}));`, ["--secure-output", "secure.log"], { cwd: project, env: own });
      expect(first.code, first.stderr).toBe(0);
      expect(readFileSync(path.join(project, "secure.log"), "utf8")).toContain(canary);

      const r = await runScript(`${ATTEMPT_PRELUDE}\nrequestFileSystem(".", (fs) => attempt("read", () => fs.access("secure.log").read()));`, [], {
        cwd: project,
        env: { ...own, TACIT_HOME: path.join(dir, "elsewhere") },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(canary);
      const read = attemptOf(attempts(r.stdout), "read");
      expect(read.status).toBe("SecurityError");
      expect(String(read.value)).toContain("the secure output file (--secure-output, which holds plaintext) of an earlier tacit run");
    } finally {
      cleanup();
    }
  });
});
