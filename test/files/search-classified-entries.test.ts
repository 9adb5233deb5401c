// A recursive search asks of every entry it walks whether it is classified, through
// ClassifiedPaths.entriesOf (one test per directory, asked by name): what a name alone decides is
// remembered by name, and the path patterns that are not tried by their last component (absolute
// ones with a glob in it, tacit's own temp files among them) are tried only in directories where
// what their matches start with (literalStart) and the directory's path may meet. A directory
// passed over wrongly would have the search read a classified file, so its answers must be
// matchesExactly's for every entry, and a search must still prune what such patterns classify.

import path from "node:path";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { ClassifiedPaths, DEFAULT_CLASSIFIED_PATHS, literalStart } from "../../runner/fs/classified-paths.js";
import { makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

/** Patterns whose matches start where a quick look could get it wrong: siblings sharing a prefix, "**" matching nothing, "./", classes, escapes. */
const GLOBBED = [
  "/t/x-*",
  "/t/a/**",
  "/t/**/k*y",
  "/t/[ab]c*",
  "/t/a?c",
  "/t/(e|f)/*",
  "/t/./g/*",
  "/t//h/*",
  "/t/i\\*j",
  "/u/v*/w",
  "/tmp/tacit-check-*",
  "t/*/anchored*",
  "./rel/*",
  "**/any*x",
  "*/top*",
  // picomatch reads a "|" outside a group as an alternation of the whole pattern: this matches /t/q/*.
  "/nothing|/t/q/*",
];

const DIRECTORIES = ["/", "/t", "/t/x", "/t/a", "/t/a/b", "/t/q", "/t/q/r", "/t/e", "/t/g", "/t/h", "/u", "/u/v", "/u/vv", "/rel", "/tmp", "/tmp/tree/d1", "/t/y/z"];
const NAMES = [
  "x", "x-", "x-1", "x-1.pem", "a", "b", "ac", "abc", "bc1", "aac", "abcd", "k", "key", "kay", "ky", "kyx", "e", "f", "g", "h", "i*j", "ij",
  "w", "v", "vv", "any", "anyx", "anything.x", "anchored", "anchored1", "top", "top1", "y", "z", "tmp", "tacit-check-", "tacit-check-1",
  "f1.ts", ".env", ".env.local", "id.pem", "credentials", "gcloud", "gh", "tacit", "é", "a\nb", ".", "..", "rel", "t", "u", "q", "r",
];

describe("ClassifiedPaths.entriesOf, which a recursive search asks of every entry", () => {
  // Each glob alone too: beside one whose matches may start anywhere ("**/any*x"), every directory is tried.
  for (const [what, patterns] of [
    ["the defaults with absolute and anchored globs", [...DEFAULT_CLASSIFIED_PATHS, ...GLOBBED]],
    ["absolute globs alone", GLOBBED.filter((p) => p.startsWith("/"))],
    ...GLOBBED.map((p) => [`${p} with the default name patterns`, [...DEFAULT_CLASSIFIED_PATHS.filter((d) => !d.includes("/")), p]] as const),
    ["a pattern that matches every path but one", ["!/t/x"]],
    ["a pattern of the whole tree", ["/**"]],
  ] as const) {
    it(`answers every entry of every directory as matchesExactly does: ${what}`, () => {
      const classified = new ClassifiedPaths(patterns);
      const differing: string[] = [];
      let classifiedEntries = 0;
      for (const dir of DIRECTORIES) {
        const entries = classified.entriesOf(dir);
        for (const name of NAMES) {
          const full = dir === "/" ? `/${name}` : `${dir}/${name}`;
          const expected = classified.matchesExactly(full, name);
          if (entries(name) !== expected) differing.push(`${JSON.stringify(full)}: ${!expected}`);
          if (expected) classifiedEntries++;
        }
      }
      expect(differing).toEqual([]);
      // Some entries are classified: the comparison is not of "no" with "no" alone.
      expect(classifiedEntries).toBeGreaterThan(0);
    });
  }

  it("asked again of the same name in another directory, answers for that directory", () => {
    const classified = new ClassifiedPaths(["/t/x-*"]);
    expect(classified.entriesOf("/t")("x-1")).toBe(true);
    expect(classified.entriesOf("/u")("x-1")).toBe(false);
    expect(classified.entriesOf("/t")("x-1")).toBe(true);
  });
});

describe("literalStart: what every text a pattern matches starts with", () => {
  it("stops at glob syntax and escapes, before a component that starts with '.', before '//', and drops a final '/'", () => {
    expect(
      Object.fromEntries(["/tmp/tacit-check-*", "/a/**", "/a/**/b", "./x/*", "/a/./b", "/a/../b", "/a//b", "/a/[b]", "/a\\/b", "/a/b", "**/x", "/root/.config/x*", "/a/{b,c}", "/a+(b)", "!/a", "/a/x|/b/**"].map((p) => [p, literalStart(p)])),
    ).toEqual({
      "/tmp/tacit-check-*": "/tmp/tacit-check-",
      "/a/**": "/a",
      "/a/**/b": "/a",
      "./x/*": "",
      "/a/./b": "/a",
      "/a/../b": "/a",
      "/a//b": "/a",
      "/a/[b]": "/a",
      "/a\\/b": "/a",
      "/a/b": "/a/b",
      "**/x": "",
      "/root/.config/x*": "/root",
      "/a/{b,c}": "/a",
      "/a+(b)": "/a",
      "!/a": "",
      "/a/x|/b/**": "",
    });
  });

  it("is the start of every text picomatch matches with the pattern, as a classified pattern is read", () => {
    const options = { dot: true, flags: "s" } as const;
    const fills = ["", "x", ".", "a/b", "/", "é", "\n"];
    const texts = (pattern: string): string[] => {
      // The pattern's own text, its globs and classes spelled in several ways, and a few prefixes and extensions of each.
      let spelled = [pattern];
      for (const glob of ["**", "*", "?", "[b]", "(e|f)", "{b,c}"]) {
        spelled = spelled.flatMap((text) => (text.includes(glob) ? fills.concat(["b", "e", "c"]).map((fill) => text.split(glob).join(fill)) : [text]));
      }
      return spelled.flatMap((text) => [text, text.replace("./", ""), text.replace("//", "/"), `${text}/`, text.slice(0, -1), `${text}/z`]);
    };
    const missed: string[] = [];
    let matched = 0;
    for (const pattern of [...GLOBBED, "/a/**", "/a/**/b", "/a/./b", "/a//b", "/a/[b]", "/a/{b,c}/d", "/a/b", "/root/.config/x*", "./x/*", "x/./y/*"]) {
      const test = picomatch(pattern, options);
      const start = literalStart(pattern);
      for (const text of new Set(texts(pattern))) {
        if (!test(text)) continue;
        matched++;
        if (!text.startsWith(start)) missed.push(`${JSON.stringify(pattern)} matches ${JSON.stringify(text)}, which does not start with ${JSON.stringify(start)}`);
      }
    }
    expect(missed).toEqual([]);
    expect(matched).toBeGreaterThan(50);
  });
});

describe("absolute globs classify in a recursive search, through the CLI", () => {
  // Each pattern is one the search tries only in directories whose path may meet what its
  // matches start with; each secret is where a wrong look would pass it over: a sibling of an
  // ordinary name sharing its start (x-1 by x), a directory "/**" matches itself, below a "**"
  // that matches no directory, behind a class, and through "./", which picomatch drops. The last
  // has a tree of its own: its matches may start anywhere ("./…" read from "/"), and beside it
  // every directory would be tried.
  const cases = [
    {
      what: "absolute globs",
      patterns: (root: string) => [`${root}/x-*`, `${root}/a/**`, `${root}/deep/**/k*y`, `${root}/br/[c]1.txt`],
      secrets: ["x-1.txt", "a/s.txt", "deep/key", "deep/p/q/kay", "br/c1.txt"],
      ordinary: ["x.txt", "a2/s.txt", "deep/p/kex", "br/d1.txt"],
      from: [".", "deep", "deep/p", "br"],
    },
    // An operator who wrote "|" for "or" (picomatch reads it so, and read() refuses what either side
    // matches): the search looked for the pattern's matches only where its first side's start was,
    // and read alt/s.txt.
    { what: "a pattern with a '|'", patterns: (root: string) => [`${root}/nothing|${root}/alt/*.txt`], secrets: ["alt/s.txt"], ordinary: ["alt/d/t.txt", "alt2/f.txt"], from: [".", "alt", "alt2"] },
    { what: "a pattern read from './'", patterns: (root: string) => [`.${root}/dotrel/*`], secrets: ["dotrel/f.txt"], ordinary: ["dotrel2/f.txt", "f.txt"], from: [".", "dotrel2"] },
  ];
  for (const { what, patterns, secrets, ordinary, from } of cases) {
    it(`never reads what they classify, and still finds the ordinary files beside it: ${what}`, async () => {
      const { dir: root, cleanup } = realTempDir("tacit-search-classified-");
      try {
        const canary = makeCanary();
        writeTree(root, Object.fromEntries([...secrets.map((file) => [file, `TOKEN ${canary} ${file}\n`]), ...ordinary.map((file) => [file, `TOKEN ordinary ${file}\n`])]));
        const args = ["--quiet", "--classified-paths", patterns(root).join(",")];
        const search = `requestFileSystem(".", (fs) => {
  for (const from of ${JSON.stringify(from)}) for (const m of fs.grepRecursive(from, "TOKEN")) println(from, m.file.slice(${root.length + 1}), m.line);
});`;
        const r = await tacit(root, search, args);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout + r.stderr).not.toContain(canary);
        const below = (at: string, file: string): boolean => at === "." || file.startsWith(`${at}/`);
        const expected = from.flatMap((at) => [...ordinary].sort().filter((file) => below(at, file)).map((file) => `${at} ${file} TOKEN ordinary ${file}`));
        expect(r.stdout.split("\n").filter((line) => line !== "")).toEqual(expected);
        // The premise: each secret is classified (read() refuses it), so the search had to leave it out.
        const read = await tacit(
          root,
          `for (const file of ${JSON.stringify(secrets)}) requestFileSystem(".", (fs) => { try { fs.access(file).read(); println(file, "read"); } catch (e) { println(file, (e as Error).name); } });`,
          args,
        );
        expect(read.stdout + read.stderr).not.toContain(canary);
        expect(read.stdout.split("\n").filter((line) => line !== "")).toEqual(secrets.map((file) => `${file} SecurityError`));
      } finally {
        cleanup();
      }
    }, 60_000);
  }
});
