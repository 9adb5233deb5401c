// What git runs later, outside the sandbox, beyond .git/config and .git/hooks (git-control.test.ts):
// a script with requestFileSystem(".") alone wrote files that made the user's next ordinary git
// command run a program of its choosing. Each was shown with the git on the machine: the hooks
// directory the configuration names (husky's .husky/_, whose hooks run .husky/<hook>), a file the
// configuration includes, a .git/commondir moving the configuration to a directory the script
// filled, a bare repository the script made in the project, a program of the project a setting of
// another git command names (a trailer's command, git archive's tar filter, imap-send's tunnel,
// instaweb's daemon, alternateRefsCommand at fetch, an ext:: remote), and what the user's own
// configuration names for other repositories (init.templateDir, whose hooks and config git copies
// into each new repository, and uploadpack.packObjectsHook). Through the real CLI: each change
// is refused, reads still work, ordinary files are still written, and the git commands afterwards
// run nothing of the script's (no canary file).

import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };
const git = (cwd: string, ...args: string[]): string => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
/** A git command whose failure is fine: what matters is what it ran. */
const gitAnyway = (cwd: string, ...args: string[]): void => {
  try {
    git(cwd, ...args);
  } catch {
    // A repository the script could not complete may make git fail.
  }
};

/** husky 9's files: core.hooksPath is .husky/_, and each hook there runs .husky/<hook> with `sh -e`. */
const HUSKY_RUNNER = `#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
sh -e "$s" "$@"
`;
const HUSKY_HOOK = `#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n`;

describe("files git runs commands from, outside .git/config and .git/hooks", () => {
  it("the hooks directory the configuration names (husky), directly or through an include, and the included file itself", async () => {
    const { dir, cleanup } = realTempDir("tacit-git-later-");
    try {
      const marker = path.join(dir, "PWNED");
      const payload = `#!/bin/sh\ntouch ${marker}\n`;
      // A husky 9 project.
      const husky = path.join(dir, "husky");
      git(dir, "init", "-q", "husky");
      writeTree(husky, { ".husky/_/h": HUSKY_RUNNER, ".husky/_/pre-commit": HUSKY_HOOK, ".husky/pre-commit": "exit 0\n" });
      chmodSync(path.join(husky, ".husky/_/h"), 0o755);
      chmodSync(path.join(husky, ".husky/_/pre-commit"), 0o755);
      git(husky, "config", "core.hooksPath", ".husky/_");
      // A project sharing settings from its worktree: include.path = ../.gitconfig, which names a hooks directory.
      const shared = path.join(dir, "shared");
      git(dir, "init", "-q", "shared");
      writeTree(shared, { ".gitconfig": "[core]\n\thooksPath = tools/hooks\n", "tools/hooks/pre-commit": "#!/bin/sh\nexit 0\n" });
      chmodSync(path.join(shared, "tools/hooks/pre-commit"), 0o755);
      git(shared, "config", "include.path", "../.gitconfig");
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("husky hook", () => fs.access("husky/.husky/pre-commit").write(${lit(payload)}));
  attempt("husky runner", () => fs.access("husky/.husky/_/h").write(${lit(payload)}));
  attempt("husky new hook", () => fs.access("husky/.husky/_/post-commit").write(${lit(payload)}));
  attempt("included config", () => fs.access("shared/.gitconfig").append(${lit(`[core]\n\tfsmonitor = "touch ${marker}; false"\n`)}));
  attempt("included hooks", () => fs.access("shared/tools/hooks/pre-commit").write(${lit(payload)}));
  attempt("read husky hook", () => fs.access("husky/.husky/pre-commit").read());
  attempt("read included", () => fs.access("shared/.gitconfig").read().includes("hooksPath"));
  attempt("ordinary", () => fs.access("husky/.huskyrc-notes.txt").write("x"));
  attempt("ordinary tools", () => fs.access("shared/tools/build.sh").write("x"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["husky hook", "husky runner", "husky new hook", "included hooks"], /hooks directory this repository's configuration names \(core\.hooksPath/);
      expectRefused(found, ["included config"], /git reads as this repository's configuration .*include\.path.*Ask the user/);
      expect(attemptOf(found, "read husky hook")).toEqual({ status: "ok", value: "exit 0\n" });
      expect(attemptOf(found, "read included")).toEqual({ status: "ok", value: true });
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      expect(attemptOf(found, "ordinary tools").status).toBe("ok");
      // The user's next commits and status.
      git(husky, "commit", "-q", "--allow-empty", "-m", "next");
      git(shared, "status", "--porcelain");
      git(shared, "commit", "-q", "--allow-empty", "-m", "next");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("a program of the worktree the configuration names as a command (a diff's textconv, a clean filter, an alias)", async () => {
    const { dir, cleanup } = realTempDir("tacit-git-later-");
    try {
      const marker = path.join(dir, "PWNED");
      const payload = `#!/bin/sh\ntouch ${marker}\ncat "$@"\n`;
      git(dir, "init", "-q");
      writeTree(dir, {
        ".gitattributes": "*.txt diff=tc filter=strip\n",
        // Named through a link: the file it leads to is the program.
        "tools/impl/textconv.sh": '#!/bin/sh\ncat "$1"\n',
        "tools/textconv.sh": { symlink: "impl/textconv.sh" },
        "tools/strip.sh": "#!/bin/sh\ncat\n",
        "scripts/release.sh": "#!/bin/sh\nexit 0\n",
        "a.txt": "a\n",
        "web/index.html": "<p>a</p>\n",
      });
      for (const tool of ["tools/impl/textconv.sh", "tools/strip.sh", "scripts/release.sh"]) chmodSync(path.join(dir, tool), 0o755);
      git(dir, "config", "diff.tc.textconv", "./tools/textconv.sh");
      git(dir, "config", "filter.strip.clean", "sh tools/strip.sh");
      git(dir, "config", "alias.release", "!sh scripts/release.sh");
      // A directory a command goes to names no program: what is in it stays the script's to change.
      git(dir, "config", "alias.site", "!cd web/ && true");
      git(dir, "add", "-A");
      git(dir, "commit", "-q", "-m", "first");
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("textconv", () => fs.access("tools/textconv.sh").write(${lit(payload)}));
  attempt("textconv's target", () => fs.access("tools/impl/textconv.sh").write(${lit(payload)}));
  attempt("filter", () => fs.access("tools/strip.sh").write(${lit(payload)}));
  attempt("alias", () => fs.access("scripts/release.sh").write(${lit(payload)}));
  attempt("read textconv", () => fs.access("tools/textconv.sh").read().startsWith("#!"));
  attempt("ordinary", () => fs.access("a.txt").write("b\\n"));
  attempt("ordinary tool", () => fs.access("tools/other.sh").write("x"));
  attempt("in a directory an alias goes to", () => fs.access("web/index.html").write("<p>b</p>\\n"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["textconv", "textconv's target", "filter", "alias"], /a program this repository's git configuration runs \((diff\.tc\.textconv|filter\.strip\.clean|alias\.release) = .*Ask the user/);
      expect(attemptOf(found, "read textconv")).toEqual({ status: "ok", value: true });
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      expect(attemptOf(found, "ordinary tool").status).toBe("ok");
      expect(attemptOf(found, "in a directory an alias goes to").status).toBe("ok");
      // The user's next diff, status, add and alias.
      git(dir, "diff");
      git(dir, "status", "--porcelain");
      git(dir, "add", "-A");
      git(dir, "release");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("a program a command names through shell quoting, an escape, or after an operator, read as the shell reads it", async () => {
    const { dir, cleanup } = realTempDir("tacit-git-later-");
    try {
      const marker = path.join(dir, "PWNED");
      const payload = `#!/bin/sh\ntouch ${marker}\n`;
      git(dir, "init", "-q");
      writeTree(dir, {
        "scripts/deploy.sh": "#!/bin/sh\nexit 0\n",
        "tools/x.sh": "#!/bin/sh\nexit 0\n",
        "tools/a.sh": "#!/bin/sh\nexit 0\n",
        "tools/b.sh": "#!/bin/sh\nexit 0\n",
        "my tools/run.sh": "#!/bin/sh\nexit 0\n",
      });
      for (const tool of ["tools/x.sh", "tools/a.sh", "tools/b.sh", "my tools/run.sh"]) chmodSync(path.join(dir, tool), 0o755);
      // Each runs the file the shell makes of its words: scripts/deploy.sh, tools/x.sh, tools/b.sh, "my tools/run.sh".
      git(dir, "config", "alias.deploy", `!sh scr"ipts"/deploy.sh`);
      git(dir, "config", "alias.x", "!./to\\ols/x.sh");
      git(dir, "config", "alias.both", "!./tools/a.sh;./tools/b.sh");
      git(dir, "config", "alias.spaced", `!"./my tools/run.sh"`);
      git(dir, "commit", "-q", "--allow-empty", "-m", "first");
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("quoted piece", () => fs.access("scripts/deploy.sh").write(${lit(payload)}));
  attempt("escaped", () => fs.access("tools/x.sh").write(${lit(payload)}));
  attempt("after an operator", () => fs.access("tools/b.sh").write(${lit(payload)}));
  attempt("quoted space", () => fs.access("my tools/run.sh").write(${lit(payload)}));
  attempt("ordinary", () => fs.access("tools/other.sh").write("x"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["quoted piece", "escaped", "after an operator", "quoted space"], /a program this repository's git configuration runs \(alias\.(deploy|x|both|spaced) = .*Ask the user/);
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      for (const alias of ["deploy", "x", "both", "spaced"]) git(dir, alias);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("a commondir moving a repository's configuration, and repositories the script assembles in the project", async () => {
    const { dir, cleanup } = realTempDir("tacit-git-later-");
    try {
      const marker = path.join(dir, "PWNED");
      git(dir, "init", "-q");
      git(dir, "commit", "-q", "--allow-empty", "-m", "first");
      const head = git(dir, "rev-parse", "HEAD").trim();
      const branch = git(dir, "symbolic-ref", "--short", "HEAD").trim();
      const evil = `[core]\n\tfsmonitor = "touch ${marker}; false"\n\tpager = "touch ${marker}; cat"\n[protocol "ext"]\n\tallow = always\n[remote "origin"]\n\turl = "ext::sh -c touch% ${marker}"\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n`;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  // .git/commondir -> elsewhere, a directory holding objects (borrowed), refs and a config of the script's.
  fs.access("elsewhere/objects/info").mkdir();
  fs.access("elsewhere/objects/info/alternates").write(${lit(`${dir}/.git/objects\n`)});
  fs.access("elsewhere/refs/heads").mkdir();
  fs.access(${lit(`elsewhere/refs/heads/${branch}`)}).write(${lit(`${head}\n`)});
  fs.access("elsewhere/config").write(${lit(evil)});
  attempt("commondir", () => fs.access(".git/commondir").write("../elsewhere\\n"));
  // A bare repository made config last, ...
  fs.access("bare/objects/info").mkdir();
  fs.access("bare/objects/info/alternates").write(${lit(`${dir}/.git/objects\n`)});
  fs.access("bare/refs").mkdir();
  fs.access("bare/HEAD").write(${lit(`${head}\n`)});
  attempt("bare config", () => fs.access("bare/config").write(${lit(evil)}));
  attempt("bare hooks", () => fs.access("bare/hooks").mkdir());
  // ... or config first: the file that completes the repository is refused.
  fs.access("late").mkdir();
  fs.access("late/config").write(${lit(evil)});
  fs.access("late/objects").mkdir();
  fs.access("late/HEAD").write(${lit(`${head}\n`)});
  attempt("late refs", () => fs.access("late/refs/heads").mkdir());
  // ... or with a commondir beside HEAD.
  fs.access("pointer").mkdir();
  fs.access("pointer/HEAD").write(${lit(`${head}\n`)});
  attempt("pointer commondir", () => fs.access("pointer/commondir").write("../elsewhere\\n"));
  attempt("read git config", () => fs.access(".git/config").read().includes("[core]"));
  attempt("read bare HEAD", () => fs.access("bare/HEAD").read().trim());
  attempt("ordinary config", () => (fs.access("app").mkdir(), fs.access("app/config").write("x")));
  attempt("ordinary objects", () => fs.access("bare/objects/info/packs").write(""));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["commondir", "bare config", "bare hooks", "late refs", "pointer commondir"], /git repository/);
      expect(attemptOf(found, "read git config")).toEqual({ status: "ok", value: true });
      expect(attemptOf(found, "read bare HEAD")).toEqual({ status: "ok", value: head });
      expect(attemptOf(found, "ordinary config").status).toBe("ok");
      expect(attemptOf(found, "ordinary objects").status).toBe("ok");
      expect(existsSync(path.join(dir, ".git", "commondir"))).toBe(false);
      // The user's next commands: in the project, and in the directories the script made (as a prompt or an editor does).
      git(dir, "status", "--porcelain");
      for (const sub of ["bare", "late", "pointer", "elsewhere"]) {
        gitAnyway(path.join(dir, sub), "status");
        gitAnyway(path.join(dir, sub), "log", "-1");
        gitAnyway(path.join(dir, sub), "fetch", "-q", "origin");
      }
      expect(readFileSync(path.join(dir, "app", "config"), "utf8")).toBe("x");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("a program of the worktree named by a setting of a command other than diff, status or an alias (trailers, git archive, imap-send, instaweb, alternates at fetch, an ext:: remote, send-email, git gui, git svn, configuration-based hooks)", async () => {
    const { dir, cleanup } = realTempDir("tacit-git-later-");
    try {
      // Each program touches a canary of its own: PWNED-<program>.
      const payload = (tool: string): string => `#!/bin/sh\ntouch ${path.join(dir, `PWNED-${tool}`)}\n`;
      const canaries = (): string[] => readdirSync(dir).filter((name) => name.startsWith("PWNED"));
      // The project borrows the objects of upstream (objects/info/alternates), as a clone made with --reference does.
      const upstream = path.join(dir, "upstream");
      git(dir, "init", "-q", "upstream");
      git(upstream, "commit", "-q", "--allow-empty", "-m", "first");
      git(dir, "clone", "-q", "--reference", upstream, upstream, "proj");
      const proj = path.join(dir, "proj");
      const tools = ["trailer.sh", "tar.sh", "tunnel.sh", "lighttpd-wrapper", "altrefs.sh", "to.sh", "sendmail", "guitool.sh", "authors.sh", "hook.sh", "remote script.sh", "rewrite.sh"];
      // The tar filter reads its input before it exits: git archive writes the tar to it and fails (EPIPE) when the
      // filter has already gone, as happened once in CI.
      const program = (tool: string): string => (tool === "tar.sh" ? "#!/bin/sh\ncat >/dev/null\n" : "#!/bin/sh\nexit 0\n");
      writeTree(proj, { "a.txt": "a\n", ...Object.fromEntries(tools.map((tool) => [`tools/${tool}`, program(tool)])) });
      for (const tool of tools) chmodSync(path.join(proj, "tools", tool), 0o755);
      git(proj, "add", "-A");
      git(proj, "commit", "-q", "-m", "tools");
      git(proj, "config", "trailer.sign.key", "Signed-by: ");
      git(proj, "config", "trailer.sign.command", "./tools/trailer.sh");
      git(proj, "config", "tar.tgz.command", "sh tools/tar.sh");
      git(proj, "config", "imap.tunnel", "./tools/tunnel.sh");
      git(proj, "config", "imap.host", "imap.example.com");
      git(proj, "config", "imap.folder", "drafts");
      git(proj, "config", "instaweb.httpd", "./tools/lighttpd-wrapper");
      git(proj, "config", "core.alternateRefsCommand", "./tools/altrefs.sh");
      git(proj, "config", "sendemail.toCmd", "./tools/to.sh");
      // An absolute smtpServer is a sendmail-like program.
      git(proj, "config", "sendemail.smtpServer", path.join(proj, "tools", "sendmail"));
      git(proj, "config", "guitool.lint.cmd", "sh tools/guitool.sh");
      git(proj, "config", "svn.authorsProg", "./tools/authors.sh");
      git(proj, "config", "hook.lint.event", "pre-commit");
      git(proj, "config", "hook.lint.command", "./tools/hook.sh");
      // A remote whose URL is a command (ext::, where protocol.ext.allow lets it), directly ("% " is a space in a word) or by a rewrite.
      git(proj, "config", "protocol.ext.allow", "always");
      git(proj, "config", "remote.mirror.url", "ext::sh tools/remote% script.sh %S");
      git(proj, "config", "url.ext::./tools/rewrite.sh %S .insteadOf", "corp:");
      git(proj, "config", "remote.corp.url", "corp:project");
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("trailer", () => fs.access("tools/trailer.sh").write(${lit(payload("trailer.sh"))}));
  attempt("tar", () => fs.access("tools/tar.sh").write(${lit(payload("tar.sh"))}));
  attempt("imap tunnel", () => fs.access("tools/tunnel.sh").write(${lit(payload("tunnel.sh"))}));
  attempt("instaweb httpd", () => fs.access("tools/lighttpd-wrapper").write(${lit(payload("lighttpd-wrapper"))}));
  attempt("alternate refs", () => fs.access("tools/altrefs.sh").write(${lit(payload("altrefs.sh"))}));
  attempt("send-email toCmd", () => fs.access("tools/to.sh").write(${lit(payload("to.sh"))}));
  attempt("send-email smtpServer", () => fs.access("tools/sendmail").write(${lit(payload("sendmail"))}));
  attempt("guitool", () => fs.access("tools/guitool.sh").write(${lit(payload("guitool.sh"))}));
  attempt("svn authorsProg", () => fs.access("tools/authors.sh").write(${lit(payload("authors.sh"))}));
  attempt("config-based hook", () => fs.access("tools/hook.sh").write(${lit(payload("hook.sh"))}));
  attempt("ext remote", () => fs.access("tools/remote script.sh").write(${lit(payload("remote-script.sh"))}));
  attempt("ext rewrite", () => fs.access("tools/rewrite.sh").write(${lit(payload("rewrite.sh"))}));
  attempt("read", () => fs.access("tools/tar.sh").read().startsWith("#!"));
  attempt("ordinary", () => fs.access("tools/other.sh").write("x"));
});
`;
      const r = await tacit(proj, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["trailer", "tar", "imap tunnel", "instaweb httpd", "alternate refs", "send-email toCmd", "send-email smtpServer", "guitool", "svn authorsProg", "config-based hook", "ext remote", "ext rewrite"],
        /a program this repository's git configuration runs \((trailer\.sign\.command|tar\.tgz\.command|imap\.tunnel|instaweb\.httpd|core\.alternaterefscommand|sendemail\.tocmd|sendemail\.smtpserver|guitool\.lint\.cmd|svn\.authorsprog|hook\.lint\.command|remote\.mirror\.url|url\.ext::\.\/tools\/rewrite\.sh %S \.insteadof) = .*Ask the user/,
      );
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: true });
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      // The user's next commands that run them (git 2.39 ran each of these programs at them). Not run here: git
      // send-email, git gui and git svn (not installed on this machine: send-email needs Perl modules, gui Tk, svn
      // Subversion's bindings) and configuration-based hooks (git 2.54 and later); their refusals are shown above.
      execFileSync("git", ["interpret-trailers"], { cwd: proj, env: GIT_ENV, input: "subject\n" });
      git(proj, "commit", "-q", "--allow-empty", "-m", "next", "--trailer", "Signed-by: t");
      git(proj, "archive", "--format=tgz", "-o", path.join(dir, "out.tgz"), "HEAD");
      const patch = git(proj, "format-patch", "-1", "--stdout", "HEAD~1");
      try {
        execFileSync("git", ["imap-send"], { cwd: proj, env: GIT_ENV, input: patch, stdio: ["pipe", "ignore", "ignore"], timeout: 20_000 });
      } catch {
        // The tunnel ends at once: imap-send fails; what matters is what it ran.
      }
      gitAnyway(proj, "instaweb", "--start");
      gitAnyway(proj, "instaweb", "--stop");
      git(upstream, "commit", "-q", "--allow-empty", "-m", "second");
      git(proj, "fetch", "-q", "origin");
      gitAnyway(proj, "fetch", "-q", "mirror");
      gitAnyway(proj, "fetch", "-q", "corp");
      expect(canaries()).toEqual([]);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("what the user's configuration names for commands run in other repositories: a template directory (init.templateDir), an upload-pack hook", async () => {
    const { dir, cleanup } = realTempDir("tacit-git-later-");
    try {
      // Each touches a canary of its own: PWNED-<what>.
      const canary = (what: string): string => path.join(dir, `PWNED-${what}`);
      const canaries = (): string[] => readdirSync(dir).filter((name) => name.startsWith("PWNED"));
      // The user's configuration (GIT_CONFIG_GLOBAL, for tacit and git alike) names files a project of theirs keeps.
      const globalConfig = path.join(dir, "home", "gitconfig");
      writeTree(dir, { "home/gitconfig": "" });
      const env = { ...GIT_ENV, GIT_CONFIG_GLOBAL: globalConfig };
      const run = (cwd: string, ...args: string[]): string => execFileSync("git", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      run(dir, "init", "-q", "proj");
      const proj = path.join(dir, "proj");
      writeTree(proj, { "git-templates/hooks/pre-commit": "#!/bin/sh\nexit 0\n", "tools/pack-hook.sh": '#!/bin/sh\nexec "$@"\n' });
      chmodSync(path.join(proj, "git-templates/hooks/pre-commit"), 0o755);
      chmodSync(path.join(proj, "tools/pack-hook.sh"), 0o755);
      run(proj, "add", "-A");
      run(proj, "commit", "-q", "-m", "first");
      run(dir, "config", "--global", "init.templateDir", path.join(proj, "git-templates"));
      run(dir, "config", "--global", "uploadpack.packObjectsHook", path.join(proj, "tools", "pack-hook.sh"));
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("template hook", () => fs.access("git-templates/hooks/pre-commit").write(${lit(`#!/bin/sh\ntouch ${canary("pre-commit")}\n`)}));
  attempt("template new hook", () => fs.access("git-templates/hooks/post-checkout").write(${lit(`#!/bin/sh\ntouch ${canary("post-checkout")}\n`)}));
  attempt("template config", () => fs.access("git-templates/config").write(${lit(`[core]\n\tfsmonitor = "touch ${canary("fsmonitor")}; false"\n`)}));
  attempt("pack hook", () => fs.access("tools/pack-hook.sh").write(${lit(`#!/bin/sh\ntouch ${canary("pack-hook")}\nexec "$@"\n`)}));
  attempt("read template", () => fs.access("git-templates/hooks/pre-commit").read().startsWith("#!"));
  attempt("ordinary", () => fs.access("tools/other.sh").write("x"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: proj, env: { GIT_CONFIG_GLOBAL: globalConfig } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["template hook", "template new hook", "template config"], /template directory git copies into every repository it makes \(init\.templateDir = .*Ask the user/);
      expectRefused(found, ["pack hook"], /a program this repository's git configuration runs \(uploadpack\.packobjectshook = .*Ask the user/);
      expect(attemptOf(found, "read template")).toEqual({ status: "ok", value: true });
      expect(attemptOf(found, "ordinary").status).toBe("ok");
      // The user's next repositories, made with git init and with a clone served by upload-pack (which runs the hook), and commits there.
      run(dir, "init", "-q", "fresh");
      run(path.join(dir, "fresh"), "commit", "-q", "--allow-empty", "-m", "first");
      run(path.join(dir, "fresh"), "status", "--porcelain");
      run(dir, "clone", "-q", "--no-local", proj, "copy");
      run(path.join(dir, "copy"), "checkout", "-q", "-b", "other");
      run(path.join(dir, "copy"), "commit", "-q", "--allow-empty", "-m", "next");
      expect(canaries()).toEqual([]);
    } finally {
      cleanup();
    }
  }, 60_000);
});
