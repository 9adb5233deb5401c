// A program on the user's PATH that is a link into the allowed roots (runner/fs/path-programs.ts):
// `npm link` makes /usr/local/bin/<tool> such a link, through the global node_modules, to the
// project's own bin file. tacit's file API kept an executable file directly in a PATH directory
// from being rewritten, but not the file such a link leads to, which lies elsewhere in the roots:
// a script rewrote the project's bin/cli.sh (its mode kept), the permitted command `mytool` ran the
// script's code, and so did the user's next `mytool`, unconfined. Through the real CLI, a real Deno.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeExecutable, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("a program on PATH that is a link into the allowed roots", () => {
  it("cannot be rewritten through the file it leads to, so the command and the user run the real one", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-exec-path-link-");
    ctx.onTestFinished(cleanup);
    const program = "#!/bin/sh\necho the real tool\n";
    writeTree(dir, { "project/bin/cli.sh": program, "home/.keep": "" });
    const project = path.join(dir, "project");
    const cli = path.join(project, "bin", "cli.sh");
    makeExecutable(cli);
    // Two links, as npm link makes: the PATH entry, and the global package that is the project.
    const globalModules = path.join(dir, "global", "lib", "node_modules");
    const globalBin = path.join(dir, "global", "bin");
    mkdirSync(globalModules, { recursive: true });
    mkdirSync(globalBin);
    symlinkSync(project, path.join(globalModules, "mytool"));
    symlinkSync(path.join("..", "lib", "node_modules", "mytool", "bin", "cli.sh"), path.join(globalBin, "mytool"));
    const marker = path.join(dir, "PWNED");
    const PATH = `${globalBin}${path.delimiter}${process.env.PATH ?? ""}`;
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("rewritten", () => fs.access("bin/cli.sh").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
  attempt("appended", () => fs.access("bin/cli.sh").append(${lit(`touch ${marker}\n`)}));
  attempt("deleted", () => fs.access("bin/cli.sh").delete());
  attempt("read", () => fs.access("bin/cli.sh").read());
});
attempt("run", () => requestExecPermission(["mytool"], (proc) => proc.exec("mytool", [])));
`, ["--command-permissions", "mytool"], { PATH, HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["rewritten", "appended", "deleted"], /mytool.*a directory on the user's PATH.*leads to it.*Ask the user to change it/);
    expect(attemptOf(found, "read")).toEqual({ status: "ok", value: program });
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(cli, "utf8")).toBe(program);
    // The user types its name.
    execFileSync("mytool", [], { env: { ...process.env, PATH }, stdio: "ignore" });
    expect(existsSync(marker)).toBe(false);
  });
});
