// A classified pattern's spaces, as gitignore reads them: a trailing space escaped with a
// backslash is part of the name (`credentials\ ` names "credentials "), and a leading space is
// kept (` notes.key` names " notes.key"). tacit trimmed every pattern (and --classified-paths
// every item), so an operator's `credentials\ ` classified only a file named "credentials\" and
// ` notes.key` only "notes.key": the files they named were read as plain text by read(), grep()
// and grepRecursive(). Each pattern is now matched in both forms. Through the real CLI, with a
// real Deno; and at unit level.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClassifiedPaths, gitignorePattern } from "../../runner/fs/classified-paths.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const trailing = makeCanary();
const leading = makeCanary();

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-spaces-"));
  writeFileSync(path.join(root, "credentials "), `TOKEN=${trailing}\n`);
  writeFileSync(path.join(root, " notes.key"), `TOKEN=${leading}\n`);
  writeFileSync(path.join(root, "plain.txt"), "TOKEN=none\n");
  writeFileSync(path.join(root, "tacit.json"), JSON.stringify({ libraryConfig: { classifiedPaths: [" notes.key", "credentials\\ "] } }));
});
afterAll(() => cleanup());

const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read trailing", () => fs.access("credentials ").read());
  attempt("read leading", () => fs.access(" notes.key").read());
  attempt("grep trailing", () => fs.grep("credentials ", "TOKEN"));
  attempt("grepRecursive", () => fs.grepRecursive(".", "TOKEN").map((m) => m.file.slice(fs.access(".").path.length + 1)));
  attempt("classified flags", () => ["credentials ", " notes.key", "plain.txt"].map((name) => fs.access(name).isClassified));
});
`;

function expectSecretsKept(stdout: string, stderr: string): void {
  const found = attempts(stdout);
  for (const label of ["read trailing", "read leading", "grep trailing"]) expect(attemptOf(found, label).status, label).toBe("SecurityError");
  expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["plain.txt"] });
  expect(attemptOf(found, "classified flags")).toEqual({ status: "ok", value: [true, true, false] });
  for (const canary of [trailing, leading]) {
    expect(stdout).not.toContain(canary);
    expect(stderr).not.toContain(canary);
  }
}

describe("a classified pattern's leading and escaped trailing spaces", () => {
  it("classify the names gitignore reads them as, given in a config file", async () => {
    const r = await tacit(root, script, ["--config", path.join(root, "tacit.json"), "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    expectSecretsKept(r.stdout, r.stderr);
  }, 60_000);

  it("classify them given in --classified-paths (an item's trailing space kept, its leading one after a comma dropped)", async () => {
    const r = await tacit(root, script, ["--classified-paths", "credentials\\ , notes.key,\\ notes.key", "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    expectSecretsKept(r.stdout, r.stderr);
  }, 60_000);

  it("reads spaces as git does, and still matches every pattern trimmed (unit)", () => {
    expect(gitignorePattern("credentials\\ ")).toBe("credentials\\ ");
    expect(gitignorePattern("credentials  ")).toBe("credentials");
    expect(gitignorePattern("a\\  ")).toBe("a\\ ");
    expect(gitignorePattern(" notes.key")).toBe(" notes.key");
    expect(gitignorePattern("secrets/ ")).toBe("secrets");
    const classified = new ClassifiedPaths(["credentials\\ ", " notes.key", " .env "]);
    expect(["/p/credentials ", "/p/ notes.key", "/p/notes.key", "/p/.env", "/p/ .env", "/p/credentials"].map((p) => classified.matches(p))).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
  });
});
