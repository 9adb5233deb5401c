// "(", ")" and "|" in a find() or grepRecursive() glob are the characters they are: tacit's globs
// take *, **, ? and […] only. picomatch read them as a regular expression's group and
// alternation, so find(".", "*(1).png") answered with photo1.png and not photo(1).png (the name a
// browser gives a second download), and "a|b.txt" with the files a and b.txt, without a word.
// Through the real CLI, with a real Deno.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-glob-groups-"));
  writeTree(root, {
    "photo(1).png": "needle\n",
    "photo1.png": "needle\n",
    "a|b.txt": "needle\n",
    a: "needle\n",
    "b.txt": "needle\n",
    "src/(gen).ts": "needle\n",
    "src/gen.ts": "needle\n",
  });
});

afterAll(() => cleanup());

describe("a glob with \"(\", \")\" or \"|\"", () => {
  it("matches the names that hold them, in find and grepRecursive", async () => {
    const cases: Array<[string, string[]]> = [
      ["*(1).png", ["photo(1).png"]],
      ["photo(1).png", ["photo(1).png"]],
      ["a|b.txt", ["a|b.txt"]],
      ["src/(gen).ts", ["src/(gen).ts"]],
      ["[(]*", ["src/(gen).ts"]], // a class, as before: names that start with "("
    ];
    const script = `requestFileSystem(".", (fs) => {
  for (const glob of ${JSON.stringify(cases.map(([glob]) => glob))}) {
    const found = fs.find(".", glob).map((p) => p.slice(${root.length + 1})).sort();
    const grepped = fs.grepRecursive(".", "needle", glob).map((m) => m.file.slice(${root.length + 1})).sort();
    println(JSON.stringify({ glob, found, grepped }));
  }
});`;
    const r = await tacit(root, script);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n").map((line) => JSON.parse(line) as { glob: string; found: string[]; grepped: string[] });
    expect(lines.map(({ glob, found }) => [glob, found])).toEqual(cases);
    expect(lines.map(({ glob, grepped }) => [glob, grepped])).toEqual(cases);
  }, 60_000);
});
