// The programs on the user's PATH (runner/fs/path-programs.ts): a directory on the PATH tacit was
// started with that lies inside the allowed root (~/bin, a project's bin/) holds programs the
// user runs by name. Through the real CLI, a script with requestFileSystem(".") alone may read an
// existing executable there but not rewrite, append to or delete it; new files (never
// executable), other files there and executables elsewhere stay writable. Then the user types
// the program's name: no canary file.

import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, writeTree } from "./fixtures.js";

describe("the programs in the directories on the user's PATH", () => {
  it("an existing executable there may be read but not changed or deleted; new and other files may", async () => {
    const { dir, cleanup } = realTempDir("tacit-path-programs-");
    try {
      const marker = path.join(dir, "PWNED");
      const program = "#!/bin/sh\necho deploying\n";
      writeTree(dir, { "bin/deploy": program, "bin/notes.txt": "x\n", "tools/lint": program });
      for (const file of ["bin/deploy", "tools/lint"]) chmodSync(path.join(dir, file), 0o755);
      const payload = lit(`#!/bin/sh\ntouch ${marker}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("rewritten", () => fs.access("bin/deploy").write(${payload}));
  attempt("appended", () => fs.access("bin/deploy").append(${lit(`touch ${marker}\n`)}));
  attempt("deleted", () => fs.access("bin/deploy").delete());
  attempt("read", () => fs.access("bin/deploy").read());
  attempt("a new file", () => fs.access("bin/ls").write(${payload}));
  attempt("not executable", () => fs.access("bin/notes.txt").append("y\\n"));
  attempt("not on PATH", () => fs.access("tools/lint").write("#!/bin/sh\\nexit 0\\n"));
});
`;
      const PATH = `${path.join(dir, "bin")}${path.delimiter}${process.env.PATH ?? ""}`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: { PATH } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["rewritten", "appended", "deleted"], /an executable program in .*\/bin, a directory on the user's PATH;.*whenever they type its name.*Ask the user to change it/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: program });
      for (const label of ["a new file", "not executable", "not on PATH"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(readFileSync(path.join(dir, "bin/deploy"), "utf8")).toBe(program);
      // What tacit creates has no execute bit: the shell skips the script's bin/ls and runs the system's.
      expect(statSync(path.join(dir, "bin/ls")).mode & 0o111).toBe(0);
      // The user types the names.
      execFileSync("bash", ["-c", "deploy; ls >/dev/null"], { cwd: dir, env: { ...process.env, PATH }, stdio: "ignore" });
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
