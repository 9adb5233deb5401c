// A sitecustomize module Python imports at every start from somewhere other than a file directly in
// a site-packages directory (runner/fs/python-startup.ts). site.py imports `sitecustomize` from
// anywhere on the path it has built, and it builds it from the site directory and the directories its
// .pth files list, which a script may write (an editable install's): shown through the real CLI and
// Python 3.11, a script with requestFileSystem(".") alone wrote a .pth listing src and then
// src/sitecustomize.py (or the package site-packages/sitecustomize/__init__.py), and the user's
// next `.venv/bin/python -c pass` ran its code.

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

const HAS_PYTHON = spawnSync("python3", ["-c", "import venv"], { stdio: "ignore" }).status === 0;

describe("a sitecustomize module outside the site directory's own files", () => {
  it.skipIf(!HAS_PYTHON)("may not be written, as a package there or in a directory a .pth file lists", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-python-sitecustomize-");
    ctx.onTestFinished(cleanup);
    const marker = path.join(dir, "PWNED");
    expect(spawnSync("python3", ["-m", "venv", "--without-pip", path.join(dir, ".venv")]).status).toBe(0);
    const lib = path.join(dir, ".venv", "lib");
    const site = path.relative(dir, path.join(lib, readdirSync(lib)[0]!, "site-packages"));
    writeTree(dir, { "src/.keep": "", "home/.keep": "" });
    const code = `import os; os.system(${JSON.stringify(`touch ${marker}`)})\n`;
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
const site = ${lit(site)};
requestFileSystem(".", (fs) => {
  attempt("listing src", () => fs.access(site + "/project.pth").write(${lit(`${path.join(dir, "src")}\n`)}));
  attempt("in src", () => fs.access("src/sitecustomize.py").write(${lit(code)}));
  attempt("usercustomize in src", () => fs.access("src/usercustomize.py").write(${lit(code)}));
  fs.access(site + "/sitecustomize").mkdir();
  attempt("a package", () => fs.access(site + "/sitecustomize/__init__.py").write(${lit(code)}));
  attempt("another module in src", () => fs.access("src/helper.py").write("VALUE = 1\\n"));
});
`, ["--quiet"], { HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["in src", "usercustomize in src", "a package"], /refused: .*sitecustomize or usercustomize module.*Python imports it at every start/);
    for (const label of ["listing src", "another module in src"]) expect(attemptOf(found, label).status, label).toBe("ok");
    // The user starts the venv's interpreter (pip, a tool installed there, an editor learning about it).
    const started = spawnSync(path.join(dir, ".venv", "bin", "python"), ["-c", "pass"], { cwd: dir, encoding: "utf8" });
    expect(started.status, started.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});
