// A tree deeper than a path can name (PATH_MAX, 4096 bytes on Linux). tacit opens every
// directory by its path, so it cannot list below that depth; it says so. Left out as if
// unreadable, a walk of a tree 5,000 directories deep returned 2,041 entries, and find() and
// grepRecursive() found nothing in its depths (grep -rn did), and the script was not told.
// Through the real CLI.

import { spawnSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, realTempDir, tacit } from "./fixtures.js";

/** Levels of `d` below the root: each adds 2 bytes, so the deepest paths pass 4096 bytes. */
const DEPTH = 2100;

describe("a tree deeper than a path can name", () => {
  let dir: string;
  let cleanup: () => void;

  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-deep-tree-"));
    // Made one level at a time from inside (no path to it is short enough to make it at once).
    const made = spawnSync(
      process.execPath,
      ["-e", `const fs = require("node:fs"); process.chdir(process.argv[1]); fs.writeFileSync("top.txt", "needle\\n"); for (let i = 0; i < ${DEPTH}; i++) { fs.mkdirSync("d"); process.chdir("d"); } fs.writeFileSync("deepest.txt", "needle\\n");`, path.join(dir)],
      { encoding: "utf8" },
    );
    if (made.status !== 0) throw new Error(`could not make the tree: ${made.stderr}`);
  });
  afterAll(() => {
    // rm -r copes with any depth; Node's rmSync recurses by path.
    spawnSync("rm", ["-rf", dir]);
    cleanup();
  });

  it("walk(), find() and grepRecursive() fail with what happened and what to do, rather than return part of the tree", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("walk", () => fs.access(".").walk().length);
  attempt("find", () => fs.find(".", "*.txt").length);
  attempt("grepRecursive", () => fs.grepRecursive(".", "needle").length);
  attempt("children", () => fs.access(".").children().map((entry) => entry.name));
});
`;
    const r = await tacit(dir, script, ["--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of ["walk", "find", "grepRecursive"]) {
      const { status, value } = attemptOf(found, label);
      // An error of the file system's (not a refusal of the policy's), saying what, why and what to do.
      expect(status, label).toBe("Error");
      expect(String(value), label).toMatch(
        /\/d\/d\/?…\(\d+ characters\)…(\/d)+: its path is 4\d{3} bytes, more than the system lets a program open a directory by.*nothing was returned\. Walk or search a directory whose tree is less deep/,
      );
    }
    expect(attemptOf(found, "children")).toEqual({ status: "ok", value: ["d", "top.txt"] });
  }, 60_000);
});
