// The programs of a trusted .shadowenv.d (runner/fs/shadowenv.ts): shadowenv's trust file signs
// the directory's path, not its programs, so a changed or new program there runs at the user's
// next cd without a new question. Through the real CLI, a script with requestFileSystem(".")
// alone may not change, create or delete a file in a .shadowenv.d that holds a trust file; reads,
// and an untrusted .shadowenv.d (shadowenv refuses to run it), go through. shadowenv is not
// installable here (no npm or Debian package), so the user's next cd is not run: the refusals
// and the files left as they were are what is asserted.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("a trusted .shadowenv.d", () => {
  it("its programs may be read but not changed, created or deleted; an untrusted one stays writable", async () => {
    const { dir, cleanup } = realTempDir("tacit-shadowenv-");
    try {
      const program = '(env/set "GREETING" "hi")\n';
      writeTree(dir, {
        "p/.shadowenv.d/500_env.lisp": program,
        "p/.shadowenv.d/trust-0123456789abcdef": "signature\n",
        "p/notes.txt": "x\n",
        "q/.shadowenv.d/500_env.lisp": program,
      });
      const payload = lit(`(env/set "PROMPT_COMMAND" "touch ${path.join(dir, "PWNED")}")\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("change", () => fs.access("p/.shadowenv.d/500_env.lisp").write(${payload}));
  attempt("create", () => fs.access("p/.shadowenv.d/900_more.lisp").write(${payload}));
  attempt("delete", () => fs.access("p/.shadowenv.d/500_env.lisp").delete());
  attempt("read", () => fs.access("p/.shadowenv.d/500_env.lisp").read());
  attempt("ordinary", () => fs.access("p/notes.txt").write("y\\n"));
  attempt("untrusted", () => fs.access("q/.shadowenv.d/500_env.lisp").write(${payload}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["change", "create", "delete"], /a file in .*\/p\/\.shadowenv\.d, a shadowenv directory the user trusts.*by its path.*Ask the user/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: program });
      for (const label of ["ordinary", "untrusted"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(readFileSync(path.join(dir, "p/.shadowenv.d/500_env.lisp"), "utf8")).toBe(program);
      expect(existsSync(path.join(dir, "p/.shadowenv.d/900_more.lisp"))).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
