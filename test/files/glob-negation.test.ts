// What "!" means in a find() or grepRecursive() glob. A leading "!" matches every entry the rest
// of the glob does not, as `rg -g '!*.min.js'` excludes with it: kept, and now written in the
// interface. Inside a class, "[!a]" is the class of every character but "a", as in a shell and
// fnmatch: picomatch 4 took it as the class of "!" and "a", so find(".", "[!a]*") answered with
// the names that start with "a", the opposite of what was asked, without a word. An escaped
// "\!" is a name's own "!". Through the real CLI, with a real Deno.

import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-glob-negation-"));
  writeTree(root, {
    "a.ts": "needle in a.ts\n",
    "b.js": "needle in b.js\n",
    "!notes.txt": "needle in !notes.txt\n",
    "src/c.ts": "needle in src/c.ts\n",
    "lib/app.min.js": "needle in lib/app.min.js\n",
    "lib/app.js": "needle in lib/app.js\n",
  });
});
afterAll(() => cleanup());

const rel = (paths: unknown): string[] => (paths as string[]).map((p) => path.relative(root, p)).sort();

describe("a glob with '!'", () => {
  it("a leading '!' matches what the rest does not; '[!a]' is every character but 'a'; '\\!' is a name's own '!'", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("find !*.ts", () => fs.find(".", "!*.ts"));
  attempt("find !lib/**", () => fs.find(".", "!lib/**"));
  attempt("grepRecursive !*.min.js", () => fs.grepRecursive(".", "needle", "!*.min.js").map((m) => m.file));
  attempt("find [!a]*", () => fs.find(".", "[!a]*"));
  attempt("grepRecursive [!a]*.ts", () => fs.grepRecursive(".", "needle", "[!a]*.ts").map((m) => m.file));
  attempt("find escaped !", () => fs.find(".", "\\\\!*"));
});
`;
    const r = await tacit(root, script);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    const value = (label: string): string[] => {
      const attempt = attemptOf(found, label);
      expect(attempt.status, `${label}: ${JSON.stringify(attempt.value)}`).toBe("ok");
      return rel(attempt.value);
    };
    // Every entry but the .ts files: directories too, as find() answers with them.
    expect(value("find !*.ts")).toEqual(["!notes.txt", "b.js", "lib", "lib/app.js", "lib/app.min.js", "src"].sort());
    // With "/", matched on the path below the directory searched: everything outside lib.
    expect(value("find !lib/**")).toEqual(["!notes.txt", "a.ts", "b.js", "src", "src/c.ts"].sort());
    expect(value("grepRecursive !*.min.js")).toEqual(["!notes.txt", "a.ts", "b.js", "lib/app.js", "src/c.ts"].sort());
    // Every name that does not start with "a" (picomatch alone gave those that start with "a" or "!").
    expect(value("find [!a]*")).toEqual(["!notes.txt", "b.js", "lib", "src", "src/c.ts"].sort());
    expect(value("grepRecursive [!a]*.ts")).toEqual(["src/c.ts"]);
    expect(value("find escaped !")).toEqual(["!notes.txt"]);
  }, 60_000);
});
