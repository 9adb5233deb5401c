// Containment, unit level: isWithin compares whole path components (never string
// prefixes), and resolveReal (and resolveRealBelow) follows every link, dead ones included.

import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isWithin, namedAndReal, PathResolutionError, resolvedPath, resolveReal, resolveRealBelow, resolveRealOrSelf, withinTest } from "../../runner/fs/containment.js";
import { realTempDir } from "./fixtures.js";

/** Each [candidate, root, inside] decided as given. */
function expectWithin(cases: Array<[string, string, boolean]>): void {
  expect(cases.map(([candidate, root]) => [candidate, root, isWithin(candidate, root)])).toEqual(cases);
}

describe("isWithin", () => {
  it("decides by path components, never by string prefix", () => {
    const cases: Array<[string, string, boolean]> = [
      ["/work/app", "/work/app", true],
      ["/work/app/x", "/work/app", true],
      ["/work/app/x/y/z", "/work/app", true],
      ["/work/app_evil", "/work/app", false],
      ["/work/app_evil/x", "/work/app", false],
      ["/work/appx", "/work/app", false],
      ["/work", "/work/app", false],
      ["/", "/work/app", false],
      ["/work/other", "/work/app", false],
      ["/x", "/", true],
      ["/", "/", true],
    ];
    expectWithin(cases);
  });

  it("normalizes what is not normalized before comparing (dot components, doubled or trailing slashes)", () => {
    const cases: Array<[string, string, boolean]> = [
      ["/work/app/../app_evil", "/work/app", false],
      ["/work/app/..", "/work/app", false],
      ["/work/app/x/..", "/work/app", true],
      ["/work/app/./x", "/work/app", true],
      ["/work/./app_evil", "/work/app", false],
      ["/work/app/", "/work/app", true],
      ["/work/app_evil/", "/work/app", false],
      ["/work/app/x", "/work/app/", true],
      ["/work/app_evil", "/work/app/", false],
      ["/work//app/x", "/work/app", true],
      ["/work/app/x", "/work//app", true],
      ["/work/ap", "/work/app/..", true],
      ["/other", "/work/app/../..", true],
    ];
    expectWithin(cases);
  });

  it("agrees with a comparison of path.relative on every pair of a set of tricky paths", () => {
    const byRelative = (candidate: string, root: string): boolean => {
      const relative = path.relative(root, candidate);
      return relative === "" || (relative !== ".." && !relative.startsWith("../") && !path.isAbsolute(relative));
    };
    const paths = ["/", "//", "/w", "/w/a", "/w/a/", "/w/a_b", "/w/ab", "/w/a/b", "/w/a/..", "/w/a/../b", "/w/./a", "/w//a", "/w/a/.b", "/w/a/..b", "/w/a/b/c", "/w/a/b/..", "/w/a/b/../..", "/wa", "/w/a b", "/w/ä", "/w/a\n/b"];
    const disagreements = paths.flatMap((candidate) => paths.filter((root) => isWithin(candidate, root) !== byRelative(candidate, root)).map((root) => `${candidate} in ${root}`));
    expect(disagreements).toEqual([]);
    // withinTest (one candidate, tried on many roots: the protected paths) answers the same, whichever of the two is normalized.
    const testDisagreements = paths.flatMap((candidate) => {
      const inside = withinTest(candidate);
      return paths.filter((root) => inside(root) !== byRelative(candidate, root)).map((root) => `withinTest(${candidate})(${root})`);
    });
    expect(testDisagreements).toEqual([]);
  });

  it("treats a name that starts with two dots as an ordinary component inside the root", () => {
    expect(isWithin("/work/app/..foo", "/work/app")).toBe(true);
    expect(isWithin("/work/app/.../x", "/work/app")).toBe(true);
    expect(isWithin("/work/..app", "/work/app")).toBe(false);
  });
});

describe("resolvedPath", () => {
  it("is path.resolve, for normalized and unnormalized paths alike", () => {
    const paths = [
      "/", "//", "///x", "/a", "/a/", "/a//b", "/a/./b", "/a/../b", "/a/b/.", "/a/b/..", "/..", "/.", "/a/...", "/a/.b", "/a/..b/c",
      "/a/b./c", "/.hidden/x", "/a/b/c.txt", "/a\\b", "/a /b", "/tmp/x/", "a", "a/b", "./a", "../a", "", ".", "..", "/a/b/../../..",
      // A trailing "/" after a line terminator, which the expression of before took for normalized.
      "/a\n/", "/a\r/", "/a\u2028/", "/a\u2029/", "/a/b\n/", "\n/", "/\n", "/a/.\n", "/a/..\n/b", "/a/.\n/", "/a//", "/a/.",
    ];
    expect(paths.map((p) => [p, resolvedPath(p)])).toEqual(paths.map((p) => [p, path.resolve(p)]));
  });
});

describe("resolveReal", () => {
  let dir: string;
  let cleanup: () => void;

  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-files-resolve-"));
    mkdirSync(path.join(dir, "real/sub"), { recursive: true });
    mkdirSync(path.join(dir, "outside"));
    writeFileSync(path.join(dir, "real/file.txt"), "x");
    symlinkSync(path.join(dir, "real"), path.join(dir, "dirlink"));
    symlinkSync("real/file.txt", path.join(dir, "rel-file-link"));
    // Dead links: their targets do not exist (yet).
    symlinkSync(path.join(dir, "outside/new.txt"), path.join(dir, "dead"));
    symlinkSync("outside/not-yet", path.join(dir, "dead-relative"));
    symlinkSync(path.join(dir, "dead"), path.join(dir, "dead-chain"));
    symlinkSync(path.join(dir, "outside/missing-dir"), path.join(dir, "dead-dir"));
    symlinkSync(path.join(dir, "loop-b"), path.join(dir, "loop-a"));
    symlinkSync(path.join(dir, "loop-a"), path.join(dir, "loop-b"));
  });
  afterAll(() => cleanup());

  it("returns existing paths as they are, and resolves live links", () => {
    expect(resolveReal(path.join(dir, "real/file.txt"))).toBe(path.join(dir, "real/file.txt"));
    expect(resolveReal(path.join(dir, "dirlink/file.txt"))).toBe(path.join(dir, "real/file.txt"));
    expect(resolveReal(path.join(dir, "rel-file-link"))).toBe(path.join(dir, "real/file.txt"));
    expect(resolveReal(path.join(dir, "real/sub/../file.txt"))).toBe(path.join(dir, "real/file.txt"));
  });

  it("follows dead links to where a write would land", () => {
    expect(resolveReal(path.join(dir, "dead"))).toBe(path.join(dir, "outside/new.txt"));
    expect(resolveReal(path.join(dir, "dead-relative"))).toBe(path.join(dir, "outside/not-yet"));
    expect(resolveReal(path.join(dir, "dead-chain"))).toBe(path.join(dir, "outside/new.txt"));
    expect(resolveReal(path.join(dir, "dead-dir/a/b.txt"))).toBe(path.join(dir, "outside/missing-dir/a/b.txt"));
  });

  it("appends missing components as written, after resolving links before them", () => {
    expect(resolveReal(path.join(dir, "missing/a/b"))).toBe(path.join(dir, "missing/a/b"));
    expect(resolveReal(path.join(dir, "dirlink/missing/x"))).toBe(path.join(dir, "real/missing/x"));
  });

  it("refuses a link loop with a PathResolutionError", () => {
    expect(() => resolveReal(path.join(dir, "loop-a"))).toThrow(PathResolutionError);
    expect(() => resolveReal(path.join(dir, "loop-a/x"))).toThrow(PathResolutionError);
  });

  it("resolveRealBelow, which looks only below a real directory, answers as resolveReal does", () => {
    const names = [
      "", "real", "real/file.txt", "dirlink/file.txt", "rel-file-link", "real/sub/../file.txt", "dead", "dead-relative",
      "dead-chain", "dead-dir/a/b.txt", "missing/a/b", "dirlink/missing/x", "real/file.txt/below-a-file",
      "real/...", "real/..x/y", "real/.hidden/x", "dirlink/sub/../.x",
    ];
    const paths = [...names.map((name) => path.join(dir, name)), path.dirname(dir), "/"];
    expect(paths.map((p) => [p, resolveRealBelow(dir, p)])).toEqual(paths.map((p) => [p, resolveReal(p)]));
    // Below the file system's root itself, whose name ends with the separator.
    expect(paths.map((p) => [p, resolveRealBelow("/", p)])).toEqual(paths.map((p) => [p, resolveReal(p)]));
    const realSub = path.join(dir, "real/sub");
    expect(resolveRealBelow(realSub, path.join(realSub, "../file.txt"))).toBe(path.join(dir, "real/file.txt"));
    expect(() => resolveRealBelow(dir, path.join(dir, "loop-a/x"))).toThrow(PathResolutionError);
  });

  it("namedAndReal, which resolves each directory once for all its paths, names each path as named and as resolveRealOrSelf does", () => {
    const names = [
      "", "real", "real/file.txt", "real/missing.lock", "dirlink/file.txt", "dirlink/missing.lock", "rel-file-link", "dead", "dead-relative",
      "dead-chain", "dead-dir/a/b.txt", "missing/a/b", "dirlink/missing/x", "real/file.txt/below-a-file", "loop-a", "loop-a/x", "dirlink/sub/../.x",
    ];
    const paths = [...names.map((name) => path.join(dir, name)), path.dirname(dir), "/", "/proc/self/fd/1", "/proc/self/cwd/x", "/dev/stdin"];
    const oneByOne = [...new Set(paths.flatMap((p) => [path.resolve(p), resolveRealOrSelf(p)]))];
    expect(namedAndReal(paths)).toEqual(oneByOne);
    // The last part a link to a directory: its own real place, not the link's directory's.
    expect(namedAndReal([path.join(dir, "dirlink")])).toEqual([path.join(dir, "dirlink"), path.join(dir, "real")]);
  });
});
