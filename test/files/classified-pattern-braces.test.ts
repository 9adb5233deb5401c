// A --classified-paths pattern with a brace alternative. The flag's list was split at every
// comma, so `--classified-paths '*.{pem,key}'` became the patterns "*.{pem" and "key}", which
// classify no .pem or .key file: a script read both as plain text with read(), grep() and
// grepRecursive(), where the same pattern in a config file classified them. The list is now
// split at commas outside braces (and not escaped); a brace never closed is refused. Through
// the real CLI, with a real Deno.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const pem = makeCanary();
const key = makeCanary();
const comma = makeCanary();

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-braces-"));
  writeFileSync(path.join(root, "server.pem"), `TOKEN=${pem}\n`);
  writeFileSync(path.join(root, "server.key"), `TOKEN=${key}\n`);
  writeFileSync(path.join(root, "a,b.txt"), `TOKEN=${comma}\n`);
  writeFileSync(path.join(root, "plain.txt"), "TOKEN=none\n");
});
afterAll(() => cleanup());

const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read pem", () => fs.access("server.pem").read());
  attempt("read key", () => fs.access("server.key").read());
  attempt("grep comma", () => fs.grep("a,b.txt", "TOKEN"));
  attempt("grepRecursive", () => fs.grepRecursive(".", "TOKEN").map((m) => m.file.slice(fs.access(".").path.length + 1)));
  attempt("classified flags", () => ["server.pem", "server.key", "a,b.txt", "plain.txt"].map((name) => fs.access(name).isClassified));
});
`;

describe("--classified-paths with a brace alternative and an escaped comma", () => {
  it("classifies every name the alternative and the escaped comma match", async () => {
    const r = await tacit(root, script, ["--classified-paths", ".env,*.{pem,key},a\\,b.txt", "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of ["read pem", "read key", "grep comma"]) expect(attemptOf(found, label).status, label).toBe("SecurityError");
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["plain.txt"] });
    expect(attemptOf(found, "classified flags")).toEqual({ status: "ok", value: [true, true, true, false] });
    for (const canary of [pem, key, comma]) {
      expect(r.stdout).not.toContain(canary);
      expect(r.stderr).not.toContain(canary);
    }
  }, 60_000);

  it("refuses a list with a brace never closed, exit 2, saying how to write it; nothing runs", async () => {
    const r = await tacit(root, script, ["--classified-paths", ".env,*.{pem,key", "--quiet"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has a "{" that is never closed');
    expect(r.stderr).toContain("*.{pem,key}");
    expect(r.stdout).not.toContain("@@");
  }, 60_000);
});
