// Git hook managers whose runner is installed (runner/fs/hook-managers.ts): the hook git runs at
// the user's next commit is the manager's runner, and a configuration file in the worktree says
// what it runs. Shown with the real tools (lefthook 2.2.2 from npm, pre-commit 3.0.4 from
// Debian): a script with requestFileSystem(".") alone wrote `run: touch PWNED` into
// lefthook.yml or lefthook-local.yml, or a `repo: local` hook into .pre-commit-config.yaml, and
// the user's next `git commit` ran it. The hooks here are the runners those tools install
// (hook-runners/, copied from real installs); what they call (lefthook, pre-commit's Python) is
// a stand-in that runs the configuration's commands as the tools do, so that the test needs
// neither tool. Through the real CLI: the configuration is refused while the runner is
// installed, read still, and writable where no runner is; the next commit runs nothing of the
// script's (no canary file).

import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

const RUNNERS = path.join(import.meta.dirname, "hook-runners");
const runner = (name: string): string => readFileSync(path.join(RUNNERS, name), "utf8");

/**
 * Runs the `run:` (lefthook) or `entry:` (pre-commit) commands of the configuration files named
 * in its arguments that exist, with sh in the worktree's top, as the tools do for a hook whose
 * configuration names them (neither tool checks what the command is).
 */
const STAND_IN = `#!/usr/bin/env node
const { execSync } = require("node:child_process");
const { existsSync, readFileSync } = require("node:fs");
const files = process.argv.slice(2).filter((a) => a.startsWith("--config=")).map((a) => a.slice(9));
const names = files.length > 0 ? files : ["lefthook.yml", "lefthook-local.yml", ".lefthook.yml", ".lefthook-local.yml"];
// lefthook's extends: the files listed below it are read too.
for (const name of [...names]) {
  if (!existsSync(name)) continue;
  const list = /^extends:\\s*\\n((?:\\s+-\\s*.+\\n?)+)/m.exec(readFileSync(name, "utf8"));
  if (list) names.push(...list[1].split("\\n").map((line) => line.replace(/^\\s*-\\s*/, "").trim()).filter(Boolean));
}
for (const name of names) {
  if (!existsSync(name)) continue;
  for (const m of readFileSync(name, "utf8").matchAll(/^\\s*-?\\s*(?:run|entry):\\s*(.+)$/gm)) {
    execSync(m[1].replace(/^"(.*)"$/, "$1"), { shell: "/bin/sh", stdio: "ignore" });
  }
}
`;

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };
const git = (cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): string =>
  execFileSync("git", args, { cwd, env: { ...GIT_ENV, ...env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** A repository with `files`, committed, and `hook` installed as its pre-commit hook (or none). */
function repository(dir: string, files: Record<string, string>, hook: string | null): void {
  execFileSync("git", ["init", "-q", dir]);
  writeTree(dir, files);
  if (hook !== null) {
    writeFileSync(path.join(dir, ".git/hooks/pre-commit"), hook);
    chmodSync(path.join(dir, ".git/hooks/pre-commit"), 0o755);
  }
}

/** The stand-in, written into `dir`, and pre-commit's runner made to call it (as its INSTALL_PYTHON). */
function standInFor(dir: string): { standIn: string; preCommitRunner: string } {
  const standIn = path.join(dir, "stand-in.cjs");
  writeFileSync(standIn, STAND_IN);
  chmodSync(standIn, 0o755);
  return { standIn, preCommitRunner: runner("pre-commit-3.0.4.pre-commit").replace(/^INSTALL_PYTHON=.*$/m, `INSTALL_PYTHON=${standIn}`) };
}

/** The user's next commit in the lefthook and pre-commit repositories: their runners call the stand-in (lefthook's by LEFTHOOK_BIN, which its runner tries first). */
function commitNext(dir: string, standIn: string): void {
  for (const repo of ["lh", "pc"]) {
    git(path.join(dir, repo), { LEFTHOOK_BIN: standIn }, "add", "-A");
    git(path.join(dir, repo), { LEFTHOOK_BIN: standIn }, "commit", "-q", "-m", "next");
  }
}

describe("git hook managers' configuration, while their runner is installed", () => {
  it("lefthook, pre-commit and husky 4: refused where the runner is installed, read still, writable where it is not", async () => {
    const { dir, cleanup } = realTempDir("tacit-hook-managers-");
    try {
      const marker = path.join(dir, "PWNED");
      const { standIn, preCommitRunner } = standInFor(dir);
      const lefthook = "pre-commit:\n  commands:\n    lint:\n      run: \"true\"\n";
      const preCommit = 'repos:\n- repo: local\n  hooks:\n  - id: lint\n    name: lint\n    entry: "true"\n    language: system\n';
      repository(path.join(dir, "lh"), { "lefthook.yml": lefthook, "a.txt": "a\n" }, runner("lefthook-2.2.2.pre-commit"));
      // pre-commit's hook names the Python it was installed with (a virtualenv's, say): here, the stand-in.
      repository(path.join(dir, "pc"), { ".pre-commit-config.yaml": preCommit, "ci.yml": "on: push\n", "a.txt": "a\n" }, preCommitRunner);
      repository(path.join(dir, "h4"), { "package.json": "{}\n", "a.txt": "a\n" }, runner("husky-4.3.8.pre-commit"));
      // The same files where no runner is installed: ordinary files.
      repository(path.join(dir, "plain"), { "lefthook.yml": lefthook, ".pre-commit-config.yaml": preCommit }, null);
      const lhPayload = `pre-commit:\n  commands:\n    lint:\n      run: touch ${marker}\n`;
      const pcPayload = `repos:\n- repo: local\n  hooks:\n  - id: lint\n    name: lint\n    entry: touch ${marker}\n    language: system\n`;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("lefthook.yml", () => fs.access("lh/lefthook.yml").write(${lit(lhPayload)}));
  attempt("lefthook-local.yml", () => fs.access("lh/lefthook-local.yml").write(${lit(lhPayload)}));
  attempt(".config/lefthook.toml", () => fs.access("lh/.config/lefthook.toml").write("x"));
  attempt(".lefthook script", () => fs.access("lh/.lefthook/pre-commit/lint.sh").write(${lit(`touch ${marker}\n`)}));
  attempt(".lefthook dir", () => fs.access("lh/.lefthook-local/pre-commit").mkdir());
  attempt("LEFTHOOK.YML", () => fs.access("lh/LEFTHOOK.YML").write("x"));
  attempt(".pre-commit-config.yaml", () => fs.access("pc/.pre-commit-config.yaml").append(${lit(`  - id: x\n    name: x\n    entry: touch ${marker}\n    language: system\n`)}));
  attempt(".pre-commit-config.yaml delete", () => fs.access("pc/.pre-commit-config.yaml").delete());
  attempt(".huskyrc", () => fs.access("h4/.huskyrc").write(${lit(`{"hooks":{"pre-commit":"touch ${marker}"}}`)}));
  attempt("husky.config.js", () => fs.access("h4/husky.config.js").write("x"));
  attempt("read lefthook.yml", () => fs.access("lh/lefthook.yml").read());
  attempt("read .pre-commit-config.yaml", () => fs.access("pc/.pre-commit-config.yaml").read().includes("repo: local"));
  attempt("ordinary yaml", () => fs.access("pc/ci.yml").write("on: pull_request\\n"));
  attempt("ordinary", () => fs.access("lh/a.txt").write("b\\n"));
  attempt("no runner: lefthook.yml", () => fs.access("plain/lefthook.yml").write(${lit(lhPayload)}));
  attempt("no runner: .pre-commit-config.yaml", () => fs.access("plain/.pre-commit-config.yaml").write(${lit(pcPayload)}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["lefthook.yml", "lefthook-local.yml", ".config/lefthook.toml", ".lefthook script", ".lefthook dir", "LEFTHOOK.YML"],
        /configuration of the git hook manager lefthook, whose runner is installed as .*\.git\/hooks\/pre-commit.*next git commit.*Ask the user/,
      );
      expectRefused(found, [".pre-commit-config.yaml", ".pre-commit-config.yaml delete"], /git hook manager pre-commit, whose runner is installed/);
      expectRefused(found, [".huskyrc", "husky.config.js"], /git hook manager husky 4, whose runner is installed/);
      expect(attemptOf(found, "read lefthook.yml")).toEqual({ status: "ok", value: lefthook });
      expect(attemptOf(found, "read .pre-commit-config.yaml")).toEqual({ status: "ok", value: true });
      for (const label of ["ordinary yaml", "ordinary", "no runner: lefthook.yml", "no runner: .pre-commit-config.yaml"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(readFileSync(path.join(dir, "lh/lefthook.yml"), "utf8")).toBe(lefthook);
      expect(readFileSync(path.join(dir, "pc/.pre-commit-config.yaml"), "utf8")).toBe(preCommit);
      expect(existsSync(path.join(dir, "h4/.huskyrc"))).toBe(false);
      // The user's next commits: the runners call the stand-in (lefthook's by LEFTHOOK_BIN, which its runner tries first).
      commitNext(dir, standIn);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("lefthook's copies of its remote configurations, in the repository's info directory", async () => {
    const { dir, cleanup } = realTempDir("tacit-hook-managers-remotes-");
    try {
      const marker = path.join(dir, "PWNED");
      const remote = 'pre-commit:\n  commands:\n    ping:\n      run: "true"\n';
      // As `lefthook install` leaves them: the remote repository cloned under .git/info/lefthook-remotes, merged into lefthook.yml's hooks.
      repository(path.join(dir, "lh"), { "lefthook.yml": "remotes:\n  - git_url: https://example.com/org/hooks\n    configs:\n      - ping.yml\n", "a.txt": "a\n" }, runner("lefthook-2.2.2.pre-commit"));
      writeTree(path.join(dir, "lh/.git/info/lefthook-remotes/hooks"), { "ping.yml": remote });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("remote config", () => fs.access("lh/.git/info/lefthook-remotes/hooks/ping.yml").write(${lit(`pre-commit:\n  commands:\n    ping:\n      run: touch ${marker}\n`)}));
  attempt("another remote", () => fs.access("lh/.git/info/lefthook-remotes/other/lefthook.yml").write("x: 1\\n"));
  attempt("delete the copies", () => fs.access("lh/.git/info/lefthook-remotes").delete());
  attempt("read remote config", () => fs.access("lh/.git/info/lefthook-remotes/hooks/ping.yml").read());
  attempt("other info file", () => fs.access("lh/.git/info/exclude").write("*.log\\n"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["remote config", "another remote", "delete the copies"], /lefthook's copies of the remote configurations a lefthook\.yml names.*next git commit or push.*Ask the user/);
      expect(attemptOf(found, "read remote config")).toEqual({ status: "ok", value: remote });
      expect(attemptOf(found, "other info file").status).toBe("ok");
      expect(readFileSync(path.join(dir, "lh/.git/info/lefthook-remotes/hooks/ping.yml"), "utf8")).toBe(remote);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("a script the configuration names through quoting, after an operator or in a block-style list, read as the manager reads it", async () => {
    const { dir, cleanup } = realTempDir("tacit-hook-managers-quoted-");
    try {
      const marker = path.join(dir, "PWNED");
      const { standIn, preCommitRunner } = standInFor(dir);
      const check = "#!/bin/sh\nexit 0\n";
      // pre-commit splits entry: with shlex (./scripts/check.sh); lefthook runs run: with sh (tools/a.sh, then tools/b.sh).
      const preCommit =
        "repos:\n- repo: local\n  hooks:\n  - id: check\n    name: check\n    entry: ./scr\"ipts\"/check.sh\n    language: script\n" +
        "  - id: lint\n    name: lint\n    entry: sh\n    args:\n    - conf/rules.sh # block style\n    - --strict\n    language: system\n";
      const lefthook = "pre-commit:\n  commands:\n    lint:\n      run: ./tools/a.sh;./tools/b.sh\n";
      repository(path.join(dir, "pc"), { ".pre-commit-config.yaml": preCommit, "scripts/check.sh": check, "conf/rules.sh": "exit 0\n" }, preCommitRunner);
      repository(path.join(dir, "lh"), { "lefthook.yml": lefthook, "tools/a.sh": check, "tools/b.sh": check }, runner("lefthook-2.2.2.pre-commit"));
      for (const file of ["pc/scripts/check.sh", "lh/tools/a.sh", "lh/tools/b.sh"]) chmodSync(path.join(dir, file), 0o755);
      const payload = lit(`#!/bin/sh\ntouch ${marker}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("quoted entry", () => fs.access("pc/scripts/check.sh").write(${payload}));
  attempt("block-style args", () => fs.access("pc/conf/rules.sh").write(${lit(`touch ${marker}\n`)}));
  attempt("before an operator", () => fs.access("lh/tools/a.sh").write(${payload}));
  attempt("after an operator", () => fs.access("lh/tools/b.sh").write(${payload}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["quoted entry"], /git hook manager pre-commit names \(entry: \.\/scripts\/check\.sh, in \.pre-commit-config\.yaml\)/);
      expectRefused(found, ["block-style args"], /git hook manager pre-commit names \(args: \[conf\/rules\.sh, --strict\], in \.pre-commit-config\.yaml\)/);
      expectRefused(found, ["before an operator", "after an operator"], /git hook manager lefthook names \(run: \.\/tools\/a\.sh \.\/tools\/b\.sh, in lefthook\.yml\)/);
      commitNext(dir, standIn);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("an inline list of 130,000 args (a cloned repository's configuration, made to be large): the script it names is still refused, other files written", async () => {
    const { dir, cleanup } = realTempDir("tacit-hook-managers-long-");
    try {
      const { preCommitRunner } = standInFor(dir);
      // Spread into one call, the items exceeded the stack: every write in the repository ended the evaluation
      // ("the host failed to answer a request: RangeError: Maximum call stack size exceeded").
      const args = [...Array.from({ length: 130_000 }, () => "a"), "conf/rules.sh"].join(",");
      const preCommit = `repos:\n- repo: local\n  hooks:\n  - id: lint\n    name: lint\n    entry: sh tools/lint.sh\n    language: system\n    args: [${args}]\n`;
      repository(path.join(dir, "pc"), { ".pre-commit-config.yaml": preCommit, "conf/rules.sh": "", "a.txt": "a\n" }, preCommitRunner);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("args", () => fs.access("pc/conf/rules.sh").write("touch x\\n"));
  attempt("another file", () => fs.access("pc/b.txt").write("b\\n"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["args"], /git hook manager pre-commit names/);
      expect(attemptOf(found, "another file").status).toBe("ok");
      expect(readFileSync(path.join(dir, "pc/conf/rules.sh"), "utf8")).toBe("");
    } finally {
      cleanup();
    }
  }, 60_000);

  it("what the configuration names: pre-commit's entry scripts, lefthook's extends, husky 4's \"husky\" key in package.json", async () => {
    const { dir, cleanup } = realTempDir("tacit-hook-managers-named-");
    try {
      const marker = path.join(dir, "PWNED");
      const { standIn, preCommitRunner } = standInFor(dir);
      const check = "#!/bin/sh\nexit 0\n";
      const preCommit =
        "repos:\n- repo: local\n  hooks:\n  - id: check\n    name: check\n    entry: ./scripts/check.sh\n    language: script\n" +
        "  - id: lint\n    name: lint\n    entry: sh tools/lint.sh\n    language: system\n    args: [--strict, conf/rules.sh]\n";
      const extra = 'pre-commit:\n  commands:\n    lint:\n      run: "true"\n';
      repository(path.join(dir, "pc"), { ".pre-commit-config.yaml": preCommit, "scripts/check.sh": check, "scripts/other.sh": check, "tools/lint.sh": "", "conf/rules.sh": "", "a.txt": "a\n" }, preCommitRunner);
      chmodSync(path.join(dir, "pc/scripts/check.sh"), 0o755);
      repository(path.join(dir, "lh"), { "lefthook.yml": "extends:\n  - ci/lefthook-extra.yml\n", "ci/lefthook-extra.yml": extra, "ci/other.yml": extra, "a.txt": "a\n" }, runner("lefthook-2.2.2.pre-commit"));
      const manifest = '{\n  "name": "h4",\n  "husky": { "hooks": { "pre-commit": "true" } }\n}\n';
      repository(path.join(dir, "h4"), { "package.json": manifest, "web/package.json": "{}\n" }, runner("husky-4.3.8.pre-commit"));
      // Installed from web/: its package.json is the one the runner reads.
      repository(path.join(dir, "h4web"), { "package.json": "{}\n", "web/package.json": manifest, ".git/hooks/husky.local.sh": 'packageManager=npm\ncd "web"\n' }, runner("husky-4.3.8.pre-commit"));
      repository(path.join(dir, "plain"), { ".pre-commit-config.yaml": preCommit, "scripts/check.sh": check, "package.json": manifest }, null);
      const payload = lit(`#!/bin/sh\ntouch ${marker}\n`);
      const hooked = lit(manifest.replace('"true"', JSON.stringify(`touch ${marker}`)));
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("entry script", () => fs.access("pc/scripts/check.sh").write(${payload}));
  attempt("entry's argument", () => fs.access("pc/tools/lint.sh").write("touch x\\n"));
  attempt("args", () => fs.access("pc/conf/rules.sh").write("touch x\\n"));
  attempt("read entry script", () => fs.access("pc/scripts/check.sh").read());
  attempt("other script", () => fs.access("pc/scripts/other.sh").write(${payload}));
  attempt("extends", () => fs.access("lh/ci/lefthook-extra.yml").write(${lit(`pre-commit:\n  commands:\n    lint:\n      run: touch ${marker}\n`)}));
  attempt("not extended", () => fs.access("lh/ci/other.yml").write("x: 1\\n"));
  attempt("husky key", () => fs.access("h4/package.json").write(${hooked}));
  attempt("husky key, appended", () => fs.access("h4/package.json").append(" "));
  attempt("husky key broken", () => fs.access("h4/package.json").write("{"));
  attempt("other key", () => fs.access("h4/package.json").write(${lit(manifest.replace('"h4"', '"renamed"'))}));
  attempt("another package.json", () => fs.access("h4/web/package.json").write(${hooked}));
  attempt("installed from web/", () => fs.access("h4web/web/package.json").write(${hooked}));
  attempt("installed from web/: the top's", () => fs.access("h4web/package.json").write(${hooked}));
  attempt("no runner: entry script", () => fs.access("plain/scripts/check.sh").write("#!/bin/sh\\nexit 0\\n"));
  attempt("no runner: husky key", () => fs.access("plain/package.json").write("{}\\n"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["entry script"], /a file the configuration of the git hook manager pre-commit names \(entry: \.\/scripts\/check\.sh, in \.pre-commit-config\.yaml\).*runs it.*Ask the user/);
      expectRefused(found, ["entry's argument", "args"], /git hook manager pre-commit names/);
      expectRefused(found, ["extends"], /git hook manager lefthook names \(extends, in lefthook\.yml\)/);
      expectRefused(found, ["husky key", "installed from web/"], /change the "husky" key of a package\.json whose hooks husky 4's runner, installed as .*pre-commit.*Ask the user/);
      expectRefused(found, ["husky key broken"], /"husky" key/);
      expect(attemptOf(found, "read entry script")).toEqual({ status: "ok", value: check });
      for (const label of ["other script", "not extended", "husky key, appended", "other key", "another package.json", "installed from web/: the top's", "no runner: entry script", "no runner: husky key"]) {
        expect(attemptOf(found, label).status, label).toBe("ok");
      }
      expect(readFileSync(path.join(dir, "pc/scripts/check.sh"), "utf8")).toBe(check);
      expect(readFileSync(path.join(dir, "lh/ci/lefthook-extra.yml"), "utf8")).toBe(extra);
      expect(JSON.parse(readFileSync(path.join(dir, "h4/package.json"), "utf8"))).toEqual({ name: "renamed", husky: { hooks: { "pre-commit": "true" } } });
      expect(readFileSync(path.join(dir, "h4web/web/package.json"), "utf8")).toBe(manifest);
      // The user's next commits: the runners call the stand-in, which runs what the configuration (and what it extends) names.
      commitNext(dir, standIn);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
