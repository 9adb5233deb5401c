// A confined command may not leave a git repository where there was none (runner/exec/new-repositories.ts).
// A repository's configuration and hooks are read-only to it where one exists, and tacit's file
// API refuses to make a `.git` at all, but a confined `sh` ran `git init` in the project, in one of
// its directories and in a directory of its own, and set core.fsmonitor in each: the user's next
// `git status` there (or a shell prompt showing git's state) ran it, unconfined. A `.git` file
// naming a repository the command made elsewhere did the same, and a bare repository it made (a
// project's local remote) ran its pre-receive hook at the user's next `git push` to it. Each is run
// through the real CLI and checked by the user's own git, run afterwards outside tacit.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, type CliResult, confinementDir, execResults, lit, NOBODY, nobodyCanRunTacit, nobodysProject, realTempDir, tacit, tacitAsNobody, writeTree } from "./fixtures.js";

const gitArgs = ["-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@example.com"];

/** Makes `cwd` a repository with `file` committed, as the user's own git does. */
function committedRepository(cwd: string, file: string): void {
  for (const args of [["init", "-q"], ["add", file], ["commit", "-qm", "init"]]) spawnSync("git", [...gitArgs, ...args], { cwd });
}

/** The user's own `git status` in `cwd`, after tacit has ended: whatever it says, it must run nothing of the command's. */
function userGitStatus(cwd: string, home: string): void {
  spawnSync("git", [...gitArgs, "status"], { cwd, encoding: "utf8", env: { ...process.env, HOME: home, GIT_CEILING_DIRECTORIES: home } });
}

describe("a confined command and a repository where there was none", () => {
  it("cannot leave one for the user's next git command: each .git it made is set aside, and its stderr says so", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-new-repositories-");
    writeTree(dir, { "project/readme.txt": "hello\n", "project/lib/index.js": "1\n", "project/kept/readme.txt": "kept\n" });
    const project = path.join(dir, "project");
    // A repository that was there before: it stays as it was, and the user pushes from it afterwards.
    const kept = path.join(project, "kept");
    committedRepository(kept, "readme.txt");
    const proof = (name: string): string => path.join(dir, `${name}_FSMONITOR_RAN`);
    const planted = (where: string, name: string): string => `git init -q ${where} && git -C ${where} config core.fsmonitor "touch ${proof(name)}; false"`;
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("project", () => proc.exec("sh", ["-c", ${lit(planted(".", "PROJECT"))}]));
  attempt("lib", () => proc.exec("sh", ["-c", ${lit(planted("lib", "LIB"))}]));
  attempt("new", () => proc.exec("sh", ["-c", ${lit(`mkdir -p new/deeper && ${planted("new/deeper", "NEW")}`)}]));
  attempt("file", () => proc.exec("sh", ["-c", ${lit(`mkdir -p linked/src && ${planted("linked/src", "FILE")} && mv linked/src/.git linked/repo && printf 'gitdir: %s/linked/repo\\n' "$PWD" > linked/src/.git`)}]));
  attempt("bare", () => proc.exec("sh", ["-c", ${lit(`git init -q --bare remote.git && printf '#!/bin/sh\\ntouch ${proof("BARE")}\\n' > remote.git/hooks/pre-receive && chmod +x remote.git/hooks/pre-receive`)}]));
});
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    const result = execResults(r.stdout);
    // The user's next git commands, unconfined, run nothing of the command's.
    for (const where of [project, path.join(project, "lib"), path.join(project, "new/deeper"), path.join(project, "linked/src"), path.join(project, "kept")]) {
      userGitStatus(where, dir);
    }
    spawnSync("git", [...gitArgs, "push", "-q", path.join(project, "remote.git"), "HEAD:refs/heads/main"], { cwd: kept, env: { ...process.env, HOME: dir } });
    for (const name of ["PROJECT", "LIB", "NEW", "FILE", "BARE"]) expect(existsSync(proof(name)), name).toBe(false);
    // Each .git made is set aside, not lost, and the command's stderr names it and says what to do.
    const setAside = [
      ["project", "."],
      ["lib", "lib"],
      ["new", "new/deeper"],
      ["file", "linked/src"],
    ] as const;
    for (const [label, where] of setAside) {
      const made = path.join(project, where, ".git");
      expect(existsSync(made), where).toBe(false);
      expect(existsSync(`${made}.tacit-unjudged`), where).toBe(true);
      const { exitCode, stderr } = result(label);
      expect(exitCode, `${label}: ${stderr}`).toBe(0);
      expect(stderr).toContain("the command made a git repository where there was none:");
      expect(stderr).toContain(`${made} (set aside as ${made}.tacit-unjudged)`);
      expect(stderr).toContain("ask the user to make the repository (git init, git clone), or to check what was set aside and move it back");
    }
    expect(readFileSync(path.join(project, "linked/src/.git.tacit-unjudged"), "utf8")).toBe(`gitdir: ${path.join(project, "linked/repo")}\n`);
    // A repository by its shape (the bare one, and each .git directory set aside, which git run inside it takes for
    // one) has its configuration and hooks set aside too.
    for (const repository of ["remote.git", ".git.tacit-unjudged", "lib/.git.tacit-unjudged", "new/deeper/.git.tacit-unjudged"]) {
      for (const control of ["config", "hooks"]) {
        const made = path.join(project, repository, control);
        expect(existsSync(made), made).toBe(false);
        expect(existsSync(`${made}.tacit-unjudged`), made).toBe(true);
      }
    }
    expect(result("bare").stderr).toContain(`${path.join(project, "remote.git/hooks")} (set aside as ${path.join(project, "remote.git/hooks")}.tacit-unjudged)`);
    // The repository that was there stays where it was, and no note names it.
    expect(existsSync(path.join(project, "kept/.git/HEAD"))).toBe(true);
    expect(r.stdout).not.toContain(path.join(project, "kept/.git"));
  });
});

describe("a confined command that makes a directory the walk listed unreachable", () => {
  // A walked directory under one the command replaced by a file: its stat threw ENOTDIR in tacit's
  // check after the command, which ended tacit there, and the .git the command made was left.
  it("still has the .git it made set aside, and tacit goes on", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-new-repositories-unreachable-");
    writeTree(dir, { "project/a/b/readme.txt": "hello\n" });
    const project = path.join(dir, "project");
    const proof = path.join(dir, "FSMONITOR_RAN");
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("made", () => proc.exec("sh", ["-c", ${lit(`rm -rf a && touch a && git init -q new && git -C new config core.fsmonitor "touch ${proof}; false"`)}]));
});
console.log("went on");
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("went on");
    userGitStatus(path.join(project, "new"), dir);
    expect(existsSync(proof)).toBe(false);
    expect(existsSync(path.join(project, "new/.git"))).toBe(false);
    expect(execResults(r.stdout)("made").stderr).toContain(`${path.join(project, "new/.git")} (set aside as ${path.join(project, "new/.git")}.tacit-unjudged)`);
  });
});

describe("a bare repository whose hooks were set aside", () => {
  // A first command made remote.git, whose hooks tacit set aside; a second one moved them back. The
  // directory was a repository by then, so nothing was set aside again, and a missing hooks
  // directory was undone only in a .git: the user's next push to it ran the pre-receive, unconfined.
  it("does not get them back from a later command", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-new-repositories-again-");
    writeTree(dir, { "project/readme.txt": "hello\n", "source/readme.txt": "source\n" });
    const project = path.join(dir, "project");
    const source = path.join(dir, "source");
    committedRepository(source, "readme.txt");
    const proof = path.join(dir, "PRE_RECEIVE_RAN");
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("bare", () => proc.exec("sh", ["-c", ${lit(`git init -q --bare remote.git && printf '#!/bin/sh\\ntouch ${proof}\\n' > remote.git/hooks/pre-receive && chmod +x remote.git/hooks/pre-receive`)}]));
  attempt("back", () => proc.exec("sh", ["-c", "mv remote.git/hooks.tacit-unjudged remote.git/hooks && mv remote.git/config.tacit-unjudged remote.git/config"]));
});
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    const result = execResults(r.stdout);
    expect(result("back").exitCode, result("back").stderr).toBe(0);
    spawnSync("git", [...gitArgs, "push", "-q", path.join(project, "remote.git"), "HEAD:refs/heads/main"], { cwd: source, env: { ...process.env, HOME: dir } });
    expect(existsSync(proof)).toBe(false);
    for (const control of ["hooks", "config"]) expect(existsSync(path.join(project, "remote.git", control)), control).toBe(false);
    expect(result("back").stderr).toContain(`${path.join(project, "remote.git/hooks")}, ${path.join(project, "remote.git/config")}`);
  });
});

/** A shell line that waits (up to 30 s) for `file` to exist: one run's command waits there for the other's. */
const waitFor = (file: string): string => `i=0; while [ ! -e ${file} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done`;

/**
 * Two tacit runs in `project` (HOME `home`), each a confined sh running its command (the attempt
 * "run"): the second starts once the first's command has made A_MADE; both must end well.
 */
async function racedRuns(project: string, home: string, first: string, second: string): Promise<[CliResult, CliResult]> {
  const a = confinedSh(project, home, first);
  for (let i = 0; i < 400 && !existsSync(path.join(project, "A_MADE")); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  const runs: [CliResult, CliResult] = await Promise.all([a, confinedSh(project, home, second)]);
  for (const run of runs) expect(run.code, run.stderr).toBe(0);
  return runs;
}

/** A tacit run in `project` (HOME `home`) whose script runs `command` with a confined sh, reported as the attempt "run". */
function confinedSh(project: string, home: string, command: string): ReturnType<typeof tacit> {
  return tacit(project, `${ATTEMPT_PRELUDE}\nrequestExecPermission(["sh"], (proc) => { attempt("run", () => proc.exec("sh", ["-c", ${lit(command)}])); });\n`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home });
}

describe("a .git that another tacit run's command made, which this command's walk saw", () => {
  // Run A's command made X/.git and waited; run B's walk saw it there. A's .git was set aside once
  // A's command ended, and B's command then made X/.git anew with a core.fsmonitor: B took it for
  // the one that was there before, and left it for the user's next git status.
  it("is not taken for the one that was there: made again in its place, it is set aside", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-new-repositories-race-");
    writeTree(dir, { "project/X/readme.txt": "hello\n" });
    const project = path.join(dir, "project");
    const proof = path.join(dir, "FSMONITOR_RAN");
    const [a, b] = await racedRuns(project, dir, `git init -q X && touch A_MADE && ${waitFor("B_STARTED")}`, `touch B_STARTED && ${waitFor("X/.git.tacit-unjudged")} && git init -q X && git -C X config core.fsmonitor "touch ${proof}; false"`);
    expect(execResults(a.stdout)("run").stderr).toContain(`${path.join(project, "X/.git")} (set aside as ${path.join(project, "X/.git")}.tacit-unjudged)`);
    userGitStatus(path.join(project, "X"), dir);
    expect(existsSync(proof)).toBe(false);
    expect(existsSync(path.join(project, "X/.git"))).toBe(false);
    expect(execResults(b.stdout)("run").stderr).toContain(`${path.join(project, "X/.git")} (set aside as ${path.join(project, "X/.git")}.tacit-unjudged.1)`);
  });
});

describe("a bare repository that another tacit run's command made, which this command's walk saw", () => {
  // Run A's command made remote.git (bare) and waited; run B's walk saw it, a repository with its
  // hooks. A's hooks were set aside once A's command ended, and B's command made remote.git/hooks
  // anew with a pre-receive: remote.git had been a repository with hooks, so B left them.
  it("does not keep hooks made in place of those set aside", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-new-repositories-bare-race-");
    writeTree(dir, { "project/readme.txt": "hello\n", "source/readme.txt": "source\n" });
    const project = path.join(dir, "project");
    const source = path.join(dir, "source");
    committedRepository(source, "readme.txt");
    const proof = path.join(dir, "PRE_RECEIVE_RAN");
    const [, b] = await racedRuns(project, dir, `git init -q --bare remote.git && touch A_MADE && ${waitFor("B_STARTED")}`, `touch B_STARTED && ${waitFor("remote.git/hooks.tacit-unjudged")} && mkdir remote.git/hooks && printf '#!/bin/sh\\ntouch ${proof}\\n' > remote.git/hooks/pre-receive && chmod +x remote.git/hooks/pre-receive`);
    expect(execResults(b.stdout)("run").exitCode).toBe(0);
    spawnSync("git", [...gitArgs, "push", "-q", path.join(project, "remote.git"), "HEAD:refs/heads/main"], { cwd: source, env: { ...process.env, HOME: dir } });
    expect(existsSync(proof)).toBe(false);
    expect(existsSync(path.join(project, "remote.git/hooks"))).toBe(false);
    expect(execResults(b.stdout)("run").stderr).toContain(`${path.join(project, "remote.git/hooks")} (set aside as ${path.join(project, "remote.git/hooks")}.tacit-unjudged.1)`);
  });
});

describe("a repository made under node_modules", () => {
  // node_modules was left alone, as no one runs git there; but the project's own `git status` runs
  // git in each submodule of its index, and a confined command may write the index: it made
  // node_modules/evil a repository with a core.fsmonitor and added it as one.
  it("is set aside too: the project's git status runs nothing of the command's", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-new-repositories-node-modules-");
    writeTree(dir, { "project/.gitignore": "node_modules\n", "project/node_modules/dep/index.js": "1\n" });
    const project = path.join(dir, "project");
    committedRepository(project, ".gitignore");
    const proof = path.join(dir, "FSMONITOR_RAN");
    const evil = "node_modules/evil";
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("submodule", () => proc.exec("sh", ["-c", ${lit(
    `git init -q ${evil} && git -C ${evil} -c user.name=t -c user.email=t@example.com commit --allow-empty -qm x && ` +
      `git -C ${evil} config core.fsmonitor "touch ${proof}; false" && git update-index --add --cacheinfo "160000,$(git -C ${evil} rev-parse HEAD),${evil}"`,
  )}]));
});
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    const { exitCode, stderr } = execResults(r.stdout)("submodule");
    expect(exitCode, stderr).toBe(0);
    userGitStatus(project, dir);
    expect(existsSync(proof)).toBe(false);
    expect(stderr).toContain(`${path.join(project, evil, ".git")} (set aside as ${path.join(project, evil, ".git")}.tacit-unjudged)`);
  });
});

describe("a confined command still running when the script's time limit ends tacit", () => {
  // tacit killed the command at its exit, but undid nothing it had made: the .git with its
  // core.fsmonitor was left for the user's next git status.
  it("has the .git it made set aside as tacit exits, and tacit's stderr says so", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-new-repositories-time-limit-");
    writeTree(dir, { "project/readme.txt": "hello\n" });
    const project = path.join(dir, "project");
    const proof = path.join(dir, "FSMONITOR_RAN");
    const r = await tacit(
      project,
      `requestExecPermission(["sh"], (proc) => proc.exec("sh", ["-c", ${lit(`git init -q X && git -C X config core.fsmonitor "touch ${proof}; false" && sleep 60`)}]));\n`,
      ["--command-permissions", "sh", "--confine-commands", "--exec-timeout-ms", "3000"],
      { HOME: dir },
    );
    expect(r.code, r.stderr).toBe(124);
    userGitStatus(path.join(project, "X"), dir);
    expect(existsSync(proof)).toBe(false);
    expect(existsSync(path.join(project, "X/.git"))).toBe(false);
    expect(existsSync(path.join(project, "X/.git.tacit-unjudged/config.tacit-unjudged"))).toBe(true);
    expect(r.stderr).toContain(`${path.join(project, "X/.git")} (set aside as ${path.join(project, "X/.git")}.tacit-unjudged)`);
  });
});

describe("a confined command run as a user who is not root", () => {
  // tacit runs as the user the command runs as: with the write permission taken off the directory
  // holding the .git, its rename failed (EACCES), the note said so to the script alone, and the
  // user's next git status there ran the command's core.fsmonitor.
  it("cannot keep its .git from being set aside by taking the write permission off its directory", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok, support.reason);
    const { dir, cleanup } = realTempDir("tacit-new-repositories-nobody-", "/var/tmp");
    ctx.onTestFinished(cleanup);
    const where = nobodysProject(dir);
    const proof = path.join(where.project, "FSMONITOR_RAN");
    const r = await tacitAsNobody(
      where,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => attempt("main", () => proc.exec("sh", ["-c", ${lit(`git init -q X && git -C X config core.fsmonitor "touch ${proof}; false" && chmod a-w X`)}])));
`,
      ["--confine-commands", "--command-permissions", "sh"],
    );
    expect(r.code, r.stderr).toBe(0);
    const { exitCode, stderr } = execResults(r.stdout)("main");
    expect(exitCode, stderr).toBe(0);
    // The user's next git status there, as that user, outside tacit.
    spawnSync("/usr/bin/setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "git", "status"], {
      cwd: path.join(where.project, "X"),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: where.home },
    });
    expect(existsSync(proof)).toBe(false);
    expect(stderr).toContain(`${path.join(where.project, "X/.git")} (set aside as ${path.join(where.project, "X/.git")}.tacit-unjudged)`);
    // The directory's mode is the command's, as it left it.
    expect(statSync(path.join(where.project, "X")).mode & 0o222).toBe(0);
  });
});

describe("a confined command run as a user who is not root, and a directory it made unreadable", () => {
  // The command took the read permission off A (chmod 311: still searchable) over the A/B/.git it
  // made: tacit, run as the same user, could not list A, said so to the script alone, and the
  // user's next git status in A/B ran the command's core.fsmonitor.
  it("still has the .git in it set aside, and the directory's mode put back", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok, support.reason);
    const { dir, cleanup } = realTempDir("tacit-new-repositories-unreadable-", "/var/tmp");
    ctx.onTestFinished(cleanup);
    const where = nobodysProject(dir);
    const proof = path.join(where.project, "FSMONITOR_RAN");
    const r = await tacitAsNobody(
      where,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => attempt("main", () => proc.exec("sh", ["-c", ${lit(`mkdir -p A/B && git init -q A/B && git -C A/B config core.fsmonitor "touch ${proof}; false" && chmod 311 A`)}])));
`,
      ["--confine-commands", "--command-permissions", "sh"],
    );
    expect(r.code, r.stderr).toBe(0);
    const { exitCode, stderr } = execResults(r.stdout)("main");
    expect(exitCode, stderr).toBe(0);
    spawnSync("/usr/bin/setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "git", "status"], {
      cwd: path.join(where.project, "A/B"),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: where.home },
    });
    expect(existsSync(proof)).toBe(false);
    expect(stderr).toContain(`${path.join(where.project, "A/B/.git")} (set aside as ${path.join(where.project, "A/B/.git")}.tacit-unjudged)`);
    expect(statSync(path.join(where.project, "A")).mode & 0o777).toBe(0o311);
  });
});

describe("a confined command that makes a long package.json unreachable", () => {
  // The project's a/package.json, too long for tacit to keep a copy of (over 1 MiB), is judged by
  // its stat after the command: with a made a file, that stat threw ENOTDIR and ended tacit before
  // the new repositories were looked for, and the .git the command made was left.
  it("still has the .git it made set aside", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-new-repositories-long-manifest-");
    writeTree(dir, { "project/a/package.json": JSON.stringify({ name: "a", description: "x".repeat(1536 * 1024) }) });
    const project = path.join(dir, "project");
    const proof = path.join(dir, "FSMONITOR_RAN");
    const r = await tacit(
      project,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("made", () => proc.exec("sh", ["-c", ${lit(`rm -rf a && touch a && git init -q new && git -C new config core.fsmonitor "touch ${proof}; false"`)}]));
});
`,
      ["--command-permissions", "sh", "--confine-commands"],
      { HOME: dir },
    );
    expect(r.code, r.stderr).toBe(0);
    userGitStatus(path.join(project, "new"), dir);
    expect(existsSync(proof)).toBe(false);
    expect(execResults(r.stdout)("made").stderr).toContain(`${path.join(project, "new/.git")} (set aside as ${path.join(project, "new/.git")}.tacit-unjudged)`);
  });
});
