// A repository's configuration and hooks name commands git runs with the user's authority: a
// script with requestFileSystem(".") alone, in a git checkout (the default allowed root is the
// working directory), appended `core.fsmonitor = "<command>"` to .git/config, and the user's next
// `git status` ran it, outside the sandbox. Through the real CLI: the changes are refused, the
// files stay readable, and git status afterwards runs nothing of the script's.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir } from "./fixtures.js";

describe("a git repository's configuration and hooks", () => {
  it("are read-only to scripts: no fsmonitor, hook or gitdir planted, git status runs nothing of theirs", async () => {
    const { dir, cleanup } = realTempDir("tacit-git-control-");
    try {
      execFileSync("git", ["init", "-q"], { cwd: dir });
      mkdirSync(path.join(dir, "sub"));
      const marker = path.join(dir, "PWNED");
      const configBefore = readFileSync(path.join(dir, ".git", "config"), "utf8");
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("fsmonitor", () => fs.access(".git/config").append(${lit(`[core]\n\tfsmonitor = "touch ${marker}; false"\n`)}));
  attempt("hook", () => fs.access(".git/hooks/post-checkout").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
  attempt("gitdir file", () => fs.access("sub/.git").write("gitdir: ../elsewhere\\n"));
  // The same files to git on a case-insensitive file system (macOS, Windows); refused here too.
  attempt("config in another case", () => fs.access(".git/CONFIG").write("[core]\\n"));
  attempt("hook in another case", () => fs.access(".Git/Hooks/pre-commit").write("#!/bin/sh\\n"));
  attempt("gitdir file in another case", () => fs.access("sub/.GIT").write("gitdir: ../elsewhere\\n"));
  attempt("read config", () => fs.access(".git/config").read().includes("[core]"));
  attempt("ordinary", () => fs.access("notes.txt").write("x"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["fsmonitor", "hook", "gitdir file", "config in another case", "hook in another case", "gitdir file in another case"], /a git repository's configuration or hooks/);
      expect(attemptOf(found, "read config")).toEqual({ status: "ok", value: true });
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      expect(readFileSync(path.join(dir, ".git", "config"), "utf8")).toBe(configBefore);
      // The user's next git command.
      execFileSync("git", ["status", "--porcelain"], { cwd: dir, stdio: "ignore" });
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 30_000);
});
