// PATH entries that are not absolute (runner/fs/path-programs.ts): `./bin` (Rails' and rbenv's
// binstubs advice, `export PATH="./bin:$PATH"`), `node_modules/.bin`, an empty entry (the current
// directory, as a stray ":" leaves it) and `~/tools` (bash expands a "~" in PATH at each lookup).
// The user's shell runs the executables they name, by name, with the user's full authority and
// outside the sandbox, when the user stands where tacit was started. tacit kept only absolute
// entries' programs from being changed: a script rewrote bin/deploy (its mode kept) and the user's
// next `deploy` ran the script's code. Through the real CLI, a real Deno, and a real bash.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeExecutable, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("programs in PATH entries that are not absolute", () => {
  it("cannot be rewritten, appended to or deleted by a script; other files there stay writable", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-exec-path-relative-");
    ctx.onTestFinished(cleanup);
    const program = (name: string): string => `#!/bin/sh\necho the real ${name}\n`;
    writeTree(dir, {
      "bin/deploy": program("deploy"),
      "node_modules/.bin/lint": program("lint"),
      "home/tools/publish": program("publish"),
      "release": program("release"),
      "bin/notes.txt": "notes\n",
    });
    for (const file of ["bin/deploy", "node_modules/.bin/lint", "home/tools/publish", "release"]) makeExecutable(path.join(dir, file));
    const home = path.join(dir, "home");
    const marker = path.join(dir, "PWNED");
    const evil = `#!/bin/sh\ntouch ${marker}\n`;
    const PATH = ["./bin", "node_modules/.bin", "~/tools", "", process.env.PATH ?? ""].join(path.delimiter);
    const files = { deploy: "bin/deploy", lint: "node_modules/.bin/lint", publish: "home/tools/publish", release: "release" };
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const [name, file] of Object.entries(${JSON.stringify(files)})) {
    attempt("rewrite " + name, () => fs.access(file).write(${lit(evil)}));
    attempt("append " + name, () => fs.access(file).append(${lit(`touch ${marker}\n`)}));
    attempt("delete " + name, () => fs.access(file).delete());
    attempt("read " + name, () => fs.access(file).read().length > 0);
  }
  attempt("notes", () => fs.access("bin/notes.txt").write("changed\\n"));
});
`, [], { PATH, HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const name of Object.keys(files)) {
      expectRefused(found, [`rewrite ${name}`, `append ${name}`, `delete ${name}`], /a directory on the user's PATH.*Ask the user to change it/);
      expect(attemptOf(found, `read ${name}`)).toEqual({ status: "ok", value: true });
    }
    expect(attemptOf(found, "notes").status).toBe("ok");
    for (const [name, file] of Object.entries(files)) expect(readFileSync(path.join(dir, file), "utf8")).toBe(program(name));
    // The user, where tacit was started, types the names.
    execFileSync("bash", ["-c", "deploy; lint; publish; release"], { cwd: dir, env: { ...process.env, PATH, HOME: home }, stdio: "ignore" });
    expect(existsSync(marker)).toBe(false);
  });

  it("hold programs in each directory the user may stand in, not only where tacit was started", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-exec-path-relative-sub-");
    ctx.onTestFinished(cleanup);
    const program = "#!/bin/sh\necho the real tool\n";
    writeTree(dir, { "sub/bin/tool": program, "sub/scripts/build.sh": "#!/bin/sh\necho build\n", "home/.keep": "" });
    for (const file of ["sub/bin/tool", "sub/scripts/build.sh"]) makeExecutable(path.join(dir, file));
    const marker = path.join(dir, "PWNED");
    const PATH = ["./bin", process.env.PATH ?? ""].join(path.delimiter);
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("rewrite tool", () => fs.access("sub/bin/tool").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
  attempt("rewrite build", () => fs.access("sub/scripts/build.sh").write("#!/bin/sh\\necho changed\\n"));
});
`, [], { PATH, HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["rewrite tool"], /a directory on the user's PATH \(the entry "\.\/bin".*Ask the user to change it/);
    // Not on PATH from anywhere: a script may change it, as before.
    expect(attemptOf(found, "rewrite build").status).toBe("ok");
    expect(readFileSync(path.join(dir, "sub", "bin", "tool"), "utf8")).toBe(program);
    // The user, in sub/, types its name.
    execFileSync("bash", ["-c", "tool"], { cwd: path.join(dir, "sub"), env: { ...process.env, PATH }, stdio: "ignore" });
    expect(existsSync(marker)).toBe(false);
  });
});

