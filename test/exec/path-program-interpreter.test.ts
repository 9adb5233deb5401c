// The interpreter a program on the user's PATH names in its "#!" line (runner/fs/path-programs.ts):
// the kernel runs that file, with the program as its argument, whenever the user types the
// program's name. An executable directly in a PATH directory was kept from scripts, but not the
// interpreter it names: a script rewrote tools/interp (its mode kept), and the user's next
// `deploy`, whose first line is "#!<dir>/tools/interp", ran the script's code. Through the real
// CLI, a real Deno, and a real bash.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeExecutable, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("the interpreter a PATH program's '#!' line names", () => {
  it("may be read but not rewritten by a script; other executables stay writable", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-exec-path-interpreter-");
    ctx.onTestFinished(cleanup);
    const interpreter = '#!/bin/sh\nexec /bin/sh "$@"\n';
    writeTree(dir, {
      "bin/deploy": `#!${dir}/tools/interp\necho deploying\n`,
      "tools/interp": interpreter,
      "tools/other": "#!/bin/sh\necho other\n",
      "home/.keep": "",
    });
    for (const file of ["bin/deploy", "tools/interp", "tools/other"]) makeExecutable(path.join(dir, file));
    const marker = path.join(dir, "PWNED");
    const PATH = [path.join(dir, "bin"), process.env.PATH ?? ""].join(path.delimiter);
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("rewrite interp", () => fs.access("tools/interp").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
  attempt("read interp", () => fs.access("tools/interp").read().length > 0);
  attempt("rewrite other", () => fs.access("tools/other").write("#!/bin/sh\\necho changed\\n"));
});
`, [], { PATH, HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["rewrite interp"], /#!.*deploy.*a directory on the user's PATH.*Ask the user to change it/);
    expect(attemptOf(found, "read interp")).toEqual({ status: "ok", value: true });
    expect(attemptOf(found, "rewrite other").status).toBe("ok");
    expect(readFileSync(path.join(dir, "tools/interp"), "utf8")).toBe(interpreter);
    // The user types the name.
    execFileSync("bash", ["-c", "deploy"], { cwd: dir, env: { ...process.env, PATH }, stdio: "ignore" });
    expect(existsSync(marker)).toBe(false);
  });
});
