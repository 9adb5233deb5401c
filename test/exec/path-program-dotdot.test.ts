// A PATH entry with ".." in it (runner/fs/path-programs.ts): the user's shell looks for programs
// where the kernel resolves the entry, which takes ".." from where a link on the way leads, not
// from the link's own place: with proj a link to deep/x, "<dir>/proj/../bin" is deep/bin, not
// <dir>/bin. tacit worked the entry out as text (path.resolve drops "proj/.." before looking at
// the link), protected <dir>/bin, and a script rewrote deep/bin/deploy: the user's next `deploy`
// ran its code. The same for a relative entry ("tools/lib/..": the directory holding where
// tools/lib leads). Through the real CLI, a real Deno, and a real bash.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attempts, expectRefused, lit, makeExecutable, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("a PATH entry whose '..' follows a link", () => {
  it("holds programs where the kernel resolves it, which a script may not rewrite", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-exec-path-dotdot-");
    ctx.onTestFinished(cleanup);
    const program = "#!/bin/sh\necho the real tool\n";
    writeTree(dir, {
      "deep/x/.keep": "",
      "deep/bin/deploy": program,
      "proj": { symlink: path.join(dir, "deep/x") },
      "bin/.keep": "",
      "elsewhere/lib/.keep": "",
      "elsewhere/publish": program,
      "tools/lib": { symlink: path.join(dir, "elsewhere/lib") },
    });
    for (const file of ["deep/bin/deploy", "elsewhere/publish"]) makeExecutable(path.join(dir, file));
    const marker = path.join(dir, "PWNED");
    const PATH = [`${dir}/proj/../bin`, "tools/lib/..", process.env.PATH ?? ""].join(path.delimiter);
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("rewrite deploy", () => fs.access("deep/bin/deploy").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
  attempt("rewrite publish", () => fs.access("elsewhere/publish").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
});
`, [], { PATH, HOME: path.join(dir, "deep") });
    expect(r.code, r.stderr).toBe(0);
    expectRefused(attempts(r.stdout), ["rewrite deploy", "rewrite publish"], /a directory on the user's PATH.*Ask the user to change it/);
    expect(readFileSync(path.join(dir, "deep/bin/deploy"), "utf8")).toBe(program);
    expect(readFileSync(path.join(dir, "elsewhere/publish"), "utf8")).toBe(program);
    // The user types the names, where tacit was started.
    execFileSync("bash", ["-c", "deploy; publish"], { cwd: dir, env: { ...process.env, PATH }, stdio: "ignore" });
    expect(existsSync(marker)).toBe(false);
  });
});
