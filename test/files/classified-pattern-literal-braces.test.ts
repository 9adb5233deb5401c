// A classified pattern with "{" or "}" in it, as gitignore reads it: the characters they are.
// picomatch reads braces as an alternation (which tacit keeps: `*.{pem,key}`), and only that:
// a config file's `secret{*.txt` (a brace never closed, which the CLI flag refuses but a
// config file took) classified no name but that very text, and `creds{dev,prod}*` classified
// `credsdev…` and `credsprod…` but not `creds{dev,prod}.json`, a name gitignore's reading of the
// same pattern matches: a script read both files' canaries with read(), grep() and
// grepRecursive(). Either reading classifies now, as for "(", ")" and "|". Through the real CLI,
// with a real Deno.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const unclosed = makeCanary();
const closed = makeCanary();
const alternative = makeCanary();
const files = { unclosed: "secret{prod}.txt", closed: "creds{dev,prod}.json", alternative: "credsdev.json" };

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-literal-braces-"));
  writeFileSync(path.join(root, files.unclosed), `TOKEN=${unclosed}\n`);
  writeFileSync(path.join(root, files.closed), `TOKEN=${closed}\n`);
  writeFileSync(path.join(root, files.alternative), `TOKEN=${alternative}\n`);
  writeFileSync(path.join(root, "plain.txt"), "TOKEN=none\n");
  writeFileSync(path.join(root, "config.json"), JSON.stringify({ libraryConfig: { classifiedPaths: [".env", "secret{*.txt", "creds{dev,prod}*"] } }));
});
afterAll(() => cleanup());

const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  for (const [label, name] of Object.entries(${JSON.stringify(files)})) {
    attempt("read " + label, () => fs.access(name).read());
    attempt("grep " + label, () => fs.grep(name, "TOKEN"));
  }
  attempt("grepRecursive", () => fs.grepRecursive(".", "TOKEN").map((m) => m.file.slice(fs.access(".").path.length + 1)));
  attempt("classified flags", () => [...Object.values(${JSON.stringify(files)}), "plain.txt"].map((name) => fs.access(name).isClassified));
});
`;

describe("a classified pattern with braces, in a config file", () => {
  it("classifies the names it spells with its braces as they are, and those its alternative matches", async () => {
    const r = await tacit(root, script, ["--config", path.join(root, "config.json"), "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of Object.keys(files)) {
      for (const how of ["read", "grep"]) expect(attemptOf(found, `${how} ${label}`).status, `${how} ${label}`).toBe("SecurityError");
    }
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["plain.txt"] });
    expect(attemptOf(found, "classified flags")).toEqual({ status: "ok", value: [true, true, true, false] });
    for (const canary of [unclosed, closed, alternative]) {
      expect(r.stdout).not.toContain(canary);
      expect(r.stderr).not.toContain(canary);
    }
  }, 60_000);
});
