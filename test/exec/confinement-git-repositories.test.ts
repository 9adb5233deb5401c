// --confine-commands keeps git's configuration and hooks read-only (runner/exec/confinement.ts),
// but a repository's `commondir` names the directory git reads them from instead. A confined `sh`
// wrote `.git/commondir` naming a directory of its own (objects and refs borrowed, a config with
// core.fsmonitor), and the user's next `git status` ran the fsmonitor, unconfined; it rewrote a
// linked worktree's `.git/worktrees/NAME/commondir` the same way, for the user's next git
// command in that worktree. And only a `.git` was guarded: a confined `sh` wrote a pre-receive hook
// into a bare repository in the roots (a project's local remote), and the user's next `git push`
// to it ran the hook, unconfined. Each attack is run through the real CLI and checked by the
// user's own git, run afterwards outside tacit.

import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, confinementDir, type ExecResult, execResults, lit, NOBODY, nobodyCanRunTacit, nobodysProject, realTempDir, tacit, tacitAsNobody, writeTree } from "./fixtures.js";

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, encoding: "utf8", env: { ...process.env, HOME: path.dirname(cwd) } });

/** A shell line that fills `evil` with a repository's objects, refs and HEAD and a config whose fsmonitor touches `proof`, then writes `commondir` naming it. */
function moveConfiguration(commondir: string, proof: string): string {
  const config = `[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${proof}; false"\\n`;
  return `mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/ && printf '${config}' > evil/config && echo "$PWD/evil" > ${commondir}`;
}

describe("a confined command and git's commondir", () => {
  it("cannot move a repository's configuration with a .git/commondir, nor a linked worktree's", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-commondir-");
    writeTree(dir, { "project/readme.txt": "hello\n" });
    const project = path.join(dir, "project");
    const worktree = path.join(dir, "worktree");
    git(project, "init", "-q");
    git(project, "add", "readme.txt");
    git(project, "commit", "-qm", "init");
    git(project, "worktree", "add", "-q", worktree);
    const proofs = { main: path.join(dir, "MAIN_FSMONITOR_RAN"), worktree: path.join(dir, "WORKTREE_FSMONITOR_RAN") };
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh", "git"], (proc) => {
  attempt("main", () => proc.exec("sh", ["-c", ${lit(moveConfiguration(".git/commondir", proofs.main))}]));
  attempt("worktree", () => proc.exec("sh", ["-c", ${lit(moveConfiguration(".git/worktrees/worktree/commondir", proofs.worktree))}]));
  attempt("status", () => proc.exec("git", ["status", "--porcelain"]));
});
`, ["--command-permissions", "sh,git", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    const result = execResults(r.stdout);
    // The user's next git commands, unconfined, run nothing of the script's.
    git(project, "status");
    git(worktree, "status");
    expect(existsSync(proofs.main)).toBe(false);
    expect(existsSync(proofs.worktree)).toBe(false);
    // The main repository's did not exist: made by the command, removed once it ended, and the script told.
    expect(result("main").stderr).toContain(`the command made ${path.join(project, ".git/commondir")}`);
    expect(existsSync(path.join(project, ".git/commondir"))).toBe(false);
    // The worktree's existed: read-only to the command.
    expect(result("worktree").stderr).toContain("Read-only file system");
    expect(readFileSync(path.join(project, ".git/worktrees/worktree/commondir"), "utf8")).toBe("../..\n");
    // git itself still works confined.
    expect(result("status").exitCode).toBe(0);
  });

  it("cannot keep tacit from removing it, run as a user who is not root, by taking the write permission off .git", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok, support.reason);
    const { dir, cleanup } = realTempDir("tacit-commondir-nobody-");
    ctx.onTestFinished(cleanup);
    const where = nobodysProject(dir);
    writeTree(where.project, { "readme.txt": "hello\n" });
    git(where.project, "init", "-q");
    git(where.project, "add", "readme.txt");
    git(where.project, "commit", "-qm", "init");
    const chownAll = (p: string): void => {
      chownSync(p, NOBODY, NOBODY);
      if (statSync(p).isDirectory()) for (const name of readdirSync(p)) chownAll(path.join(p, name));
    };
    chownAll(where.project);
    const proof = path.join(where.project, "FSMONITOR_RAN");
    const attack = `${moveConfiguration(".git/commondir", proof)} && chmod a-w .git`;
    const r = await tacitAsNobody(where, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => attempt("main", () => proc.exec("sh", ["-c", ${lit(attack)}])));
`, ["--confine-commands", "--command-permissions", "sh"]);
    expect(r.code, r.stderr).toBe(0);
    // The user's next git status, as that user, outside tacit.
    execFileSync("/usr/bin/setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "git", "status"], { cwd: where.project, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: where.home } });
    expect(existsSync(proof)).toBe(false);
    const attempt = attemptOf(attempts(r.stdout), "main");
    expect(attempt.status, JSON.stringify(attempt.value)).toBe("ok");
    expect((attempt.value as ExecResult).stderr).toContain("tacit removed it");
    expect(existsSync(path.join(where.project, ".git/commondir"))).toBe(false);
    // The directory's mode is the command's, as it left it.
    expect(statSync(path.join(where.project, ".git")).mode & 0o222).toBe(0);
  });

  it("cannot plant a hook or configuration in a bare repository in the roots", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-commondir-");
    writeTree(dir, { "project/readme.txt": "hello\n" });
    const project = path.join(dir, "project");
    git(project, "init", "-q");
    git(project, "add", "readme.txt");
    git(project, "commit", "-qm", "init");
    git(project, "init", "-q", "--bare", "remote.git");
    git(project, "push", "-q", "remote.git", "HEAD");
    const proofs = { hook: path.join(dir, "HOOK_RAN"), fsmonitor: path.join(dir, "FSMONITOR_RAN") };
    const hook = `printf '#!/bin/sh\\ntouch ${proofs.hook}\\n' > remote.git/hooks/pre-receive && chmod +x remote.git/hooks/pre-receive`;
    const config = `printf '[core]\\n\\tfsmonitor = "touch ${proofs.fsmonitor}; false"\\n' >> remote.git/config`;
    // The repository renamed away and a new one made of its objects, refs and HEAD, with a hook of the script's.
    const replace = `mv remote.git remote-old.git && mkdir -p remote.git/hooks && cp -r remote-old.git/objects remote-old.git/refs remote-old.git/HEAD remote-old.git/config remote.git/ && ${hook}`;
    const configBefore = readFileSync(path.join(project, "remote.git/config"), "utf8");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("hook", () => proc.exec("sh", ["-c", ${lit(hook)}]));
  attempt("config", () => proc.exec("sh", ["-c", ${lit(config)}]));
  attempt("replace", () => proc.exec("sh", ["-c", ${lit(replace)}]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    // The user's next push to it, and a git command in it, run nothing of the script's (whether or not they succeed).
    git(project, "commit", "-q", "--allow-empty", "-m", "next");
    const userRan = spawnSync("git", ["push", "-q", "remote.git", "HEAD"], { cwd: project, encoding: "utf8" });
    spawnSync("git", ["status"], { cwd: path.join(project, "remote.git"), encoding: "utf8" });
    expect(existsSync(proofs.hook)).toBe(false);
    expect(existsSync(proofs.fsmonitor)).toBe(false);
    expect(userRan.status, userRan.stderr).toBe(0);
    expect(readFileSync(path.join(project, "remote.git/config"), "utf8")).toBe(configBefore);
    const found = attempts(r.stdout);
    for (const label of ["hook", "config"]) {
      const attempt = attemptOf(found, label);
      expect(attempt.status, JSON.stringify(attempt.value)).toBe("ok");
      expect((attempt.value as ExecResult).stderr, label).toContain("Read-only file system");
    }
    expect((attemptOf(found, "replace").value as ExecResult).stderr).toContain("Device or resource busy");
    expect(existsSync(path.join(project, "remote-old.git"))).toBe(false);
  });

  it("covers a classified file inside git's hooks directories, which are read-only but were not searched", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-commondir-");
    writeTree(dir, { "project/readme.txt": "hello\n" });
    const project = path.join(dir, "project");
    git(project, "init", "-q");
    git(project, "init", "-q", "--bare", "remote.git");
    const canaries = { main: `canary-main-${Date.now()}`, bare: `canary-bare-${Date.now()}` };
    writeTree(project, { ".git/hooks/.env": `${canaries.main}\n`, "remote.git/hooks/.env": `${canaries.bare}\n` });
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("main", () => proc.exec("sh", ["-c", "cat .git/hooks/.env"]));
  attempt("bare", () => proc.exec("sh", ["-c", "cat remote.git/hooks/.env"]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    for (const canary of Object.values(canaries)) expect(r.stdout + r.stderr).not.toContain(canary);
    const found = attempts(r.stdout);
    for (const label of ["main", "bare"]) expect(attemptOf(found, label).status, label).toBe("ok");
  });

  it("cannot change the hooks a repository's configuration names outside .git (core.hooksPath, husky's scripts)", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-commondir-");
    const runner = `#!/bin/sh\nn=$(basename "$0"); s=$(dirname "$(dirname "$0")")/$n; [ -f "$s" ] || exit 0; sh -e "$s"\n`;
    writeTree(dir, {
      // husky 9's layout: core.hooksPath = .husky/_, whose hooks run the script of the same name in .husky.
      "husky/.husky/pre-commit": "echo lint\n",
      "husky/.husky/_/h": runner,
      "husky/.husky/_/pre-commit": '#!/bin/sh\n. "$(dirname "$0")/h"\n',
      "plain/.githooks/pre-commit": "#!/bin/sh\necho checked\n",
    });
    const proofs = { husky: path.join(dir, "HUSKY_RAN"), plain: path.join(dir, "PLAIN_RAN") };
    for (const [name, hooksPath] of [["husky", ".husky/_"], ["plain", ".githooks"]] as const) {
      const project = path.join(dir, name);
      git(project, "init", "-q");
      git(project, "config", "core.hooksPath", hooksPath);
    }
    execFileSync("chmod", ["+x", path.join(dir, "husky/.husky/_/h"), path.join(dir, "husky/.husky/_/pre-commit"), path.join(dir, "plain/.githooks/pre-commit")]);
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("husky", () => proc.exec("sh", ["-c", ${lit(`echo 'touch ${proofs.husky}' >> husky/.husky/pre-commit`)}]));
  attempt("plain", () => proc.exec("sh", ["-c", ${lit(`echo 'touch ${proofs.plain}' >> plain/.githooks/pre-commit`)}]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    // The user's next commit in each runs nothing of the script's.
    for (const name of ["husky", "plain"]) git(path.join(dir, name), "commit", "-q", "--allow-empty", "-m", "user");
    expect(existsSync(proofs.husky)).toBe(false);
    expect(existsSync(proofs.plain)).toBe(false);
    const found = attempts(r.stdout);
    for (const label of ["husky", "plain"]) {
      const attempt = attemptOf(found, label);
      expect(attempt.status, JSON.stringify(attempt.value)).toBe("ok");
      expect((attempt.value as ExecResult).stderr, label).toContain("Read-only file system");
    }
  });

  it("cannot change what a hook manager's runner reads (pre-commit's configuration)", async (ctx) => {
    const preCommit = findOnPath("pre-commit");
    ctx.skip(preCommit === null, "pre-commit is not installed here");
    const dir = confinementDir(ctx, "tacit-commondir-");
    const config = (entry: string): string =>
      `repos:\n- repo: local\n  hooks:\n  - id: check\n    name: check\n    entry: ${entry}\n    language: system\n    pass_filenames: false\n    always_run: true\n`;
    writeTree(dir, { "project/.pre-commit-config.yaml": config("true"), "cache/.keep": "" });
    const project = path.join(dir, "project");
    git(project, "init", "-q");
    const env = { ...process.env, HOME: dir, PRE_COMMIT_HOME: path.join(dir, "cache") };
    execFileSync(preCommit!, ["install"], { cwd: project, env, stdio: "ignore" });
    const proof = path.join(dir, "PRE_COMMIT_RAN");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("config", () => proc.exec("sh", ["-c", ${lit(`cat > .pre-commit-config.yaml <<'EOF'\n${config(`touch ${proof}`)}EOF\n`)}]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    // The user's next commit of everything, whose pre-commit hook runs what the configuration names (pre-commit refuses an unstaged one).
    spawnSync("git", ["add", "-A"], { cwd: project, env });
    spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "user"], { cwd: project, env });
    expect(existsSync(proof)).toBe(false);
    const attempt = attemptOf(attempts(r.stdout), "config");
    expect(attempt.status, JSON.stringify(attempt.value)).toBe("ok");
    expect((attempt.value as ExecResult).stderr).toContain("Read-only file system");
  });

  it("cannot make the hooks directory a repository's configuration names, nor a missing .git/hooks, where there is none", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-commondir-");
    writeTree(dir, { "project/readme.txt": "hello\n" });
    const project = path.join(dir, "project");
    git(project, "init", "-q");
    git(project, "config", "core.hooksPath", ".githooks");
    // And a second repository, made without a .git/hooks directory.
    writeTree(dir, { "project/sub/readme.txt": "sub\n" });
    const sub = path.join(project, "sub");
    git(sub, "init", "-q");
    rmSync(path.join(sub, ".git/hooks"), { recursive: true });
    const proof = path.join(dir, "HOOK_RAN");
    const subProof = path.join(dir, "SUB_HOOK_RAN");
    const make = `mkdir .githooks && printf '%s\\n' '#!/bin/sh' 'touch ${proof}' > .githooks/pre-commit && chmod +x .githooks/pre-commit`;
    const makeSub = `mkdir sub/.git/hooks && printf '%s\\n' '#!/bin/sh' 'touch ${subProof}' > sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit`;
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("make", () => proc.exec("sh", ["-c", ${lit(make)}]));
  attempt("sub", () => proc.exec("sh", ["-c", ${lit(makeSub)}]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    git(project, "commit", "-q", "--allow-empty", "-m", "user");
    git(sub, "commit", "-q", "--allow-empty", "-m", "user");
    expect(existsSync(proof)).toBe(false);
    expect(existsSync(subProof)).toBe(false);
    expect(existsSync(path.join(sub, ".git/hooks"))).toBe(false);
    expect(existsSync(path.join(project, ".githooks"))).toBe(false);
    const attempt = attemptOf(attempts(r.stdout), "make");
    expect(attempt.status, JSON.stringify(attempt.value)).toBe("ok");
    expect((attempt.value as ExecResult).stderr).toContain(`the command made ${path.join(project, ".githooks")}`);
  });
});

describe("the hooks directory core.hooksPath names, a link that leads nowhere yet", () => {
  // config/githooks linked to ../tools/hooks, not made yet: the link existed, so nothing was to be removed,
  // and its target could not be kept read-only. A confined `sh` made tools/hooks/pre-commit, and
  // the user's next git commit ran it, unconfined.
  it("cannot be given a target by a confined command: what it made there is removed", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-hooks-path-dangling-");
    writeTree(dir, { "project/readme.txt": "hello\n", "project/tools/readme.txt": "tools\n", "project/config/readme.txt": "config\n" });
    const project = path.join(dir, "project");
    git(project, "init", "-q");
    git(project, "add", "readme.txt");
    git(project, "commit", "-qm", "init");
    // In a directory of the root (a link in the root itself refuses every command: see linkInRoot).
    git(project, "config", "core.hooksPath", "config/githooks");
    symlinkSync("../tools/hooks", path.join(project, "config/githooks"));
    const proof = path.join(dir, "PRE_COMMIT_RAN");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => attempt("main", () => proc.exec("sh", ["-c", ${lit(`mkdir tools/hooks && printf '#!/bin/sh\\ntouch ${proof}\\n' > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit`)}])));
`, ["--confine-commands", "--command-permissions", "sh"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    const { exitCode, stderr } = execResults(r.stdout)("main");
    expect(exitCode, stderr).toBe(0);
    spawnSync("git", ["-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "next"], { cwd: project, env: { ...process.env, HOME: dir } });
    expect(existsSync(proof)).toBe(false);
    expect(existsSync(path.join(project, "tools/hooks"))).toBe(false);
    expect(stderr).toContain(`the command made ${path.join(project, "tools/hooks")}`);
  });
});
