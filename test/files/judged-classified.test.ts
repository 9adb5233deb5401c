// Files whose writes tacit judges by what they would leave (the project's package.json, a
// VS Code task file) may be classified by the operator. Their refusals must then not depend on
// the secret they hold: an append is judged on what is there plus what is appended, so its
// refusal told a script about what is there (its size, to the byte; whether it names a
// folder-open run).

import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

const MIB = 1024 * 1024;

/** husky 4's runner, as its install leaves it in .git/hooks (see hook-managers.test.ts). */
const HUSKY4_RUNNER = readFileSync(path.join(import.meta.dirname, "hook-runners", "husky-4.3.8.pre-commit"), "utf8");

describe("a classified file tacit judges writes to by their content", () => {
  it("a classified project package.json: appends do not tell its size", async () => {
    const { dir, cleanup } = realTempDir("tacit-judged-size-");
    try {
      const canary = makeCanary();
      // A size no script can know: the secret's length varies from run to run.
      const padding = "x".repeat(1000 + Math.floor(Math.random() * 5000));
      const manifest = JSON.stringify({ name: "project", version: "1.0.0", token: canary, note: padding });
      writeTree(dir, { "package.json": manifest });
      const size = Buffer.byteLength(manifest);
      // Greedy: an append of 2^k spaces (still valid JSON) goes through while the file stays
      // under 1 MiB; what went through adds up to 1 MiB minus the size.
      const script = `
requestFileSystem(".", (fs) => {
  const file = fs.access("package.json");
  let appended = 0;
  for (let k = 20; k >= 0; k--) {
    try {
      file.append(" ".repeat(2 ** k));
      appended += 2 ** k;
    } catch {
      // refused
    }
  }
  println("@@inferred\\t" + (${MIB} - appended));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", "package.json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("@@inferred\t");
      expect(r.stdout, "the script worked out the classified file's size").not.toContain(`@@inferred\t${size}\n`);
      expect(readFileSync(path.join(dir, "package.json"), "utf8")).toBe(manifest);
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });

  it("classified task files: whether an append goes through does not tell whether one names a folder-open run", async () => {
    const { dir, cleanup } = realTempDir("tacit-judged-word-");
    try {
      const task = (runOn: string): string =>
        `{\n  "version": "2.0.0",\n  "tasks": [{ "label": "setup", "type": "shell", "command": "true", "runOptions": { "runOn": "${runOn}" } }]\n}\n`;
      // The person's own files, classified: one holds a folder-open task, the other does not.
      writeTree(dir, { "a/.vscode/tasks.json": task("folderOpen"), "b/.vscode/tasks.json": task("default") });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("a", () => fs.access("a/.vscode/tasks.json").append(" "));
  attempt("b", () => fs.access("b/.vscode/tasks.json").append(" "));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", "**/.vscode/tasks.json"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      const [a, b] = [attemptOf(found, "a"), attemptOf(found, "b")];
      expect(a.status, "an append told which classified file names a folder-open run").toBe(b.status);
      // The same words, but for the path each names.
      expect(String(a.value).replaceAll("a/.vscode", "*/.vscode")).toBe(String(b.value).replaceAll("b/.vscode", "*/.vscode"));
      expect(readFileSync(path.join(dir, "a/.vscode/tasks.json"), "utf8")).toBe(task("folderOpen"));
    } finally {
      cleanup();
    }
  });

  it("a classified package.json husky 4's runner reads: whether a write goes through does not tell a guess of its \"husky\" key right", async () => {
    const { dir, cleanup } = realTempDir("tacit-judged-husky-");
    try {
      const secret = makeCanary();
      const hooks = (command: string): string => JSON.stringify({ name: "h4", husky: { hooks: { "pre-commit": command } } });
      const manifest = hooks(`deploy --token ${secret}`);
      execFileSync("git", ["init", "-q", path.join(dir, "h4")]);
      writeTree(dir, { "h4/package.json": manifest });
      writeFileSync(path.join(dir, "h4/.git/hooks/pre-commit"), HUSKY4_RUNNER);
      chmodSync(path.join(dir, "h4/.git/hooks/pre-commit"), 0o755);
      // The script guesses the key twice; the second guess is right (the test's stand-in for a guess it could check).
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("wrong guess", () => fs.access("h4/package.json").write(${JSON.stringify(hooks("deploy --token wrong"))}));
  attempt("right guess", () => fs.access("h4/package.json").write(${JSON.stringify(manifest)}));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", "**/h4/package.json"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      const [wrong, right] = [attemptOf(found, "wrong guess"), attemptOf(found, "right guess")];
      expect(right.status, "a write told the script its guess of the classified key was right").toBe(wrong.status);
      expect(right.value).toEqual(wrong.value);
      expect(readFileSync(path.join(dir, "h4/package.json"), "utf8")).toBe(manifest);
    } finally {
      cleanup();
    }
  });
});
