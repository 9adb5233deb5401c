// A classified pattern with "/" written with `//` or `/./` past its first glob (a
// prefix joined to a part that begins with "/", say). tacit names every path normalized, so such
// a pattern matched no path: `<root>/*//token.json` and `**/./private/*` left the files they
// name readable as plain text by read(), grep() and grepRecursive(), with no warning. Each is now
// matched as the path it names too. Through the real CLI, with a real Deno; and at unit level.

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClassifiedPaths } from "../../runner/fs/classified-paths.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const token = makeCanary();
const note = makeCanary();

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-normalized-"));
  mkdirSync(path.join(root, "app"));
  mkdirSync(path.join(root, "docs", "private"), { recursive: true });
  writeFileSync(path.join(root, "app", "token.json"), `{"token":"${token}"}\n`);
  writeFileSync(path.join(root, "docs", "private", "note.txt"), `token ${note}\n`);
  writeFileSync(path.join(root, "plain.txt"), "token none\n");
});
afterAll(() => cleanup());

describe("a classified pattern written with // or /./ past a glob", () => {
  it("classifies the paths it names", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read token", () => fs.access("app/token.json").read());
  attempt("read note", () => fs.access("docs/private/note.txt").read());
  attempt("grep note", () => fs.grep("docs/private/note.txt", "token"));
  attempt("grepRecursive", () => fs.grepRecursive(".", "token").map((m) => m.file.slice(fs.access(".").path.length + 1)));
});
`;
    const r = await tacit(root, script, ["--classified-paths", `.env,${root}/*//token.json,**/./private/*`, "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of ["read token", "read note", "grep note"]) expect(attemptOf(found, label).status, label).toBe("SecurityError");
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["plain.txt"] });
    for (const canary of [token, note]) {
      expect(r.stdout).not.toContain(canary);
      expect(r.stderr).not.toContain(canary);
    }
  }, 60_000);

  it("matches each such pattern normalized, anchored as written (unit)", () => {
    const classified = new ClassifiedPaths(["/w/*//x", "/w/*/./y", "srv//keys", "./top", "**/./private"]);
    expect(["/w/a/x", "/w/a/y", "/srv/keys/k", "/top", "/d/private/n", "/d/top", "/w/x"].map((p) => classified.matches(p))).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});
