// --confine-commands and a git repository a confined command makes in a directory whose name is not
// UTF-8 (runner/exec/new-repositories.ts). Once a command ends, tacit sets aside each .git it made,
// looking through the directories it made; but it read their names as UTF-8, and "\xff" came back as
// U+FFFD, a path that leads nowhere, so nothing in it was looked at. A confined `sh` made "\xff" a
// repository with a core.fsmonitor, and added it to the project's index (a submodule); the user's
// next `git status` in the project ran git there, and git ran the fsmonitor, unconfined. Such a
// directory is now renamed to a UTF-8 name once the command ends, and what it holds judged.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, confinementDir, lit, makeCanary, tacit } from "./fixtures.js";

const IDENTITY = ["-c", "user.email=test@example.com", "-c", "user.name=test"];

describe("a confined command and a repository in a directory whose name is not UTF-8", () => {
  it("leaves no repository whose configuration the user's next git status runs", async (ctx) => {
    ctx.skip(findOnPath("git") === null, "git is not installed here");
    const dir = confinementDir(ctx, "tacit-exec-not-utf8-repo-");
    const project = path.join(dir, "project");
    const home = path.join(dir, "home");
    const outside = path.join(dir, "outside");
    for (const d of [project, home, outside]) mkdirSync(d);
    const env = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: "1" };
    const git = (args: string[]) => spawnSync("git", args, { cwd: project, env, encoding: "utf8" });
    expect(git(["init", "-q"]).status).toBe(0);
    expect(git([...IDENTITY, "commit", "-q", "--allow-empty", "-m", "init"]).status).toBe(0);
    const proof = path.join(outside, "FSMONITOR_RAN");
    const make = [
      "set -e",
      `d="$(printf '\\377')"`,
      `mkdir "$d"`,
      `cd "$d"`,
      "git init -q",
      `git config core.fsmonitor 'touch ${proof}; false'`,
      "echo x > f",
      "git add f",
      `git ${IDENTITY.join(" ")} commit -q -m x`,
      "cd ..",
      `git add "$d" 2>/dev/null`,
    ].join("\n");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
attempt("make", () => requestExecPermission(["sh"], (p) => p.exec("sh", ["-c", ${lit(make)}])));
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const { status, value } = attemptOf(attempts(r.stdout), "make");
    expect(status, JSON.stringify(value)).toBe("ok");
    expect((value as { exitCode: number }).exitCode, JSON.stringify(value)).toBe(0);
    // The user's next git status in the project, unconfined.
    git(["status", "--short"]);
    expect(existsSync(proof)).toBe(false);
  });

  it("cannot hide a classified file from the next command's walk by renaming its directory to such a name", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-exec-not-utf8-hide-");
    const project = path.join(dir, "project");
    const home = path.join(dir, "home");
    mkdirSync(path.join(project, "app"), { recursive: true });
    mkdirSync(home);
    const canary = makeCanary();
    writeFileSync(path.join(project, "app", ".env"), `API_KEY=${canary}\n`);
    // "\xff" is read back as U+FFFD: the empty decoy made with that name would be listed in its place.
    const hide = `mv app "$(printf '\\377')" && mkdir "$(printf '\\357\\277\\275')"`;
    const read = `cat "$(printf '\\377')/.env" not-utf8-name*/.env`;
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (p) => {
  attempt("hide", () => p.exec("sh", ["-c", ${lit(hide)}]));
  attempt("read", () => p.exec("sh", ["-c", ${lit(read)}]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    expect(attemptOf(attempts(r.stdout), "hide").status).toBe("ok");
  });
});
