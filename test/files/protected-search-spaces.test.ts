// tacit's own files named with a space or other blank at their end, and a recursive search. A
// search skips tacit's files by patterns made from their paths, and a classified pattern's ends
// were trimmed: the secure output "secure.log " was skipped as "secure.log", so grepRecursive()
// opened it and returned the plaintext tacit had written there for a person (read() refused it).
// Through the real CLI, with a real Deno: a first run prints a classified .env to the sink, a
// second searches the tree.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit } from "./fixtures.js";

const cleanups: Array<() => void> = [];
afterAll(() => cleanups.forEach((cleanup) => cleanup()));

/** A tree of its own for each case: a sink file of one case is none of the other's. */
function tree(canary: string): string {
  const { dir, cleanup } = realTempDir("tacit-protected-blank-");
  cleanups.push(cleanup);
  writeFileSync(path.join(dir, ".env"), `TOKEN=${canary}\n`);
  writeFileSync(path.join(dir, "notes.txt"), "TOKEN=none\n");
  return dir;
}

describe("a secure output whose name ends in a blank", () => {
  it.each([
    ["a space", "secure.log "],
    ["a tab", "secure.log\t"],
  ])("ending in %s is skipped by grepRecursive(), as read() refuses it", async (_what, name) => {
    const canary = makeCanary();
    const root = tree(canary);
    const sink = path.join(root, name);
    const printed = await tacit(root, 'requestFileSystem(".", (fs) => println(fs.readClassified(".env")));', ["--secure-output", sink, "--quiet"]);
    expect(printed.code, printed.stderr).toBe(0);
    // The sink holds the plaintext: what the search must not reach.
    expect(printed.stdout).not.toContain(canary);
    expect(readFileSync(sink, "utf8")).toContain(canary);
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access(${JSON.stringify(name)}).read());
  attempt("grepRecursive", () => fs.grepRecursive(".", "TOKEN").map((m) => m.file.slice(fs.access(".").path.length + 1) + ":" + m.line));
});
`;
    const r = await tacit(root, script, ["--secure-output", sink, "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "read").status).toBe("SecurityError");
    expect(attemptOf(found, "grepRecursive")).toEqual({ status: "ok", value: ["notes.txt:TOKEN=none"] });
    expect(r.stdout).not.toContain(canary);
    expect(r.stderr).not.toContain(canary);
  }, 60_000);
});
