// A zip archive on Python's path (runner/fs/python-startup.ts): a .pth file that lists directories
// may be written (an editable install's), and Python puts on its path whatever existing file a line
// names as well: a zip archive, whose sitecustomize.py it imports at every start. A script can write
// one: a stored zip whose bytes are all below 0x80 is text (a comment pads its CRC). Shown through
// the real CLI and Python 3.11: a script with requestFileSystem(".") alone wrote src/lib.zip (in one
// write, in two appends, or with writeClassified at .env.zip) and a .pth listing it, and the next `.venv/bin/python -c pass` ran its code.

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

const HAS_PYTHON = spawnSync("python3", ["-c", "import venv"], { stdio: "ignore" }).status === 0;

/** A stored zip holding sitecustomize.py that runs `code`, every byte below 0x80 (as text). */
function textZip(code: string): string {
  const made = spawnSync("python3", ["-c", `
import struct, sys, zlib
code = sys.argv[1]
for pad in range(100000):
    body = (code + "\\n#" + "x" * pad + "\\n").encode()
    crc, n = zlib.crc32(body), b"sitecustomize.py"
    local = struct.pack("<4sHHHHHIIIHH", b"PK\\x03\\x04", 10, 0, 0, 0, 0x21, crc, len(body), len(body), len(n), 0) + n + body
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\\x01\\x02", 20, 10, 0, 0, 0, 0x21, crc, len(body), len(body), len(n), 0, 0, 0, 0, 0, 0) + n
    data = local + central + struct.pack("<4sHHHHIIH", b"PK\\x05\\x06", 0, 0, 1, 1, len(central), len(local), 0)
    if all(b < 0x80 for b in data):
        break
assert all(b < 0x80 for b in data)
sys.stdout.write(data.decode("ascii"))
`, code], { encoding: "latin1" });
  expect(made.status, made.stderr).toBe(0);
  return made.stdout;
}

describe("a zip archive a .pth file lists", () => {
  it.skipIf(!HAS_PYTHON)("may not be written, whole or in appends", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-python-zip-");
    ctx.onTestFinished(cleanup);
    const marker = path.join(dir, "PWNED");
    expect(spawnSync("python3", ["-m", "venv", "--without-pip", path.join(dir, ".venv")]).status).toBe(0);
    const lib = path.join(dir, ".venv", "lib");
    const site = path.relative(dir, path.join(lib, readdirSync(lib)[0]!, "site-packages"));
    writeTree(dir, { "src/.keep": "", "home/.keep": "" });
    const zip = textZip(`import os; os.system(${JSON.stringify(`touch ${marker}`)})`);
    const split = zip.indexOf("PK\x05\x06") + 2;
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
const site = ${lit(site)};
requestFileSystem(".", (fs) => {
  attempt("listing", () => fs.access(site + "/project.pth").write(${lit(`${path.join(dir, "src/lib.zip")}\n${path.join(dir, "src/parts.zip")}\n${path.join(dir, ".env.zip")}\n`)}));
  attempt("whole", () => fs.access("src/lib.zip").write(${lit(zip)}));
  attempt("first part", () => fs.access("src/parts.zip").write(${lit(zip.slice(0, split))}));
  attempt("second part", () => fs.access("src/parts.zip").append(${lit(zip.slice(split))}));
  // A classified path (.env.*) takes a classified value, which the script makes of its own text.
  attempt("classified", () => fs.writeClassified(".env.zip", classify(${lit(zip)})));
  attempt("text", () => fs.access("src/notes.txt").write("PK is a name\\n"));
});
`, ["--quiet"], { HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["whole", "second part"], /refused: .*zip archive.*Python.*every start/);
    for (const label of ["listing", "first part", "text"]) expect(attemptOf(found, label).status, label).toBe("ok");
    // Its value is written later, out of the script's sight: nothing is written, and the secure output would say why.
    expect(readFileSync(path.join(dir, ".env.zip"), "latin1")).not.toContain("PK\x05\x06");
    const started = spawnSync(path.join(dir, ".venv", "bin", "python"), ["-c", "pass"], { cwd: dir, encoding: "utf8" });
    expect(started.status, started.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });
});
