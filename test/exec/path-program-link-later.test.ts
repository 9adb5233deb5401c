// A link on PATH whose file appears (or becomes executable) after tacit first looked at PATH's
// links (runner/fs/path-programs.ts). tacit lists a PATH directory's links again only when the
// directory's times change, and kept only the links that led to an executable file then: `npm
// link` made /usr/local/bin/<tool> lead into the project's dist/, which the user's build makes
// again while tacit runs (tacit serve runs for hours). Once a script's write of any executable
// file had made tacit look, the file the user's build made there later was no program to it: a
// script rewrote it, and the user's next <tool> ran the script's code. Through the real CLI, a
// real Deno; the test plays the user's build.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
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
});
