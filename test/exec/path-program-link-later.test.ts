// A link on PATH whose file appears (or becomes executable) after tacit first looked at PATH's
// links (runner/fs/path-programs.ts). tacit lists a PATH directory's links again only when the
// directory's times change, and kept only the links that led to an executable file then: `npm
// link` made /usr/local/bin/<tool> lead into the project's dist/, which the user's build makes
// again while tacit runs (tacit serve runs for hours). Once a script's write of any executable
// file had made tacit look, the file the user's build made there later was no program to it: a
// script rewrote it, and the user's next <tool> ran the script's code. Through the real CLI, a
// real Deno; the test plays the user's build. So for a link on the way that the user points
// elsewhere (`npm link` in another project re-points the global node_modules/<tool>, and leaves
// the link on PATH as it is, the same text).

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeExecutable, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("a link on PATH to a file made after tacit looked at PATH's links", () => {
  it("protects the file once it is an executable program", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-exec-path-link-later-");
    ctx.onTestFinished(cleanup);
    const program = "#!/bin/sh\necho the real tool\n";
    writeTree(dir, { "project/tools/other.sh": "#!/bin/sh\necho other\n", "home/.keep": "" });
    const project = path.join(dir, "project");
    makeExecutable(path.join(project, "tools", "other.sh"));
    const globalBin = path.join(dir, "global", "bin");
    mkdirSync(globalBin, { recursive: true });
    // Dead until the build: the project's dist/ is cleaned.
    symlinkSync(path.join(project, "dist", "cli.sh"), path.join(globalBin, "mytool"));
    const marker = path.join(dir, "PWNED");
    const ready = path.join(project, "ready");
    const PATH = `${globalBin}${path.delimiter}${process.env.PATH ?? ""}`;
    const run = tacit(project, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("other", () => fs.access("tools/other.sh").write("#!/bin/sh\\necho changed\\n"));
  fs.access("ready").write("ready");
  const until = Date.now() + 20000;
  while (!fs.access("dist/cli.sh").exists && Date.now() < until) {}
  attempt("rewritten", () => fs.access("dist/cli.sh").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
});
`, [], { PATH, HOME: path.join(dir, "home") });
    for (let i = 0; i < 400 && !existsSync(ready); i++) await sleep(50);
    expect(existsSync(ready)).toBe(true);
    // The user's build, as tacit runs.
    const cli = path.join(project, "dist", "cli.sh");
    mkdirSync(path.dirname(cli));
    writeFileSync(cli, program);
    makeExecutable(cli);
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "other").status).toBe("ok");
    expectRefused(found, ["rewritten"], /mytool.*a directory on the user's PATH.*leads to it/);
    expect(readFileSync(cli, "utf8")).toBe(program);
    execFileSync("mytool", [], { env: { ...process.env, PATH }, stdio: "ignore" });
    expect(existsSync(marker)).toBe(false);
  }, 60_000);

  it("protects the file a link on the way leads to once the user points it to another project", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-exec-path-link-repointed-");
    ctx.onTestFinished(cleanup);
    const program = "#!/bin/sh\necho the real tool\n";
    writeTree(dir, { "work/a/bin/cli.sh": program, "work/b/bin/cli.sh": program, "work/tools/other.sh": "#!/bin/sh\necho other\n", "home/.keep": "" });
    const work = path.join(dir, "work");
    for (const file of ["a/bin/cli.sh", "b/bin/cli.sh", "tools/other.sh"]) makeExecutable(path.join(work, file));
    const globalModules = path.join(dir, "global", "lib", "node_modules");
    const globalBin = path.join(dir, "global", "bin");
    mkdirSync(globalModules, { recursive: true });
    mkdirSync(globalBin);
    symlinkSync(path.join(work, "a"), path.join(globalModules, "mytool"));
    symlinkSync(path.join("..", "lib", "node_modules", "mytool", "bin", "cli.sh"), path.join(globalBin, "mytool"));
    const marker = path.join(dir, "PWNED");
    const ready = path.join(work, "ready");
    const moved = path.join(work, "moved");
    const PATH = `${globalBin}${path.delimiter}${process.env.PATH ?? ""}`;
    const run = tacit(work, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("a", () => fs.access("a/bin/cli.sh").write("#!/bin/sh\\necho changed\\n"));
  attempt("other", () => fs.access("tools/other.sh").write("#!/bin/sh\\necho changed\\n"));
  fs.access("ready").write("ready");
  const until = Date.now() + 20000;
  while (!fs.access("moved").exists && Date.now() < until) {}
  attempt("b", () => fs.access("b/bin/cli.sh").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
});
`, [], { PATH, HOME: path.join(dir, "home") });
    for (let i = 0; i < 400 && !existsSync(ready); i++) await sleep(50);
    expect(existsSync(ready)).toBe(true);
    // The user's npm link in project b: the global package re-pointed, the link on PATH left as it is.
    symlinkSync(path.join(work, "b"), path.join(globalModules, "mytool.new"));
    renameSync(path.join(globalModules, "mytool.new"), path.join(globalModules, "mytool"));
    writeFileSync(moved, "");
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["a"], /mytool.*leads to it/);
    expect(attemptOf(found, "other").status).toBe("ok");
    expectRefused(found, ["b"], /mytool.*a directory on the user's PATH.*leads to it/);
    expect(readFileSync(path.join(work, "b", "bin", "cli.sh"), "utf8")).toBe(program);
    execFileSync("mytool", [], { env: { ...process.env, PATH }, stdio: "ignore" });
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});
