// What Python runs at every start (runner/fs/python-startup.ts): the `import` lines of the .pth
// files in a site-packages directory, and its sitecustomize and usercustomize modules. Through the
// real CLI, in a project with a virtual environment (the real `python3 -m venv`, where installed), a
// script with requestFileSystem(".") alone may not write such a line (new, appended, after a BOM,
// after a carriage return, in another case) nor those modules; a .pth that lists directories, and
// reads, go through. Then the user starts the venv's interpreter, as pip, a tool installed there or
// an editor opening the folder does: no canary file.

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

const HAS_PYTHON = spawnSync("python3", ["-c", "import venv"], { stdio: "ignore" }).status === 0;

describe("Python's start files in a virtual environment", () => {
  it.skipIf(!HAS_PYTHON)("may not come to hold code Python runs at every start; a .pth listing directories may be written", async () => {
    const { dir, cleanup } = realTempDir("tacit-python-startup-");
    try {
      const marker = path.join(dir, "PWNED");
      expect(spawnSync("python3", ["-m", "venv", "--without-pip", path.join(dir, ".venv")]).status).toBe(0);
      const lib = path.join(dir, ".venv", "lib");
      const site = path.relative(dir, path.join(lib, readdirSync(lib)[0]!, "site-packages"));
      const existing = `${path.join(dir, "vendor")}\n`;
      writeTree(dir, { [`${site}/vendor.pth`]: existing, "vendor/.keep": "", "src/.keep": "", "dist/dist-packages/.keep": "" });
      const code = `import os; os.system(${JSON.stringify(`touch ${marker}`)})\n`;
      const script = `${ATTEMPT_PRELUDE}
const site = ${lit(site)};
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access(site + "/vendor.pth").read());
  attempt("new .pth", () => fs.access(site + "/zz-setup.pth").write(${lit(code)}));
  attempt("appended", () => fs.access(site + "/vendor.pth").append(${lit(code)}));
  attempt("after a BOM", () => fs.access(site + "/bom.pth").write(${lit(`\uFEFF${code}`)}));
  attempt("after a carriage return", () => fs.access(site + "/cr.pth").write(${lit(`${path.join(dir, "src")}\r${code}`)}));
  attempt("a tab", () => fs.access(site + "/tab.pth").write(${lit(code.replace("import ", "import\t"))}));
  attempt("in another case", () => fs.access(site + "/Upper.PTH").write(${lit(code)}));
  attempt("sitecustomize", () => fs.access(site + "/sitecustomize.py").write(${lit(code)}));
  attempt("usercustomize", () => fs.access(site + "/usercustomize.py").write(${lit(code)}));
  attempt("dist-packages", () => fs.access("dist/dist-packages/x.pth").write(${lit(code)}));
  attempt("directories", () => fs.access(site + "/project.pth").write(${lit(`# the project's sources\n${path.join(dir, "src")}\n`)}));
  attempt("a module", () => fs.access(site + "/helper.py").write("VALUE = 1\\n"));
  attempt("elsewhere", () => fs.access("notes.pth").write(${lit(code)}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["new .pth", "appended", "after a BOM", "after a carriage return", "a tab", "in another case", "dist-packages"],
        /refused: it would leave a \.pth file in a site-packages directory holding a line that starts with import: Python executes such a line at every start .*List directories in it.*ask the user/,
      );
      expectRefused(found, ["sitecustomize", "usercustomize"], /refused: it would write a sitecustomize or usercustomize module in a site-packages directory: Python imports it at every start/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: existing });
      for (const label of ["directories", "a module", "elsewhere"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(readFileSync(path.join(dir, site, "vendor.pth"), "utf8")).toBe(existing);
      // The user starts the venv's interpreter (pip, a tool installed there, an editor learning about it).
      const started = spawnSync(path.join(dir, ".venv", "bin", "python"), ["-c", "import sys; print(sys.path)"], { cwd: dir, encoding: "utf8" });
      expect(started.status, started.stderr).toBe(0);
      expect(started.stdout).toContain(path.join(dir, "src"));
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it.skipIf(!HAS_PYTHON)("the modules a .pth file's import lines import may not be changed, created or deleted", async () => {
    const { dir, cleanup } = realTempDir("tacit-python-startup-modules-");
    try {
      const marker = path.join(dir, "PWNED");
      expect(spawnSync("python3", ["-m", "venv", "--without-pip", path.join(dir, ".venv")]).status).toBe(0);
      const lib = path.join(dir, ".venv", "lib");
      const site = path.relative(dir, path.join(lib, readdirSync(lib)[0]!, "site-packages"));
      // As setuptools and virtualenv install them.
      const hack = "def add_shim():\n    pass\n";
      writeTree(dir, {
        [`${site}/distutils-precedence.pth`]: "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n",
        [`${site}/_distutils_hack/__init__.py`]: hack,
        [`${site}/_virtualenv.pth`]: "import _virtualenv\n",
        [`${site}/_virtualenv.py`]: "# virtualenv's patches\n",
        [`${site}/other/__init__.py`]: "",
      });
      const code = `import os; os.system(${JSON.stringify(`touch ${marker}`)})\ndef add_shim():\n    pass\n`;
      const script = `${ATTEMPT_PRELUDE}
const site = ${lit(site)};
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access(site + "/_distutils_hack/__init__.py").read());
  attempt("a package an import line names", () => fs.access(site + "/_distutils_hack/__init__.py").write(${lit(code)}));
  attempt("a module in it", () => fs.access(site + "/_distutils_hack/override.py").write(${lit(code)}));
  attempt("a module an import line names", () => fs.access(site + "/_virtualenv.py").write(${lit(code)}));
  attempt("deleted", () => fs.access(site + "/_virtualenv.py").delete());
  attempt("another package", () => fs.access(site + "/other/__init__.py").write("VALUE = 1\\n"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["a package an import line names", "a module in it", "a module an import line names", "deleted"],
        /refused: this is a module Python imports at every start of the interpreter of .*site-packages: .*\.pth imports it; .*Ask the user/,
      );
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: hack });
      expect(attemptOf(found, "another package").status).toBe("ok");
      expect(readFileSync(path.join(dir, site, "_distutils_hack/__init__.py"), "utf8")).toBe(hack);
      const started = spawnSync(path.join(dir, ".venv", "bin", "python"), ["-c", "pass"], { cwd: dir, encoding: "utf8" });
      expect(started.status, started.stderr).toBe(0);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
  // pyvenv.cfg's `home` names the directory of the interpreter a venv is made from, and Python
  // looks for its standard library from there (the landmark lib/python3.X/os.py) at every start
  // of the venv's interpreter: a script that pointed it at a directory of its own, holding an
  // os.py and an encodings package, ran that package's code at the next `.venv/bin/python -c pass`
  // (before Python's own startup failed). Python reads pyvenv.cfg beside the interpreter or one
  // directory up, so a new one in .venv/bin counts too; and a python._pth beside it (Linux too,
  // since 3.11) replaces its whole module path, a directory of the script's first.
  it.skipIf(!HAS_PYTHON)("a venv's pyvenv.cfg may be read but not changed, created or deleted", async () => {
    const { dir, cleanup } = realTempDir("tacit-python-pyvenv-");
    try {
      const marker = path.join(dir, "PWNED");
      expect(spawnSync("python3", ["-m", "venv", "--without-pip", path.join(dir, ".venv")]).status).toBe(0);
      const version = readdirSync(path.join(dir, ".venv", "lib"))[0]!;
      const config = readFileSync(path.join(dir, ".venv", "pyvenv.cfg"), "utf8");
      const stdlib = `evil/lib/${version}`;
      const payload = `import posix; posix.system(${JSON.stringify(`touch ${marker}`)})\n`;
      writeTree(dir, { [`${stdlib}/os.py`]: "", [`${stdlib}/encodings/__init__.py`]: payload, "evil/bin/.keep": "", "evil2/encodings/__init__.py": payload });
      const pointed = config.replace(/^home = .*$/m, `home = ${path.join(dir, "evil", "bin")}`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access(".venv/pyvenv.cfg").read());
  attempt("home rewritten", () => fs.access(".venv/pyvenv.cfg").write(${lit(pointed)}));
  attempt("home appended", () => fs.access(".venv/pyvenv.cfg").append(${lit(`home = ${path.join(dir, "evil", "bin")}\n`)}));
  attempt("beside the interpreter", () => fs.access(".venv/bin/pyvenv.cfg").write(${lit(pointed)}));
  attempt("in another case", () => fs.access(".venv/bin/PyVenv.CFG").write(${lit(pointed)}));
  attempt("deleted", () => fs.access(".venv/pyvenv.cfg").delete());
  attempt("a ._pth beside the interpreter", () => fs.access(".venv/bin/python._pth").write(${lit(`${path.join(dir, "evil2")}\n`)}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["home rewritten", "home appended", "beside the interpreter", "in another case", "deleted"],
        /refused: this is a Python virtual environment's pyvenv\.cfg.*standard library.*Ask the user/,
      );
      expectRefused(found, ["a ._pth beside the interpreter"], /refused: this is a Python \._pth file.*whole path.*Ask the user/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: config });
      expect(readFileSync(path.join(dir, ".venv", "pyvenv.cfg"), "utf8")).toBe(config);
      const started = spawnSync(path.join(dir, ".venv", "bin", "python"), ["-c", "pass"], { cwd: dir, encoding: "utf8" });
      expect(existsSync(marker)).toBe(false);
      expect(started.status, started.stderr).toBe(0);
    } finally {
      cleanup();
    }
  }, 60_000);
});
