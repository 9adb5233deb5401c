// A tree deeper than a path can name (PATH_MAX, 4096 bytes on Linux). tacit opens every
// directory by its path, so it cannot list below that depth; it says so. Left out as if
// unreadable but without a word, a walk of a tree 5,000 directories deep returned 2,041
// entries, and find() and grepRecursive() found nothing in its depths (grep -rn did), and the
// script was not told. Failing the whole call instead, find("/") failed for one deep tree
// anywhere on the machine: the deep directory is left out, with a warning that names it and
// says why, as an unreadable one is, and the rest of the tree is the answer. So is a link in the
// last directory that can be listed, whose own path is too long to read it by (left out without
// a word, as the deep directory was). Through the real CLI.

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
      ["-e", `const fs = require("node:fs"); process.chdir(process.argv[1]); fs.writeFileSync("top.txt", "needle\\n"); fs.mkdirSync("z"); fs.writeFileSync("z/after.txt", "needle\\n"); let linked = false; for (let i = 1; i <= ${DEPTH}; i++) { fs.mkdirSync("d"); process.chdir("d"); if (!linked && Buffer.byteLength(process.argv[1]) + 2 * i + 2 >= 4096) { fs.symlinkSync("deepest.txt", "far.txt"); linked = true; } } fs.writeFileSync("deepest.txt", "needle\\n");`, path.join(dir)],
      { encoding: "utf8" },
    );
    if (made.status !== 0) throw new Error(`could not make the tree: ${made.stderr}`);
  });
  afterAll(() => {
    // rm -r copes with any depth; Node's rmSync recurses by path.
    spawnSync("rm", ["-rf", dir]);
    cleanup();
  });

  it("walk(), find() and grepRecursive() leave the too-deep directory out with a warning that says why, and answer with the rest", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  // One walk for both (a walk of the deep tree is a third of the run): what it names outside
  // the deep tree, and how many entries it has in all.
  let walked = -1;
  attempt("walk", () => {
    const all = fs.access(".").walk();
    walked = all.length;
    return all.filter((entry) => !entry.path.includes("/d/")).map((entry) => entry.name);
  });
  attempt("walkDepth", () => walked);
  attempt("find", () => fs.find(".", "*.txt").map((file) => file.slice(file.lastIndexOf("/") + 1)));
  attempt("grepRecursive", () => fs.grepRecursive(".", "needle").map((match) => match.file.slice(match.file.lastIndexOf("/") + 1)));
  attempt("children", () => fs.access(".").children().map((entry) => entry.name));
});
`;
    const r = await tacit(dir, script, ["--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    // What lies beside and after the deep tree is answered; what lies below PATH_MAX is not.
    expect(attemptOf(found, "walk")).toEqual({ status: "ok", value: ["d", "top.txt", "z", "after.txt"] });
    expect(attemptOf(found, "find")).toEqual({ status: "ok", value: ["top.txt", "after.txt"] });
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["top.txt", "after.txt"] });
    expect(attemptOf(found, "children")).toEqual({ status: "ok", value: ["d", "top.txt", "z"] });
    // Every level that can be opened is walked: the levels below the root whose paths fit.
    const levels = attemptOf(found, "walkDepth");
    expect(levels.status).toBe("ok");
    expect(levels.value as number).toBeGreaterThan(DEPTH * 0.9);
    expect(levels.value as number).toBeLessThan(DEPTH + 3);
    // One warning per call, naming (cut) the directory and the link beside it, and why each was left out.
    for (const call of ["walk()", "find(", "grepRecursive("]) {
      const warnings = r.stderr.split("\n").filter((line) => line.startsWith(`tacit: warning: ${call}`));
      expect(warnings.length, `${call}: ${r.stderr}`).toBeGreaterThan(0);
      for (const warning of warnings) {
        expect(warning).toMatch(
          new RegExp(
            '2 entries could not be read and are left out of its answer: ".*/d/d/?…\\(\\d+ characters\\)…(/d)+" \\(its path is 4\\d{3} bytes, more than the system lets a program open a directory by, so nothing below it can be listed or searched\\), ' +
              '".*/d/d/?…\\(\\d+ characters\\)…(/d)+/far\\.txt" \\(its path is 4\\d{3} bytes, more than the system lets a program read a link by\\)\\. The answer holds the rest',
          ),
        );
      }
    }
    expect(r.stdout.includes("deepest.txt")).toBe(false);
  }, 60_000);
});
