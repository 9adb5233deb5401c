// An args rule that asks cannot be dodged by moving the subcommand: with
// `{ command: "git", args: "push*", tier: "always-ask" }` and nobody to ask, `git -C . push`
// and `git -c alias.p=push p` are refused with the approval message like a plain `git push`
// (a security review pushed through both), while `git status` runs. Checked against a real
// repository and remote: the remote receives nothing.

import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { unattended, type World, worlds } from "./fixtures.js";

const world = worlds("tacit-args-bypass-");

function git(cwd: string, args: string[]): string {
  return execFileSync("git", ["-c", "user.name=tacit test", "-c", "user.email=test@tacit.invalid", ...args], { cwd, encoding: "utf8" });
}

/** Script text: prints each labelled attempt's result, or that it was refused and why. */
const ATTEMPT = `
function attempt(label: string, run: () => unknown): void {
  try {
    println(label, "=>", JSON.stringify(run()));
  } catch (e) {
    println(label, "refused:", e instanceof SecurityError, (e as Error).message);
  }
}
`;

/** A refusal for want of a person to ask, as an unattended run gives it to the script (of any command, of git). */
const ASKED = /refused: true exec .*: refused: the policy requires a person's approval \(always-ask\), and no one could be asked/;
const ASKED_GIT = /refused: true exec git .*: refused: the policy requires a person's approval \(always-ask\), and no one could be asked/;

/** The line an attempt printed for `label` (see ATTEMPT), if it printed one. */
function lineOf(stdout: string, label: string): string | undefined {
  return stdout.split("\n").find((l) => l.startsWith(`${label} `));
}

const SCRIPT = `${ATTEMPT}requestExecPermission(["git"], (p) => {
  attempt("direct push", () => p.exec("git", ["push", "origin", "HEAD:refs/heads/direct"]).exitCode);
  attempt("-C push", () => p.exec("git", ["-C", ".", "push", "origin", "HEAD:refs/heads/via-C"]).exitCode);
  attempt("alias push", () => p.exec("git", ["-c", "alias.p=push", "p", "origin", "HEAD:refs/heads/via-alias"]).exitCode);
  attempt("status", () => p.exec("git", ["status", "--porcelain"]).exitCode);
});
`;

/** A repository in the world's working directory with one empty commit, and a bare remote "origin". */
function repositoryWithRemote(w: World): string {
  const remote = path.join(w.root, "remote.git");
  git(w.root, ["init", "-q", "--bare", remote]);
  git(w.work, ["init", "-q"]);
  git(w.work, ["commit", "-q", "--allow-empty", "-m", "start"]);
  git(w.work, ["remote", "add", "origin", remote]);
  return remote;
}

describe("an args rule on git push, no terminal", () => {
  it("refuses git -C . push and git -c alias.p=push p with the approval message, runs git status; the remote gets nothing", async () => {
    const w = world();
    const remote = repositoryWithRemote(w);
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["git"] },
    });
    const run = await unattended(w, ["run", "--config", config, w.script(SCRIPT)]);
    expect(run.code, run.all).toBe(0);
    for (const label of ["direct push", "-C push", "alias push"]) {
      const line = lineOf(run.stdout, label);
      expect(line, `${label}: ${run.all}`).toMatch(ASKED_GIT);
      expect(line, label).toContain("--yes");
      // Named by the rule itself: no word about other programs.
      expect(line, label).not.toContain("is asked about under the rule");
    }
    expect(run.stdout).toContain("status => 0");
    expect(run.prompts).toBe(0);
    // Nothing reached the remote.
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
  });

  it("refuses an option the rule names wherever it stands, and abbreviated: git push … --force, git push --mir", async () => {
    // git takes options after the repository and refspec, and a long option by any unambiguous
    // beginning: a rule on "push --force*" matched `git push --force origin x` only, and one on
    // "push --mirror*" not `--mir`. A review force-pushed over the remote's main, and mirrored
    // (deleting its other branches), with no one asked.
    const w = world();
    const remote = repositoryWithRemote(w);
    git(w.work, ["push", "-q", "origin", "HEAD:refs/heads/main", "HEAD:refs/heads/keep"]);
    git(w.work, ["commit", "-q", "--amend", "--allow-empty", "-m", "rewritten"]);
    const before = git(remote, ["for-each-ref", "--format=%(refname) %(objectname)"]);
    const config = w.config(
      [
        { action: "exec", command: "git", args: "push --force*", tier: "always-ask" },
        { action: "exec", command: "git", args: "push --mirror*", tier: "always-ask" },
      ],
      { libraryConfig: { commandPermissions: ["git"] } },
    );
    const script = `${ATTEMPT}requestExecPermission(["git"], (p) => {
  attempt("force first", () => p.exec("git", ["push", "--force", "origin", "HEAD:refs/heads/main"]).exitCode);
  attempt("force last", () => p.exec("git", ["push", "origin", "HEAD:refs/heads/main", "--force"]).exitCode);
  attempt("mirror abbreviated", () => p.exec("git", ["push", "--mir", "origin"]).exitCode);
  attempt("plain push", () => p.exec("git", ["push", "origin", "HEAD:refs/heads/plain"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    for (const label of ["force first", "force last", "mirror abbreviated"]) {
      const line = lineOf(run.stdout, label);
      expect(line, `${label}: ${run.all}`).toMatch(ASKED_GIT);
    }
    expect(run.stdout).toContain("plain push => 0");
    // The remote's branches are as they were, beside the plain push's new one.
    const after = git(remote, ["for-each-ref", "--format=%(refname) %(objectname)"]);
    expect(after.split("\n").filter((l) => !l.startsWith("refs/heads/plain ")).join("\n")).toBe(before);
  });
});

describe("option words in an args rule, written as git takes them", () => {
  // git deletes the remote ref of a refspec with no source, as --delete does, and forces the
  // update of a ref whose refspec starts with "+", as --force does for all: `git push origin
  // :refs/heads/keep` removed the remote's branch past an always-ask rule on "push --delete*",
  // and `git push origin +HEAD:main` rewrote the remote's main past one on "push --force*", with
  // no one asked.
  it.each([
    { form: "a deleting refspec (:ref)", args: "push --delete*", refspec: ":refs/heads/keep", before: [["push", "-q", "origin", "HEAD:refs/heads/keep"]] },
    {
      form: "a forced refspec (+ref)",
      args: "push --force*",
      refspec: "+HEAD:refs/heads/main",
      before: [["push", "-q", "origin", "HEAD:refs/heads/main"], ["commit", "-q", "--amend", "--allow-empty", "-m", "rewritten"]],
    },
  ])("refuses $form under a rule on $args", async ({ form, args, refspec, before: setUp }) => {
    const w = world();
    const remote = repositoryWithRemote(w);
    for (const command of setUp) git(w.work, command);
    const before = git(remote, ["for-each-ref", "--format=%(refname) %(objectname)"]);
    const config = w.config([{ action: "exec", command: "git", args, tier: "always-ask" }], { libraryConfig: { commandPermissions: ["git"] } });
    const script = `${ATTEMPT}requestExecPermission(["git"], (p) => {
  attempt(${JSON.stringify(form)}, () => p.exec("git", ["push", "origin", ${JSON.stringify(refspec)}]).exitCode);
  attempt("plain push", () => p.exec("git", ["push", "-q", "origin", "HEAD:refs/heads/plain"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    expect(lineOf(run.stdout, form), run.all).toMatch(ASKED_GIT);
    expect(run.stdout).toContain("plain push => 0");
    // The bad thing: the remote's refs changed with no one asked.
    const after = git(remote, ["for-each-ref", "--format=%(refname) %(objectname)"]);
    expect(after.split("\n").filter((l) => !l.startsWith("refs/heads/plain ")).join("\n")).toBe(before);
  });

  it("refuses a short option bundled or standing for the long one, and a long one abbreviated under a leading *", async () => {
    // A fourth review force-pushed past three rules that ask: "push -f*" with `-qf` (short
    // options bundle), "push --force*" with `-f` (the short form of --force) and "*--force*"
    // with `--forc` (the abbreviation was recognised only for words starting with "--").
    const w = world();
    const remote = repositoryWithRemote(w);
    git(w.work, ["push", "-q", "origin", "HEAD:refs/heads/a", "HEAD:refs/heads/b", "HEAD:refs/heads/c"]);
    git(w.work, ["commit", "-q", "--amend", "--allow-empty", "-m", "rewritten"]);
    const before = git(remote, ["for-each-ref", "--format=%(refname) %(objectname)"]);
    const rules = (args: string) => w.config([{ action: "exec", command: "git", args, tier: "always-ask" }], { libraryConfig: { commandPermissions: ["git"] } });
    const cases: Array<[string, string, string[]]> = [
      ["push -f*", "bundled", ["push", "-qf", "origin", "HEAD:refs/heads/a"]],
      ["push --force*", "short form", ["push", "-f", "origin", "HEAD:refs/heads/b"]],
      ["*--force*", "abbreviated", ["push", "--forc", "origin", "HEAD:refs/heads/c"]],
    ];
    const lines: string[] = [];
    for (const [args, label, argv] of cases) {
      const script = `${ATTEMPT}requestExecPermission(["git"], (p) => {
  attempt(${JSON.stringify(label)}, () => p.exec("git", ${JSON.stringify(argv)}).exitCode);
  attempt("plain push", () => p.exec("git", ["push", "-q", "origin", "HEAD:refs/heads/plain"]).exitCode);
});
`;
      const run = await unattended(w, ["run", "--config", rules(args), w.script(script)]);
      expect(run.code, run.all).toBe(0);
      expect(run.stdout).toContain("plain push => 0");
      lines.push(`${args}: ${lineOf(run.stdout, label) ?? run.all}`);
    }
    expect(lines.filter((line) => !ASKED_GIT.test(line)), "ran without a question").toEqual([]);
    const after = git(remote, ["for-each-ref", "--format=%(refname) %(objectname)"]);
    expect(after.split("\n").filter((l) => !l.startsWith("refs/heads/plain ")).join("\n")).toBe(before);
  });
});

describe("a rule on a command, run through another that runs it", () => {
  it("refuses env VAR=x git push, nice git push, timeout 60 git push and xargs git (push on its input) like git push; env git status runs", async () => {
    // With env, nice and timeout permitted beside git (--command-permissions), a fourth review
    // pushed past { command: "git", args: "push*" }: the rule saw the command "env", not git.
    // With nothing after the command's name, the rest may come from elsewhere (xargs's input).
    const w = world();
    const remote = repositoryWithRemote(w);
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["git", "env", "nice", "timeout", "xargs"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["env", "nice", "timeout", "xargs"], (p) => {
  attempt("env push", () => p.exec("env", ["GIT_TRACE=0", "git", "push", "origin", "HEAD:refs/heads/via-env"]).exitCode);
  attempt("nice push", () => p.exec("nice", ["-n", "1", "git", "push", "origin", "HEAD:refs/heads/via-nice"]).exitCode);
  attempt("timeout push", () => p.exec("timeout", ["60", "/usr/bin/git", "push", "origin", "HEAD:refs/heads/via-timeout"]).exitCode);
  attempt("xargs push", () => p.exec("xargs", ["git"], { input: "push origin HEAD:refs/heads/via-xargs" }).exitCode);
  attempt("env status", () => p.exec("env", ["git", "status", "--porcelain"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const lines = ["env push", "nice push", "timeout push", "xargs push"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    expect(run.stdout).toContain("env status => 0");
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
  });
});

describe("a rule on a command, run through a program that reads a command line or code", () => {
  it("refuses git push through sh -c with quotes, env -S with its escapes, xargs with options after git, awk's system() and a git alias run by a shell", async () => {
    // A fifth review pushed past { command: "git", args: "push*" } with sh, env, xargs and awk
    // permitted beside git: `sh -c "'git' push"` (the quoted name is no word "git"), `env -S
    // 'git\_push'` (env's own escapes), `xargs git --no-pager` (push on its input) and
    // `awk 'BEGIN{system("git push")}'` (awk is not a runner, so it was never looked into).
    const w = world();
    const remote = repositoryWithRemote(w);
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["git", "env", "sh", "xargs", "awk"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["env", "sh", "xargs", "awk"], (p) => {
  attempt("sh quoted push", () => p.exec("sh", ["-c", "'git' push origin HEAD:refs/heads/via-sh"]).exitCode);
  attempt("env -S push", () => p.exec("env", ["-S", "git\\\\_push\\\\_origin\\\\_HEAD:refs/heads/via-env-s"]).exitCode);
  attempt("xargs push", () => p.exec("xargs", ["git", "--no-pager"], { input: "push origin HEAD:refs/heads/via-xargs" }).exitCode);
  attempt("awk push", () => p.exec("awk", ['BEGIN{system("git push origin HEAD:refs/heads/via-awk")}']).exitCode);
  attempt("env alias push", () => p.exec("env", ["git", "-c", "alias.x=!sh -c 'gi''t pu''sh origin HEAD:refs/heads/via-alias'", "x"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const labels = ["sh quoted push", "env -S push", "xargs push", "awk push", "env alias push"];
    const lines = labels.map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    // The refusal says why a command no rule names was asked about.
    expect(lines.find((line) => line.startsWith("awk push "))).toContain("(awk is asked about under the rule on `git push*` (always-ask): it runs code or other programs");
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
  });
});

describe("a subcommand abbreviated, a short option in the other case", () => {
  it("refuses npm publi (npm takes a command by a beginning of it) under publish*, and rm -R under -r*; npm --version and rm of a file run", async () => {
    // A fifth review ran `npm publi --dry-run` past { command: "npm", args: "publish*" } and
    // removed a tree with `rm -R` past { command: "rm", args: "-r*" }: neither word was read
    // as the one the rule names.
    const w = world();
    w.file("package.json", JSON.stringify({ name: "tacit-sec5-probe", version: "1.0.0" }));
    w.file("tree/leaf.txt");
    w.file("single.txt");
    const config = w.config(
      [
        { action: "exec", command: "npm", args: "publish*", tier: "always-ask" },
        { action: "exec", command: "rm", args: "-r*", tier: "always-ask" },
      ],
      { libraryConfig: { commandPermissions: ["npm", "rm"] } },
    );
    const script = `${ATTEMPT}requestExecPermission(["npm", "rm"], (p) => {
  attempt("npm publi", () => p.exec("npm", ["publi", "--dry-run", "--offline"]).exitCode);
  attempt("rm -R", () => p.exec("rm", ["-R", "tree"]).exitCode);
  attempt("npm version", () => p.exec("npm", ["--version"]).exitCode);
  attempt("rm file", () => p.exec("rm", ["single.txt"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const lines = ["npm publi", "rm -R"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    expect(run.stdout).toContain("npm version => 0");
    expect(run.stdout).toContain("rm file => 0");
    expect(existsSync(path.join(w.work, "tree", "leaf.txt"))).toBe(true);
  });
});

describe("a rule on a command, run by git's configuration", () => {
  it("asks before git -c 'alias.x=!touch …' x and env GIT_CONFIG_*=… git y under a rule on touch; git --version runs", async () => {
    // A fifth review ran a command a rule asks about through git with git and env permitted:
    // a shell alias given with -c, or in GIT_CONFIG_* variables set through env.
    const w = world();
    const config = w.config([{ action: "exec", command: "touch", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["git", "env", "touch"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["git", "env"], (p) => {
  attempt("git -c alias", () => p.exec("git", ["-c", "alias.x=!touch by-alias", "x"]).exitCode);
  attempt("env GIT_CONFIG", () => p.exec("env", ["GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=alias.y", "GIT_CONFIG_VALUE_0=!touch by-env", "git", "y"]).exitCode);
  attempt("git version", () => p.exec("git", ["--version"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const lines = ["git -c alias", "env GIT_CONFIG"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    expect(run.stdout).toContain("git version => 0");
    expect(existsSync(path.join(w.work, "by-alias"))).toBe(false);
    expect(existsSync(path.join(w.work, "by-env"))).toBe(false);
  });
});

describe("a rule on a command, run through a program that takes the command's name from elsewhere", () => {
  it("refuses git push through xargs -I (the name on its input) and find -exec {} or -exec env {} (the name of a file found), like git push", async () => {
    // xargs -I% % and find -exec {} run a program whose name is no word of the command line:
    // xargs was looked into for a word naming git, and find's words name only what it searches
    // for (a glob: 'gi?'), so both pushed past { command: "git", args: "push*" } unasked, as
    // did find running env running the file found.
    const w = world();
    const remote = repositoryWithRemote(w);
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["git", "xargs", "find"] },
    });
    const gitDir = path.dirname(execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim());
    const script = `${ATTEMPT}requestExecPermission(["xargs", "find"], (p) => {
  attempt("xargs -I push", () => p.exec("xargs", ["-I%", "%", "push", "origin", "HEAD:refs/heads/via-xargs-I"], { input: "git\\n" }).exitCode);
  attempt("find -exec push", () => p.exec("find", [${JSON.stringify(gitDir)}, "-maxdepth", "1", "-name", "gi?", "-exec", "{}", "push", "origin", "HEAD:refs/heads/via-find", ";"]).exitCode);
  attempt("find -exec env push", () => p.exec("find", [${JSON.stringify(gitDir)}, "-maxdepth", "1", "-name", "gi?", "-exec", "env", "{}", "push", "origin", "HEAD:refs/heads/via-find-env", ";"]).exitCode);
  attempt("find -exec grep", () => p.exec("find", [".", "-maxdepth", "1", "-name", "none", "-exec", "grep", "x", "{}", ";"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const lines = ["xargs -I push", "find -exec push", "find -exec env push"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    // find running a program it names is looked into as before: grep is not git.
    expect(run.stdout).toContain("find -exec grep => 0");
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
  });

  it("asks about at, batch, crontab and parallel under a rule on git: their input is command lines", async () => {
    // Job schedulers run the command lines of their input later (`echo "git push" | at now`),
    // and parallel runs its input lines as commands; none of these was looked into. Not
    // installed here: the refusal is the policy's, decided before the program is looked for.
    const w = world();
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["at", "batch", "crontab", "parallel"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["at", "batch", "crontab", "parallel"], (p) => {
  const input = "git push origin HEAD:refs/heads/scheduled\\n";
  attempt("at", () => p.exec("at", ["now"], { input }).exitCode);
  attempt("batch", () => p.exec("batch", [], { input }).exitCode);
  attempt("crontab", () => p.exec("crontab", ["-"], { input: "* * * * * " + input }).exitCode);
  attempt("parallel", () => p.exec("parallel", [], { input }).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const lines = ["at", "batch", "crontab", "parallel"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "not asked about").toEqual([]);
  });
});

describe("a rule on a command, run by a runner that takes the program as an option's value", () => {
  it("asks before sort --compress-program=deployer, which runs deployer on its temporary files", async () => {
    // The command line's words were matched whole: "--compress-program=deployer" names no
    // program, and sort ran the deployer a rule asks about, unasked, once per temporary file.
    const w = world();
    const bin = path.join(w.root, "bin");
    mkdirSync(bin);
    const marker = path.join(w.root, "deployed");
    writeFileSync(path.join(bin, "deployer"), `#!/bin/sh\necho ran >> ${marker}\ncat\n`, { mode: 0o755 });
    const config = w.config([{ action: "exec", command: "deployer", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["sort"] } });
    const script = `${ATTEMPT}requestExecPermission(["sort"], (p) => {
  const input = Array.from({ length: 200_000 }, (_, i) => String(i)).join("\\n") + "\\n";
  attempt("sort compress", () => p.exec("sort", ["-S", "64K", "--compress-program=deployer"], { input }).exitCode);
  attempt("sort plain", () => p.exec("sort", ["-n"], { input: "2\\n1\\n" }).stdout);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)], { PATH: `${bin}:${process.env.PATH ?? ""}` });
    expect(run.code, run.all).toBe(0);
    expect(lineOf(run.stdout, "sort compress") ?? run.all).toMatch(ASKED);
    expect(run.stdout).toContain('sort plain => "1\\n2\\n"');
    expect(existsSync(marker)).toBe(false);
  });

  it("asks before tar --to-command='git push …', which runs the command for each file it extracts", async () => {
    // tar is a file tool, not a runner, so its words were never read for a program: a review
    // of the runners' rules ran git push past { command: "git", args: "push*" } this way.
    const w = world();
    const remote = repositoryWithRemote(w);
    w.file("payload.txt", "anything\n");
    execFileSync("tar", ["-cf", "payload.tar", "payload.txt"], { cwd: w.work });
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["git", "tar"] } });
    const script = `${ATTEMPT}requestExecPermission(["tar"], (p) => {
  attempt("tar to-command", () => p.exec("tar", ["-xf", "payload.tar", "--to-command=git push origin HEAD:refs/heads/via-tar"]).exitCode);
  attempt("tar list", () => p.exec("tar", ["-tf", "payload.tar"]).stdout);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    expect(lineOf(run.stdout, "tar to-command") ?? run.all).toMatch(ASKED);
    expect(run.stdout).toContain('tar list => "payload.txt\\n"');
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
  });
});

describe("a rule on a command, run by a runner that hands a command line to a shell", () => {
  it("asks before split --filter, flock -c and tar --to-command/-I whose shell text hides git behind quotes, ';' or a joined short option", async () => {
    // split --filter, flock -c, tar --to-command and tar -I give their text to a shell, but it
    // was read word by word, split at spaces only: "g''it", "true;git" and "-Igit" name no
    // program, and each pushed past { command: "git", args: "push*" } unasked.
    const w = world();
    const remote = repositoryWithRemote(w);
    w.file("payload.txt", "anything\n");
    execFileSync("tar", ["-cf", "payload.tar", "payload.txt"], { cwd: w.work });
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["git", "split", "flock", "tar"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["split", "flock", "tar"], (p) => {
  attempt("split quoted", () => p.exec("split", ["--filter=g''it push -q origin HEAD:refs/heads/via-split", "payload.txt"]).exitCode);
  attempt("flock semicolon", () => p.exec("flock", ["lock", "-c", "true;git push -q origin HEAD:refs/heads/via-flock"]).exitCode);
  attempt("tar quoted", () => p.exec("tar", ["-xf", "payload.tar", "--to-command=\\"git\\" push -q origin HEAD:refs/heads/via-tar"]).exitCode);
  attempt("tar -I joined", () => p.exec("tar", ["-cf", "out.tar", "-Igit push -q origin HEAD:refs/heads/via-tar-I #", "payload.txt"]).exitCode);
  attempt("split plain", () => p.exec("split", ["-l", "1", "payload.txt", "part-"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const labels = ["split quoted", "flock semicolon", "tar quoted", "tar -I joined"];
    const lines = labels.map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    expect(run.stdout).toContain("split plain => 0");
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
  });
});

describe("a rule on a command, run by a program tacit does not know as a runner", () => {
  it("asks before chronic git push (a runner tacit has no list entry for) and socat SYSTEM:/EXEC:, ncat --sh-exec; chronic true and a word that is no program run", async () => {
    // Only programs tacit knows as runners were read for the command: moreutils' chronic (here a
    // stand-in that runs its arguments, as chronic does) pushed past { command: "git", args:
    // "push*" } unasked, and socat's and ncat's options that run a program were never read
    // (socat and ncat are not installed here: the refusal comes before the program is looked for).
    const w = world();
    const remote = repositoryWithRemote(w);
    const bin = path.join(w.root, "bin");
    mkdirSync(bin);
    writeFileSync(path.join(bin, "chronic"), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["git", "chronic", "socat", "ncat"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["chronic", "socat", "ncat"], (p) => {
  attempt("chronic push", () => p.exec("chronic", ["git", "push", "-q", "origin", "HEAD:refs/heads/via-chronic"]).exitCode);
  attempt("chronic python push", () => p.exec("chronic", ["python3", "-c", "import subprocess; subprocess.run(['g'+'it', 'pu'+'sh', '-q', 'origin', 'HEAD:refs/heads/via-python'])"]).exitCode);
  attempt("socat system", () => p.exec("socat", ["-", "SYSTEM:g''it push origin HEAD:refs/heads/via-socat"]).exitCode);
  attempt("socat exec", () => p.exec("socat", ["-", "EXEC:/usr/bin/git push origin HEAD:refs/heads/via-socat"]).exitCode);
  attempt("ncat sh-exec", () => p.exec("ncat", ["-l", "--sh-exec", "g''it push origin HEAD:refs/heads/via-ncat"]).exitCode);
  attempt("chronic true", () => p.exec("chronic", ["true"]).exitCode);
  attempt("chronic git status", () => p.exec("chronic", ["git", "status", "--porcelain"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)], { PATH: `${bin}:${process.env.PATH ?? ""}` });
    expect(run.code, run.all).toBe(0);
    const lines = ["chronic push", "chronic python push", "socat system", "socat exec", "ncat sh-exec"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    expect(run.stdout).toContain("chronic true => 0");
    expect(run.stdout).toContain("chronic git status => 0");
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
  });
});

describe("a rule on a command, run by git through a shell it gives an option's value to", () => {
  it("asks before git fetch --upload-pack='git pu?h …' . (a glob the shell expands to a file named push), rebase -x, submodule foreach; git fetch and git status run", async () => {
    // For a local repository git runs the upload-pack command through sh, in the working
    // directory: with a file named "push" there (any script may write one), `pu?h` is push, and
    // git pushed to the remote past { command: "git", args: "push*" } unasked: the args glob
    // reads words, and "pu?h" is no beginning of "push".
    const w = world();
    const remote = repositoryWithRemote(w);
    w.file("push", "");
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["git"] } });
    const script = `${ATTEMPT}requestExecPermission(["git"], (p) => {
  attempt("fetch upload-pack", () => p.exec("git", ["fetch", "--upload-pack=git pu?h -q origin HEAD:refs/heads/via-upload-pack #", "."]).exitCode);
  attempt("fetch upload-pack abbreviated", () => p.exec("git", ["fetch", "--upload=git pu?h -q origin HEAD:refs/heads/via-upload #", "."]).exitCode);
  attempt("rebase -x", () => p.exec("git", ["rebase", "-x", "git pu?h -q origin HEAD:refs/heads/via-rebase", "HEAD~0"]).exitCode);
  attempt("submodule foreach", () => p.exec("git", ["submodule", "foreach", "git pu?h"]).exitCode);
  attempt("plain fetch", () => p.exec("git", ["fetch", "-q", "origin"]).exitCode);
  attempt("status", () => p.exec("git", ["status", "--porcelain"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const lines = ["fetch upload-pack", "fetch upload-pack abbreviated", "rebase -x", "submodule foreach"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    expect(run.stdout).toContain("plain fetch => 0");
    expect(run.stdout).toContain("status => 0");
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
  });
});

describe("a rule on a command, its args given as a glob a shell expands", () => {
  it("asks before strace -o '|git pu?h …' (strace pipes its output to a shell command) with a file named push at hand; strace true runs", async () => {
    // The args glob reads words: "pu?h" is no beginning of "push", but the shell strace hands
    // "|cmd" to expands it to the file named push that any script may write, and git pushed
    // past { command: "git", args: "push*" } unasked.
    const w = world();
    const remote = repositoryWithRemote(w);
    w.file("push", "");
    w.file("payload", "git push -q origin HEAD:refs/heads/via-strace-source\n");
    const config = w.config([{ action: "exec", command: "git", args: "push*", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["git", "strace"] } });
    const script = `${ATTEMPT}requestExecPermission(["strace"], (p) => {
  attempt("strace pipe", () => p.exec("strace", ["-o", "|git pu?h -q origin HEAD:refs/heads/via-strace", "true"]).exitCode);
  attempt("strace source", () => p.exec("strace", ["-o", "|. ./payload", "true"]).exitCode);
  attempt("strace plain", () => p.exec("strace", ["-o", "/dev/null", "true"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    expect(lineOf(run.stdout, "strace pipe") ?? run.all).toMatch(ASKED);
    // A file of commands sourced by that shell names nothing on the command line.
    expect(lineOf(run.stdout, "strace source") ?? run.all).toMatch(ASKED);
    expect(git(remote, ["for-each-ref"]).trim()).toBe("");
    // strace may be refused ptrace in a container; it is the question that matters.
    expect(lineOf(run.stdout, "strace plain") ?? run.all).not.toMatch(/approval/);
  });
});

describe("a rule on a command, run by a runner given the path of a program", () => {
  it("asks before env ./build (a project's program the script rewrote), nice ./link, timeout /copy, env PATH=…, find -execdir and git --exec-path; env /usr/bin/true runs", async () => {
    // Rules read a runner's words for the command's name, and a runner given a path runs the file
    // there whatever its name: with env, nice, timeout, find, ln, cp and git permitted beside
    // touch, a script ran touch under an always-ask rule on it with no question, by rewriting an
    // executable of the project (a write keeps its mode) and running it with `env ./build`,
    // through a link or a copy of touch under another name, through env's PATH=, --chdir and -C joined
    // to its value, find -execdir,
    // and git's --exec-path=. (git itself can make ./git-x executable: hash-object, update-index
    // --cacheinfo 100755, checkout-index).
    const w = world();
    const build = w.file("build", "#!/bin/sh\necho building\n");
    chmodSync(build, 0o755);
    w.file("sub/notes.txt", "notes\n");
    git(w.work, ["init", "-q"]);
    const config = w.config([{ action: "exec", command: "touch", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["touch", "env", "nice", "timeout", "find", "ln", "cp", "git"] },
    });
    const script = `${ATTEMPT}
requestFileSystem(".", (fs) => fs.access("build").write("#!/bin/sh\\ntouch by-build\\n"));
requestExecPermission(["env", "nice", "timeout", "find", "ln", "cp", "git"], (p) => {
  attempt("ln", () => p.exec("ln", ["-s", "/usr/bin/touch", "linked"]).exitCode);
  attempt("cp", () => p.exec("cp", ["/usr/bin/touch", "copied"]).exitCode);
  attempt("env build", () => p.exec("env", ["./build"]).exitCode);
  attempt("nice link", () => p.exec("nice", ["./linked", "by-link"]).exitCode);
  attempt("timeout copy", () => p.exec("timeout", ["5", ${JSON.stringify(w.work)} + "/copied", "by-copy"]).exitCode);
  attempt("env PATH", () => p.exec("env", ["PATH=" + ${JSON.stringify(w.work)}, "copied", "by-path"]).exitCode);
  attempt("env chdir", () => p.exec("env", ["--chdir", "..", "work/linked", "by-chdir"]).exitCode);
  attempt("env joined chdir", () => p.exec("env", ["-iC..", "work/linked", "by-joined"]).exitCode);
  attempt("find execdir", () => p.exec("find", ["sub", "-name", "notes.txt", "-execdir", "../linked", "by-execdir", ";"]).exitCode);
  const blob = p.exec("git", ["hash-object", "-w", "--stdin"], { input: "#!/bin/sh\\ntouch by-exec-path\\n" }).stdout.trim();
  attempt("git index", () => p.exec("git", ["update-index", "--add", "--cacheinfo", "100755," + blob + ",git-x"]).exitCode);
  attempt("git checkout", () => p.exec("git", ["checkout-index", "git-x"]).exitCode);
  attempt("git exec-path", () => p.exec("git", ["--exec-path=.", "x"]).exitCode);
  attempt("env true", () => p.exec("env", ["/usr/bin/true"]).exitCode);
  attempt("find sub", () => p.exec("find", ["./sub", "-name", "*.txt"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    // The steps the attack needs run unasked: no rule names ln, cp or those git subcommands.
    for (const step of ["ln", "cp", "git index", "git checkout"]) expect(run.stdout).toContain(`${step} => 0`);
    const labels = ["env build", "nice link", "timeout copy", "env PATH", "env chdir", "env joined chdir", "find execdir", "git exec-path"];
    const lines = labels.map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    for (const marker of ["by-build", "by-link", "by-copy", "by-path", "sub/by-execdir", "by-exec-path"]) {
      expect(existsSync(path.join(w.work, marker)), marker).toBe(false);
    }
    // Run from the parent directory (env --chdir, -C), touch would have made these there.
    for (const marker of ["by-chdir", "by-joined"]) expect(existsSync(path.join(w.root, marker)), marker).toBe(false);
    // A program on PATH named by its path is judged by its name, a directory is no program: neither is asked about.
    expect(run.stdout).toContain("env true => 0");
    expect(run.stdout).toContain("find sub => 0");
  });
});

describe("a rule on a command, and what git runs from its repository", () => {
  // KNOWN LIMITATION, asserted as failing so that a fix shows up: rules read a command line, not
  // what git reads from the repository it works in (hooks, configuration). The file API refuses
  // scripts .git/hooks and .git/config, but git itself writes them where it is permitted: with git
  // and touch permitted and { command: "touch", tier: "always-ask" }, git made an executable of
  // its own (hash-object, update-index --cacheinfo 100755), put it in .git/hooks
  // (checkout-index --prefix=.git/hooks/), and `git commit` ran it, touch and all, with no question.
  // The defence is the README's: a rule on git itself, or no git beside such a rule.
  it.fails("KNOWN LIMITATION: git plants a hook with checkout-index --prefix=.git/hooks/, and git commit runs the command unasked", async () => {
    const w = world();
    git(w.work, ["init", "-q"]);
    const config = w.config([{ action: "exec", command: "touch", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["git", "touch"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["git"], (p) => {
  const blob = p.exec("git", ["hash-object", "-w", "--stdin"], { input: "#!/bin/sh\\ntouch by-hook\\n" }).stdout.trim();
  attempt("index", () => p.exec("git", ["update-index", "--add", "--cacheinfo", "100755," + blob + ",pre-commit"]).exitCode);
  attempt("hook", () => p.exec("git", ["checkout-index", "--prefix=.git/hooks/", "pre-commit"]).exitCode);
  attempt("name", () => p.exec("git", ["config", "user.name", "t"]).exitCode);
  attempt("email", () => p.exec("git", ["config", "user.email", "t@tacit.invalid"]).exitCode);
  attempt("commit", () => p.exec("git", ["commit", "-q", "--allow-empty", "-m", "x"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    for (const step of ["index", "hook", "name", "email", "commit"]) expect(run.stdout).toContain(`${step} => 0`);
    // What must not be possible: touch run under the rule on it without a question.
    expect(existsSync(path.join(w.work, "by-hook"))).toBe(false);
  });
});

describe("a rule on a command, run by a package manager's or a file tool's option", () => {
  it("asks before npm exec -c, npx -c, install --strip-program and wget --use-askpass; npm --version and a plain install run", async () => {
    // Rules read the words of runners, shells and programs tacit does not know, but not of build
    // tools and file tools, which tacit knows: with npm, npx, install and wget permitted beside
    // touch under { command: "touch", tier: "always-ask" }, `npm exec -c "touch …"` and `npx -c`
    // ran it in a shell, `install -s --strip-program=sh payload out` ran the payload as a shell
    // script, and `wget --use-askpass=./build` a project's executable the script had rewritten, all
    // with no question.
    const w = world();
    const build = w.file("build", "#!/bin/sh\necho building\n");
    chmodSync(build, 0o755);
    w.file("payload.txt", "touch by-install\n");
    const config = w.config([{ action: "exec", command: "touch", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["touch", "npm", "npx", "install", "wget"] },
    });
    const script = `${ATTEMPT}
requestFileSystem(".", (fs) => fs.access("build").write("#!/bin/sh\\ntouch by-wget\\n"));
requestExecPermission(["npm", "npx", "install", "wget"], (p) => {
  attempt("npm exec", () => p.exec("npm", ["exec", "-c", "touch by-npm"]).exitCode);
  attempt("npx", () => p.exec("npx", ["--call", "touch by-npx"]).exitCode);
  attempt("npm exec args", () => p.exec("npm", ["exec", "--offline", "--", "touch", "by-npm-args"]).exitCode);
  attempt("install", () => p.exec("install", ["-s", "--strip-program=sh", "payload.txt", "out.sh"]).exitCode);
  attempt("wget", () => p.exec("wget", ["-q", "--tries=1", "--use-askpass=./build", "http://127.0.0.1:9/"]).exitCode);
  attempt("npm version", () => p.exec("npm", ["--version"]).exitCode);
  attempt("plain install", () => p.exec("install", ["-m", "644", "payload.txt", "copy.txt"]).exitCode);
});
`;
    // npm keeps its cache and logs in HOME: the test's own.
    const run = await unattended(w, ["run", "--exec-timeout-ms", "60000", "--config", config, w.script(script)], { HOME: w.root });
    expect(run.code, run.all).toBe(0);
    const labels = ["npm exec", "npx", "npm exec args", "install", "wget"];
    const lines = labels.map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    for (const marker of ["by-npm", "by-npx", "by-npm-args", "by-install", "by-wget"]) expect(existsSync(path.join(w.work, marker)), marker).toBe(false);
    expect(run.stdout).toContain("npm version => 0");
    expect(run.stdout).toContain("plain install => 0");
  }, 60_000);
});

describe("a rule on a command, run by a build tool's input or a comma-separated list", () => {
  it("asks before make -f - (a recipe on its input) and gcc -wrapper touch,…; make and gcc --version run", async () => {
    // Build tools' words are read as a runner's, but `make -f -` reads its makefile on its input,
    // whose recipe ran touch under { command: "touch", tier: "always-ask" } with no question (run
    // directly, and through env, which hands it its input); and
    // gcc's -wrapper takes the program and its arguments as one comma-separated word
    // (`touch,by-gcc,--`), which no word-by-word reading named.
    const w = world();
    w.file("x.c", "int main(void) { return 0; }\n");
    const config = w.config([{ action: "exec", command: "touch", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["touch", "make", "gcc", "env"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["make", "gcc", "env"], (p) => {
  attempt("make input", () => p.exec("make", ["-f", "-"], { input: "all:\\n\\ttouch by-make\\n" }).exitCode);
  attempt("env make input", () => p.exec("env", ["make", "-f", "-"], { input: "all:\\n\\ttouch by-env-make\\n" }).exitCode);
  attempt("gcc wrapper", () => p.exec("gcc", ["-wrapper", "touch,by-gcc,--", "x.c", "-o", "x"]).exitCode);
  attempt("make version", () => p.exec("make", ["--version"]).exitCode);
  attempt("gcc version", () => p.exec("gcc", ["--version"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)]);
    expect(run.code, run.all).toBe(0);
    const lines = ["make input", "env make input", "gcc wrapper"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    for (const marker of ["by-make", "by-env-make", "by-gcc"]) expect(existsSync(path.join(w.work, marker)), marker).toBe(false);
    expect(run.stdout).toContain("make version => 0");
    expect(run.stdout).toContain("gcc version => 0");
  });
});

describe("a rule on a command, run by a program tacit does not know that hands its words to a shell", () => {
  it("asks before an expansion or a glob that may name the command; a plain word runs", async () => {
    // Programs tacit has no entry for were read for words naming the command, but many hand
    // their arguments to a shell (hyperfine, watchexec, nodemon --exec, moreutils' pee): under
    // { command: "touch", tier: "always-ask" }, `'$(printf t)ouch …'` and `'/usr/bin/t?uch …'`
    // named no touch word by word, and the shell ran touch with no question. `runit` stands for
    // such a program: a real one on tacit's PATH, outside the roots, that runs `sh -c "$1"`.
    const w = world();
    const bin = path.join(w.root, "bin");
    mkdirSync(bin);
    writeFileSync(path.join(bin, "runit"), '#!/bin/sh\nexec /bin/sh -c "$1"\n');
    chmodSync(path.join(bin, "runit"), 0o755);
    const config = w.config([{ action: "exec", command: "touch", tier: "always-ask" }], {
      libraryConfig: { commandPermissions: ["touch", "runit", "ls", "echo"] },
    });
    const script = `${ATTEMPT}requestExecPermission(["runit", "ls", "echo"], (p) => {
  attempt("expansion", () => p.exec("runit", ["$(printf t)ouch by-expansion"]).exitCode);
  attempt("glob", () => p.exec("runit", ["/usr/bin/t?uch by-glob"]).exitCode);
  attempt("plain", () => p.exec("runit", ["true"]).exitCode);
  attempt("ls", () => p.exec("ls", ["*", "/usr/bin/touch"]).exitCode);
  attempt("echo", () => p.exec("echo", ["$(printf t)ouch"]).exitCode);
});
`;
    const run = await unattended(w, ["run", "--config", config, w.script(script)], { PATH: `${bin}:${process.env.PATH ?? ""}` });
    expect(run.code, run.all).toBe(0);
    const lines = ["expansion", "glob"].map((label) => lineOf(run.stdout, label) ?? `${label}: ${run.all}`);
    expect(lines.filter((line) => !ASKED.test(line)), "ran without a question").toEqual([]);
    for (const marker of ["by-expansion", "by-glob"]) expect(existsSync(path.join(w.work, marker)), marker).toBe(false);
    expect(run.stdout).toContain("plain => 0");
    // Programs that run none are not read: a glob, an expansion, the command's own path are data to them.
    expect(lineOf(run.stdout, "ls")).toMatch(/^ls => \d+$/);
    expect(run.stdout).toContain("echo => 0");
  });
});
