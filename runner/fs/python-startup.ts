// What Python runs at every start of an interpreter, before any program of the user's: the `.pth`
// files of its site-packages directory (site.py executes each of their lines that starts with
// `import `), and a `sitecustomize.py` or `usercustomize.py` there, which it imports. A virtual
// environment in the project (`.venv/lib/python3.X/site-packages`) is inside the allowed roots,
// and every start of its interpreter runs them: `pip --version`, a formatter or linter installed
// there, the interpreter an editor's Python extension runs as soon as the folder opens to learn
// about it, not only the project's own code. Shown through the real CLI and Python 3.11: a script
// with requestFileSystem(".") alone wrote `import os; os.system("touch PWNED")` into
// .venv/lib/python3.11/site-packages/zz-setup.pth, and the user's next `.venv/bin/python -c pass`
// made PWNED, with the user's authority, outside the sandbox.
// So in a directory named site-packages or dist-packages (any case), a write may not leave a `.pth`
// file holding a line Python executes (one that starts with `import`, leading blanks and a BOM
// aside, lines split as Python splits them: \n, \r\n or \r), and may not write sitecustomize.py or
// usercustomize.py at all. A `.pth` that lists directories (an editable install's) may be written.
// And the modules those lines import, which run at every start as well: a venv with pip holds
// setuptools' distutils-precedence.pth, whose line imports _distutils_hack; shown through the real
// CLI, a script that rewrote site-packages/_distutils_hack/__init__.py ran at the next
// `.venv/bin/python -c pass`. So a module or package of that site directory that an import line of
// one of its .pth files names (`import x`, `from x import`, `__import__('x')`, `import_module('x')`;
// one given by a variable counts as every module there) may be read but not changed, created or
// deleted.
// And a virtual environment's pyvenv.cfg, whose `home` names the directory of the interpreter the
// venv was made from: Python looks for its standard library from there (the landmark
// lib/python3.X/os.py) at every start of the venv's interpreter. Shown through the real CLI and
// Python 3.11: a script with requestFileSystem(".") alone pointed `home` at a directory of its own
// holding an os.py and an encodings package, and the next `.venv/bin/python -c pass` ran that
// package's code. Python reads pyvenv.cfg beside the interpreter or one directory up, so no file of
// that name may be changed, created or deleted, wherever it is (in any case). Nor a `._pth` file
// (`python._pth` beside .venv/bin/python, on Linux too since 3.11): it replaces the interpreter's
// whole module path, and one listing a directory of the script's first ran its encodings package the same way.
// And a sitecustomize or usercustomize module anywhere (or a file directly in a package of that
// name): site.py imports it from any directory on the path it has built, the directories a .pth file
// lists among them; a script wrote a .pth listing src, then src/sitecustomize.py, and the next start ran it.
// And a zip archive, which a .pth line may name as well (see pythonZipArchiveChange).
// Not covered: the other packages installed there, which run when the user runs them (they are the
// project's dependencies, as node_modules is), and a venv's activate scripts, which the user sources.

import { readdirSync } from "node:fs";
import path from "node:path";
import { ParsedFiles } from "../bounded-file.js";
import { LAUNCH_MANIFEST_LIMIT_BYTES, TOO_LONG } from "../launch-files.js";
import type { ProtectedPath } from "./protected-paths.js";

/** The directory names Python's site module reads `.pth` files and sitecustomize from. */
const SITE_DIRECTORIES: ReadonlySet<string> = new Set(["site-packages", "dist-packages"]);

/** Whether a line of a .pth file is one site.py executes: it starts with import (leading blanks and a BOM aside). */
const isImportLine = (line: string): boolean => /^[\s\uFEFF]*import/.test(line);

/** The modules site.py imports at every start, from any directory on the path it has built. */
const CUSTOMIZE_MODULES: ReadonlySet<string> = new Set(["sitecustomize.py", "usercustomize.py"]);

/** The packages site.py imports at every start (a directory of that name with an __init__.py), from any directory on its path. */
const CUSTOMIZE_PACKAGES: ReadonlySet<string> = new Set(["sitecustomize", "usercustomize"]);

/**
 * The kind of start file one of `files` (a path as named and where it leads) is: a `.pth` file or a
 * customize module in a site directory, a customize module (or a file of such a package) elsewhere,
 * or null. Elsewhere too: site.py imports sitecustomize from any directory on the path it has built,
 * the directories a .pth file lists among them (which a script may write), and as a package as well:
 * a script wrote a .pth listing src and then src/sitecustomize.py (or site-packages/sitecustomize/__init__.py),
 * and the next `.venv/bin/python -c pass` ran it.
 */
export function pythonStartupFileAt(files: readonly string[]): "pth" | "customize" | "customize-on-path" | null {
  let elsewhere = false;
  for (const file of files) {
    // In lower case: on a case-insensitive file system `Site-Packages/X.PTH` is read as well.
    const name = path.basename(file).toLowerCase();
    const parent = path.basename(path.dirname(file)).toLowerCase();
    if (CUSTOMIZE_PACKAGES.has(parent)) elsewhere = true;
    if (!SITE_DIRECTORIES.has(parent)) {
      if (CUSTOMIZE_MODULES.has(name)) elsewhere = true;
      continue;
    }
    if (name.endsWith(".pth")) return "pth";
    if (CUSTOMIZE_MODULES.has(name)) return "customize";
  }
  return elsewhere ? "customize-on-path" : null;
}

/**
 * Why a write leaving `after` in a Python start file of `kind` (see pythonStartupFileAt) is
 * refused, or null. One past LAUNCH_MANIFEST_LIMIT_BYTES is refused: it is read whole to judge it.
 */
export function pythonStartupChange(kind: "pth" | "customize" | "customize-on-path", after: string | typeof TOO_LONG): string | null {
  const why =
    "at every start of that interpreter (its pip, the tools installed there, the interpreter an editor runs as soon as it opens " +
    "the folder), with the user's full authority, outside the sandbox";
  if (kind === "customize") {
    return `it would write a sitecustomize or usercustomize module in a site-packages directory: Python imports it ${why}. Put the code in a module of the project, which the project imports, or ask the user`;
  }
  if (kind === "customize-on-path") {
    return (
      "it would write a sitecustomize or usercustomize module (or a file of such a package): Python imports it at every start from any " +
      "directory on its path (a site-packages directory, or one a .pth file there lists): its pip, the tools installed there, the interpreter " +
      "an editor runs as soon as it opens the folder run it, with the user's full authority, outside the sandbox. " +
      "Give the module another name and import it from the project, or ask the user"
    );
  }
  if (after === TOO_LONG || Buffer.byteLength(after) > LAUNCH_MANIFEST_LIMIT_BYTES) {
    return `it would leave this .pth file larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, and tacit reads all of it to check that it holds no line Python executes`;
  }
  if (!after.split(/\r\n|\r|\n/).some(isImportLine)) return null;
  return (
    `it would leave a .pth file in a site-packages directory holding a line that starts with import: Python executes such a line ${why}. List directories ` +
    "in it (one a line), and put the code in a module of the project, or ask the user"
  );
}

/** The signature of a zip archive's end record, which Python's zipimport looks for at a file's end. */
const ZIP_END_RECORD = "PK\x05\x06";

/**
 * Why a write of `content` (appended, or the whole file) is refused as one that would make a zip
 * archive Python could import from, or null. A .pth file may list directories, and Python puts any
 * existing file a line names on its path as well: a zip archive, whose sitecustomize.py it imports at
 * every start. A stored zip whose bytes are all below 0x80 is text: a script wrote src/lib.zip and a
 * .pth listing it, and the next `.venv/bin/python -c pass` ran its code. Which .pth lists a file is
 * not known where it is written, so no write may hold the end record's signature, and no append may
 * start with the end of it (the start of it may end the file: its end is not read).
 */
export function pythonZipArchiveChange(content: string, append: boolean): string | null {
  const completes = append && [1, 2, 3].some((cut) => content.startsWith(ZIP_END_RECORD.slice(cut)));
  if (!content.includes(ZIP_END_RECORD) && !completes) return null;
  return (
    "it would write the end record of a zip archive (the characters P, K, \\x05, \\x06): Python imports modules from a zip archive a .pth " +
    "file lists, its sitecustomize at every start of that interpreter (its pip, the tools installed there, the interpreter an editor runs " +
    "as soon as it opens the folder), with the user's full authority, outside the sandbox, and tacit cannot tell which files a .pth lists. " +
    "Write text without those four characters, or ask the user"
  );
}

/** The top-level modules a .pth file's import lines import ("every" where one is given by a variable). */
const importedBy = new ParsedFiles<ReadonlySet<string> | "every">(LAUNCH_MANIFEST_LIMIT_BYTES, (text) => {
  const modules = new Set<string>();
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (!isImportLine(line)) continue;
    for (const [, names] of line.matchAll(/\bimport\s+([\w.]+(?:\s*,\s*[\w.]+)*)/g)) for (const name of names!.split(",")) modules.add(name.trim());
    for (const [, name] of line.matchAll(/\bfrom\s+([\w.]+)\s+import\b/g)) modules.add(name!);
    for (const [, name] of line.matchAll(/\b(?:__import__|import_module)\s*\(\s*(?:['"]([\w.]+)['"])?/g)) {
      if (name === undefined) return "every";
      modules.add(name);
    }
  }
  return new Set([...modules].map((name) => name.split(".")[0]!.toLowerCase()));
});

/**
 * The module or package of a site directory that `changed` (a path a script would change) is or
 * lies in, where an import line of one of that directory's .pth files names it; or null.
 */
export function pythonStartupModuleChangeOf(changed: string): ProtectedPath | null {
  const parts = changed.split(path.sep);
  // The site directory nearest above: a module directly in it, or a package's directory there.
  const at = parts.findLastIndex((part, i) => i < parts.length - 1 && SITE_DIRECTORIES.has(part.toLowerCase()));
  if (at < 0) return null;
  const site = parts.slice(0, at + 1).join(path.sep);
  const entry = parts[at + 1]!;
  if (entry.toLowerCase().endsWith(".pth")) return null;
  const module = (at + 1 === parts.length - 1 ? entry.replace(/\.py$/i, "") : entry).toLowerCase();
  let names: string[];
  try {
    names = readdirSync(site).filter((name) => name.toLowerCase().endsWith(".pth"));
  } catch {
    return null;
  }
  for (const name of names) {
    const modules = importedBy.get(path.join(site, name));
    if (modules === null || (modules !== "every" && !modules.has(module))) continue;
    return {
      path: path.join(site, entry),
      what: `a module Python imports at every start of the interpreter of ${site}: ${path.join(site, name)} imports it`,
      readable: true,
      refusal:
        "scripts may read it but not change it (nor create or delete it): an import line of a .pth file there runs it at every start of that " +
        "interpreter (its pip, the tools installed there, the interpreter an editor runs as soon as it opens the folder), with the user's full " +
        "authority, outside the sandbox. Ask the user to change it",
    };
  }
  return null;
}

/** The file a virtual environment's interpreter reads its base installation from, `home` among it. */
const VENV_CONFIG_NAME = "pyvenv.cfg";

/** The suffix of the file beside an interpreter (`python._pth`) that gives its whole module path. */
const PATH_FILE_SUFFIX = "._pth";

/** `changed` (a path a script would change) where it is a pyvenv.cfg or a ._pth file, with why it may not be changed; or null. */
export function pyvenvConfigChangeOf(changed: string): ProtectedPath | null {
  const name = path.basename(changed).toLowerCase();
  const isConfig = name === VENV_CONFIG_NAME;
  if (!isConfig && !name.endsWith(PATH_FILE_SUFFIX)) return null;
  const says = isConfig
    ? "its `home` says where the interpreter of that environment loads Python's standard library from"
    : "beside an interpreter, it gives the whole path that interpreter loads Python's standard library and every module from";
  return {
    path: changed,
    what: isConfig ? "a Python virtual environment's pyvenv.cfg" : "a Python ._pth file",
    readable: true,
    refusal:
      `scripts may read it but not change it (nor create or delete it): ${says} at every start (its pip, the tools installed there, the ` +
      "interpreter an editor runs as soon as it opens the folder), so pointed at a directory of the script's making it runs that code with " +
      "the user's full authority, outside the sandbox. Ask the user to change it, or to make the environment again (python3 -m venv)",
  };
}
