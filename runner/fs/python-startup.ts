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
// Not covered: the packages installed there, which run when the user runs them (they are the
// project's dependencies, as node_modules is), and a venv's activate scripts, which the user sources.

import path from "node:path";
import { LAUNCH_MANIFEST_LIMIT_BYTES, TOO_LONG } from "../launch-files.js";

/** The directory names Python's site module reads `.pth` files and sitecustomize from. */
const SITE_DIRECTORIES: ReadonlySet<string> = new Set(["site-packages", "dist-packages"]);

/** The modules site.py imports at every start, from any directory on the path it has built. */
const CUSTOMIZE_MODULES: ReadonlySet<string> = new Set(["sitecustomize.py", "usercustomize.py"]);

/** The kind of start file one of `files` (a path as named and where it leads) is in a site directory: a `.pth` file, a customize module, or null. */
export function pythonStartupFileAt(files: readonly string[]): "pth" | "customize" | null {
  for (const file of files) {
    // In lower case: on a case-insensitive file system `Site-Packages/X.PTH` is read as well.
    if (!SITE_DIRECTORIES.has(path.basename(path.dirname(file)).toLowerCase())) continue;
    const name = path.basename(file).toLowerCase();
    if (name.endsWith(".pth")) return "pth";
    if (CUSTOMIZE_MODULES.has(name)) return "customize";
  }
  return null;
}

/**
 * Why a write leaving `after` in a Python start file of `kind` (see pythonStartupFileAt) is
 * refused, or null. One past LAUNCH_MANIFEST_LIMIT_BYTES is refused: it is read whole to judge it.
 */
export function pythonStartupChange(kind: "pth" | "customize", after: string | typeof TOO_LONG): string | null {
  const why =
    "at every start of that interpreter (its pip, the tools installed there, the interpreter an editor runs as soon as it opens " +
    "the folder), with the user's full authority, outside the sandbox";
  if (kind === "customize") {
    return `it would write a sitecustomize or usercustomize module in a site-packages directory: Python imports it ${why}. Put the code in a module of the project, which the project imports, or ask the user`;
  }
  if (after === TOO_LONG || Buffer.byteLength(after) > LAUNCH_MANIFEST_LIMIT_BYTES) {
    return `it would leave this .pth file larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, and tacit reads all of it to check that it holds no line Python executes`;
  }
  if (!after.split(/\r\n|\r|\n/).some((line) => /^[\s\uFEFF]*import/.test(line))) return null;
  return (
    `it would leave a .pth file in a site-packages directory holding a line that starts with import: Python executes such a line ${why}. List directories ` +
    "in it (one a line), and put the code in a module of the project, or ask the user"
  );
}
