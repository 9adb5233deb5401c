// --confine-commands (runner/exec/confinement.ts): an allowed command's path arguments are bound
// by the file-system scope. Without it, `cat .env`, `grep -r` over a tree holding a classified
// file, `cat ~/.ssh/id_rsa` and `tee ../outside` read secrets and wrote outside the allowed roots
// through the real CLI (the first test shows it still does: that is the README's "full authority").
// With it the same commands find the secrets covered and everything outside the roots
// read-only, while ordinary work (ls, git status, a node script, /tmp) goes on. The layout lives
// outside /tmp (confined commands get a private /tmp, which would hide it and prove less).

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { canonicalJson } from "../../runner/audit/digest.js";
import { chainOf, eventHashOfJson, lineText, ZERO_CHAIN } from "../../runner/audit/line.js";
import { writerLockFor } from "../../runner/audit/log.js";
import { CommandConfinement, RootsChangedDuringSetup, SYSTEM_PLACES, setupFailure } from "../../runner/exec/confinement.js";
import { ClassifiedPaths, DEFAULT_CLASSIFIED_PATHS } from "../../runner/fs/classified-paths.js";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { childEnv, connectServe, createSession, fileOnce, installTacitIn, repoRoot, runCli, runInSession, runScript } from "../helpers.js";
import { answeredLifeline, ATTEMPT_PRELUDE, skipWithoutMountNamespace, attemptOf, attempts, expectRefused, lit, makeCanary, makeExecutable, realTempDir, tacit, writeTree } from "./fixtures.js";

type ExecResult = { exitCode: number; stdout: string; stderr: string };

const COMMANDS = ["cat", "grep", "tee", "cp", "ls", "git", "node", "sh"];

/** A temporary directory under /var/tmp for a test of confined commands, skipped where they get no mount namespace; removed when the test ends. */
function confinementDir(ctx: TestContext): string {
  skipWithoutMountNamespace(ctx);
  const { dir, cleanup } = realTempDir("tacit-confine-", "/var/tmp");
  ctx.onTestFinished(cleanup);
  return dir;
}

/**
 * confinementDir with layout() in it, and the environment of a run whose HOME is the layout's and
 * whose tacit home is DIR/tacit-home (`tacitHome`), for the tests that look at what tacit keeps there.
 */
function layoutWithHome(ctx: TestContext): ReturnType<typeof layout> & { dir: string; tacitHome: string; env: Record<string, string> } {
  const dir = confinementDir(ctx);
  const laid = layout(dir);
  const tacitHome = path.join(dir, "tacit-home");
  return { ...laid, dir, tacitHome, env: { HOME: laid.home, TACIT_HOME: tacitHome } };
}

/** A home with secrets, a project (the working directory and only root) with classified files, and a directory beside it. */
function layout(base: string): { home: string; project: string; outside: string; canaries: Record<string, string> } {
  const canaries = { env: makeCanary(), deep: makeCanary(), ssh: makeCanary(), aws: makeCanary() };
  writeTree(base, {
    "home/.ssh/id_rsa": `${canaries.ssh}\n`,
    "home/.aws/credentials": `${canaries.aws}\n`,
    "home/.bashrc": "# the user's own\n",
    "project/.env": `${canaries.env}\n`,
    "project/src/deep/.env.local": `${canaries.deep}\n`,
    "project/src/index.ts": "export const a = 1;\n",
    "project/readme.txt": "hello\n",
    "outside/keep.txt": "kept\n",
  });
  const project = path.join(base, "project");
  execFileSync("git", ["init", "-q"], { cwd: project });
  execFileSync("git", ["add", "readme.txt"], { cwd: project });
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"], { cwd: project });
  return { home: path.join(base, "home"), project, outside: path.join(base, "outside"), canaries };
}

/** The attacks and the ordinary work, each reported as an attempt. */
function script(home: string, outside: string, scratch: string): string {
  return `${ATTEMPT_PRELUDE}
requestExecPermission(${JSON.stringify(COMMANDS)}, (proc) => {
  attempt("cat .env", () => proc.exec("cat", [".env"]));
  attempt("grep -r", () => proc.exec("grep", ["-r", "canary", "src"]));
  attempt("cat id_rsa", () => proc.exec("cat", [${lit(path.join(home, ".ssh/id_rsa"))}]));
  attempt("cp aws", () => proc.exec("cp", [${lit(path.join(home, ".aws/credentials"))}, "copied.txt"]));
  attempt("tee outside", () => proc.exec("tee", [${lit(path.join(outside, "written.txt"))}], { input: "from tee" }));
  attempt("cp outside", () => proc.exec("cp", ["readme.txt", "../outside/copied.txt"]));
  attempt("tee bashrc", () => proc.exec("tee", ["-a", ${lit(path.join(home, ".bashrc"))}], { input: "touch PWNED" }));
  attempt("ls", () => proc.exec("ls", ["-a"]));
  attempt("git status", () => proc.exec("git", ["status", "--porcelain"]));
  attempt("node", () => proc.exec("node", ["-e", "require('fs').writeFileSync('made-by-node.txt', 'ok'); console.log(require('fs').readFileSync('readme.txt', 'utf8'))"]));
  attempt("tmp", () => proc.exec("sh", ["-c", "echo scratch > $0 && cat $0", ${lit(scratch)}]));
});
`;
}

function execResult(found: ReturnType<typeof attempts>, label: string): ExecResult {
  const attempt = attemptOf(found, label);
  expect(attempt.status, `${label}: ${JSON.stringify(attempt.value)}`).toBe("ok");
  return attempt.value as ExecResult;
}

describe("allowed commands' file arguments", () => {
  it("reach secrets and places outside the roots without --confine-commands (the documented full authority)", async () => {
    const { dir, cleanup } = realTempDir("tacit-confine-", "/var/tmp");
    const scratch = `/tmp/tacit-confined-${path.basename(dir)}`;
    try {
      const { home, project, outside, canaries } = layout(dir);
      const r = await tacit(project, script(home, outside, scratch), ["--command-permissions", COMMANDS.join(",")], { HOME: home });
      expect(r.code, r.stderr).toBe(0);
      for (const canary of [canaries.env, canaries.deep, canaries.ssh]) expect(r.stdout).toContain(canary);
      expect(readFileSync(path.join(project, "copied.txt"), "utf8")).toContain(canaries.aws);
      expect(readFileSync(path.join(outside, "written.txt"), "utf8")).toBe("from tee");
      expect(existsSync(path.join(outside, "copied.txt"))).toBe(true);
      expect(readFileSync(path.join(home, ".bashrc"), "utf8")).toContain("touch PWNED");
    } finally {
      rmSync(scratch, { force: true });
      cleanup();
    }
  });

  it("are bound by the roots and the classified paths with --confine-commands, and ordinary commands still work", async (ctx) => {
    skipWithoutMountNamespace(ctx);
    const { dir, cleanup } = realTempDir("tacit-confine-", "/var/tmp");
    const scratch = `/tmp/tacit-confined-${path.basename(dir)}`;
    try {
      const { home, project, outside, canaries } = layout(dir);
      const r = await tacit(project, script(home, outside, scratch), ["--command-permissions", COMMANDS.join(","), "--confine-commands"], { HOME: home });
      expect(r.code, r.stderr).toBe(0);
      for (const canary of Object.values(canaries)) {
        expect(r.stdout).not.toContain(canary);
        expect(r.stderr).not.toContain(canary);
      }
      const found = attempts(r.stdout);
      // The classified files read as empty ones; the home's secrets are not there.
      expect(execResult(found, "cat .env")).toEqual({ exitCode: 0, stdout: "", stderr: "" });
      expect(execResult(found, "grep -r").exitCode).toBe(1); // no match: the .env.local it reads is empty
      expect(execResult(found, "cat id_rsa").exitCode).not.toBe(0);
      expect(execResult(found, "cp aws").exitCode).not.toBe(0);
      // Nothing written outside the roots, nor into the home's configuration.
      expect(execResult(found, "tee outside").stderr).toContain("Read-only file system");
      expect(execResult(found, "cp outside").stderr).toContain("Read-only file system");
      expect(execResult(found, "tee bashrc").exitCode).not.toBe(0);
      expect(existsSync(path.join(outside, "written.txt"))).toBe(false);
      expect(existsSync(path.join(outside, "copied.txt"))).toBe(false);
      expect(readFileSync(path.join(home, ".bashrc"), "utf8")).toBe("# the user's own\n");
      expect(existsSync(path.join(project, "copied.txt"))).toBe(false);
      // The files themselves are untouched.
      expect(readFileSync(path.join(project, ".env"), "utf8")).toBe(`${canaries.env}\n`);
      // Ordinary work: listing, git, a node script writing in the root, a private /tmp.
      expect(execResult(found, "ls").stdout).toContain("readme.txt");
      const git = execResult(found, "git status");
      expect(git.exitCode, git.stderr).toBe(0);
      expect(git.stdout).toContain("?? src/");
      const node = execResult(found, "node");
      expect(node).toMatchObject({ exitCode: 0, stdout: "hello\n\n" });
      expect(readFileSync(path.join(project, "made-by-node.txt"), "utf8")).toBe("ok");
      expect(execResult(found, "tmp")).toMatchObject({ exitCode: 0, stdout: "scratch\n" });
      expect(existsSync(scratch)).toBe(false);
    } finally {
      rmSync(scratch, { force: true });
      cleanup();
    }
  });

  it("stay bound when the command tries to undo the confinement (umount a cover, remount / writable)", async (ctx) => {
    const dir = confinementDir(ctx);
    const { home, project, outside, canaries } = layout(dir);
    const escape = [
      "umount .env; umount -l .env; cat .env",
      `umount -l ${path.join(home, ".ssh")}; cat ${path.join(home, ".ssh/id_rsa")}`,
      "mount -o remount,bind,rw /; umount -l /; mount --bind -o rw / /mnt",
      `echo escaped > ${path.join(outside, "escaped.txt")}`,
      `echo escaped >> ${path.join(home, ".bashrc")}`,
    ].join("; ");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("escape", () => proc.exec("sh", ["-c", ${lit(escape)}])); });
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const escaped = execResult(attempts(r.stdout), "escape");
    for (const canary of Object.values(canaries)) {
      expect(r.stdout).not.toContain(canary);
      expect(r.stderr).not.toContain(canary);
    }
    expect(escaped.stderr).toContain("Read-only file system");
    expect(existsSync(path.join(outside, "escaped.txt"))).toBe(false);
    expect(readFileSync(path.join(home, ".bashrc"), "utf8")).toBe("# the user's own\n");
  });

  it("cannot plant what git runs unconfined later (a hook, core.fsmonitor), while git itself still works", async (ctx) => {
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    const hook = path.join(project, ".git/hooks/pre-commit");
    // The repository renamed away and a new .git made of its objects, with a config and hook of the script's.
    const replace = [
      "mv .git .git-old && mkdir .git && mv .git-old/objects .git-old/refs .git-old/HEAD .git-old/index .git/",
      "cp .git-old/config .git/config && printf '[core]\\n\\tfsmonitor = touch FSMONITOR_RAN; false\\n' >> .git/config",
      "mkdir .git/hooks && printf '#!/bin/sh\\ntouch HOOK_RAN\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    ].join(" && ");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh", "git"], (proc) => {
  attempt("hook", () => proc.exec("sh", ["-c", ${lit(`printf '#!/bin/sh\ntouch HOOK_RAN\n' > ${hook} && chmod +x ${hook}`)}]));
  attempt("fsmonitor", () => proc.exec("git", ["config", "core.fsmonitor", "touch FSMONITOR_RAN"]));
  attempt("replace", () => proc.exec("sh", ["-c", ${lit(replace)}]));
  attempt("commit", () => proc.exec("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--allow-empty", "-qm", "confined"]));
});
`, ["--command-permissions", "sh,git", "--confine-commands"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(execResult(found, "hook").stderr).toContain("Read-only file system");
    expect(execResult(found, "fsmonitor").exitCode).not.toBe(0);
    expect(execResult(found, "replace").stderr).toContain("cannot move '.git' to '.git-old': Device or resource busy");
    expect(existsSync(path.join(project, ".git-old"))).toBe(false);
    expect(existsSync(hook)).toBe(false);
    expect(readFileSync(path.join(project, ".git/config"), "utf8")).not.toContain("fsmonitor");
    // The user's next git commands run nothing of the script's; a commit made confined is there.
    const commit = execResult(found, "commit");
    expect(commit.exitCode, commit.stderr).toBe(0);
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--allow-empty", "-qm", "user"], { cwd: project, env: { ...process.env, HOME: home } });
    expect(existsSync(path.join(project, "HOOK_RAN"))).toBe(false);
    expect(existsSync(path.join(project, "FSMONITOR_RAN"))).toBe(false);
    expect(execFileSync("git", ["log", "--format=%s"], { cwd: project, encoding: "utf8" })).toBe("user\nconfined\ninit\n");
  });

  it("cannot change tacit's own code in the roots, which tacit runs unconfined at its next start", async (ctx) => {
    // A project that has tacit as a dependency holds it inside the root. A confined `sh` appended
    // a line to node_modules/tacit/dist/bundle/code-cache.cjs (loaded first at every start), and
    // the next `tacit --version` ran it, with the user's full authority.
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    const installed = installTacitIn(project);
    const bundled = path.join(installed, "dist", "bundle", "code-cache.cjs");
    const before = readFileSync(bundled, "utf8");
    const proof = path.join(project, "RAN_AS_TACIT");
    const line = `require("fs").writeFileSync(${JSON.stringify(proof)}, "unconfined");`;
    const bin = path.join(installed, "bin", "tacit.js");
    const append = `printf '\\n%s\\n' "$0" >> node_modules/tacit/dist/bundle/code-cache.cjs`;
    const r = await runScript(`${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("append", () => proc.exec("sh", ["-c", ${lit(append)}, ${lit(line)}]));
  attempt("code cache", () => proc.exec("sh", ["-c", "mkdir -p node_modules/tacit/dist/bundle/.v8-cache && echo x > node_modules/tacit/dist/bundle/.v8-cache/tacit.cjs.bin"]));
  attempt("replace", () => proc.exec("sh", ["-c", "mv node_modules/tacit node_modules/tacit-old || mv node_modules node_modules-old"]));
  attempt("ordinary work", () => proc.exec("sh", ["-c", "echo made > made.txt && cat made.txt"]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { cwd: project, env: { HOME: home }, bin });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(execResult(found, "append").stderr).toContain("Read-only file system");
    expect(execResult(found, "code cache").stderr).toContain("Read-only file system");
    expect(execResult(found, "replace").stderr).toContain("Device or resource busy");
    expect(execResult(found, "ordinary work").stdout).toBe("made\n");
    expect(readFileSync(bundled, "utf8")).toBe(before);
    expect(existsSync(path.join(project, "node_modules", "tacit-old"))).toBe(false);
    // The next start of the installed tacit runs nothing of the script's.
    const next = await runCli(["--version"], { cwd: project, env: { HOME: home }, bin });
    expect(next.code, next.stderr).toBe(0);
    expect(existsSync(proof)).toBe(false);
  });

  it("cannot change what `npx tacit` runs: the node_modules/.bin/tacit link or shim, its directory, a package link on its way", async (ctx) => {
    // tacit's own code was read-only to a confined command, but not the link `npx tacit` starts it
    // by: a confined `sh` ran `ln -sfn ../../payload.js node_modules/.bin/tacit`, and the next
    // `npx --offline tacit --version` in the project ran payload.js, with the user's full authority.
    // Shown the same for a pnpm-style shim (a shell script, not a link) in a package of the
    // project, and for a workspace whose node_modules/tacit is a link the command replaced.
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    const installed = installTacitIn(project);
    const bin = path.join(installed, "bin", "tacit.js");
    const proof = path.join(dir, "RAN_AS_NPX_TACIT");
    writeFileSync(path.join(project, "payload.js"), `#!/usr/bin/env node\nrequire("fs").writeFileSync(${JSON.stringify(proof)}, "unconfined");\n`, { mode: 0o755 });
    writeTree(project, {
      "package.json": JSON.stringify({ name: "project", version: "1.0.0", private: true }),
      "sub/package.json": JSON.stringify({ name: "sub", version: "1.0.0", private: true }),
      "sub/node_modules/.bin/tacit": `#!/bin/sh\nexec node ${JSON.stringify(bin)} "$@"\n`,
      "ws/package.json": JSON.stringify({ name: "ws", version: "1.0.0", private: true }),
    });
    makeExecutable(path.join(project, "sub/node_modules/.bin/tacit"));
    mkdirSync(path.join(project, "node_modules", ".bin"));
    symlinkSync("../tacit/bin/tacit.js", path.join(project, "node_modules", ".bin", "tacit"));
    mkdirSync(path.join(project, "ws", "node_modules", ".bin"), { recursive: true });
    symlinkSync("../../node_modules/tacit", path.join(project, "ws", "node_modules", "tacit"));
    symlinkSync("../tacit/bin/tacit.js", path.join(project, "ws", "node_modules", ".bin", "tacit"));
    const attacks: Record<string, string> = {
      relink: "ln -sfn ../../payload.js node_modules/.bin/tacit",
      "swap .bin": "mv node_modules/.bin node_modules/.bin-old && mkdir node_modules/.bin && ln -s ../../payload.js node_modules/.bin/tacit",
      shim: `printf '#!/bin/sh\\nexec node %s\\n' "$PWD/payload.js" > sub/node_modules/.bin/tacit`,
      "replace the shim": `rm -f sub/node_modules/.bin/tacit; printf '#!/bin/sh\\nexec node %s\\n' "$PWD/payload.js" > sub/node_modules/.bin/tacit; chmod +x sub/node_modules/.bin/tacit`,
      "package link": "rm ws/node_modules/tacit && mkdir -p ws/node_modules/tacit/bin && cp payload.js ws/node_modules/tacit/bin/tacit.js",
      "ordinary work": "echo made > made.txt && cat made.txt",
    };
    const r = await runScript(`${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
${Object.entries(attacks).map(([label, command]) => `  attempt(${lit(label)}, () => proc.exec("sh", ["-c", ${lit(command)}]));`).join("\n")}
});
`, ["--command-permissions", "sh", "--confine-commands"], { cwd: project, env: { HOME: home, TACIT_HOME: path.join(dir, "tacit-home") }, bin });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(execResult(found, "relink").stderr).toContain("Read-only file system");
    expect(execResult(found, "swap .bin").stderr).toContain("Device or resource busy");
    expect(execResult(found, "shim").stderr).toContain("Read-only file system");
    expect(execResult(found, "replace the shim").stderr).toContain("Device or resource busy");
    expect(execResult(found, "package link").stderr).toContain("Read-only file system");
    expect(execResult(found, "ordinary work").stdout).toBe("made\n");
    expect(readlinkSync(path.join(project, "node_modules", ".bin", "tacit"))).toBe("../tacit/bin/tacit.js");
    expect(readlinkSync(path.join(project, "ws", "node_modules", "tacit"))).toBe("../../node_modules/tacit");
    // The user's next `npx tacit` in each of the three places runs tacit, nothing of the script's.
    const npx = path.join(path.dirname(process.execPath), "npx");
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
    for (const where of [project, path.join(project, "sub"), path.join(project, "ws")]) {
      const next = spawnSync(process.execPath, [realpathSync(npx), "--offline", "tacit", "--version"], { cwd: where, env: { ...env, HOME: home }, encoding: "utf8", timeout: 60_000 });
      expect(next.stdout.trim(), `${where}: ${next.stderr}`).toBe(JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")).version);
    }
    expect(existsSync(proof)).toBe(false);
  });

  it("are refused where a link to a file that decides how tacit starts lies in the root itself, which cannot be kept read-only", async (ctx) => {
    // The project's .npmrc a link (a dotfiles manager's): the file it leads to was read-only, but a
    // confined `sh` replaced the link, in the root, with an .npmrc whose node-options the next
    // `npx tacit` loads into tacit. Only the link's directory could keep it, here the whole root.
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    writeTree(dir, { "dotfiles/npmrc": "fund=false\n" });
    symlinkSync(path.join(dir, "dotfiles/npmrc"), path.join(project, ".npmrc"));
    const replace = "touch COMMAND_RAN; rm .npmrc && echo 'node-options=--require ./payload.cjs' > .npmrc";
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("replace", () => proc.exec("sh", ["-c", ${lit(replace)}])); });
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home, TACIT_HOME: path.join(dir, "tacit-home") });
    expect(r.code, r.stderr).toBe(0);
    const refused = attemptOf(attempts(r.stdout), "replace");
    expect(refused.status, JSON.stringify(refused.value)).toBe("Error");
    expect(String(refused.value)).toMatch(
      /exec\("sh"\): refused, nothing was run: .*\.npmrc \(it decides what tacit runs at its next start.*\) is reached through a symbolic link in the allowed root .*could replace that link.*Replace the link with what it leads to .*or keep this directory out of the allowed roots/,
    );
    expect(existsSync(path.join(project, "COMMAND_RAN"))).toBe(false);
    expect(readlinkSync(path.join(project, ".npmrc"))).toBe(path.join(dir, "dotfiles/npmrc"));
    expect(readFileSync(path.join(dir, "dotfiles/npmrc"), "utf8")).toBe("fund=false\n");
  });

  it("cannot rewrite the MCP client's settings that start tacit, to widen the next tacit serve's flags", async (ctx) => {
    // A confined `sed -i` rewrote the project's .mcp.json so that the client's next start of
    // tacit serve gave it --allowed-roots / --command-permissions '*'.
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    const settings = path.join(project, ".mcp.json");
    const registered = JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve", "--allowed-roots", "."] } } });
    writeFileSync(settings, registered);
    const widen = `sed -i 's|"--allowed-roots","."|"--allowed-roots","/","--command-permissions","*"|' .mcp.json`;
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("sed", () => proc.exec("sh", ["-c", ${lit(widen)}]));
  attempt("overwrite", () => proc.exec("sh", ["-c", "echo '{}' > .mcp.json"]));
  attempt("rename", () => proc.exec("sh", ["-c", "mv .mcp.json mcp.old"]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(execResult(found, "sed").stderr).toContain("Device or resource busy");
    expect(execResult(found, "overwrite").stderr).toContain("Read-only file system");
    expect(execResult(found, "rename").stderr).toContain("Device or resource busy");
    expect(readFileSync(settings, "utf8")).toBe(registered);
  });

  it("still let commands use /dev/null where an earlier run was given --secure-output /dev/null", async (ctx) => {
    // tacit remembers every run's secure output (remembered-files.ts) and confinement covers it:
    // remembered as /dev/null, it was covered with an empty read-only file, every `2>/dev/null`
    // failed, the setup's own check among them, and each later confined command of the user was
    // refused as if "the allowed roots changed while it was set up".
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    // The user's own home (HOME/.config/tacit, as a run without TACIT_HOME keeps it) remembers /dev/null.
    const user = { HOME: home, TACIT_HOME: "", XDG_CONFIG_HOME: "" };
    const earlier = await tacit(project, `println("earlier");\n`, ["--secure-output", "/dev/null"], user);
    expect(earlier.code, earlier.stderr).toBe(0);
    expect(readFileSync(path.join(home, ".config/tacit/own-files.json"), "utf8")).toContain('"/dev/null"');
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("null", () => proc.exec("sh", ["-c", "echo quiet 2>/dev/null; echo gone > /dev/null && echo written"]));
});
`, ["--command-permissions", "sh", "--confine-commands"], user);
    expect(r.code, r.stderr).toBe(0);
    expect(execResult(attempts(r.stdout), "null")).toEqual({ exitCode: 0, stdout: "quiet\nwritten\n", stderr: "" });
  });

  it("cover tacit's home where the password database puts the user's home, when HOME names another", async (ctx) => {
    // HOME elsewhere (here the test's home): a confined `sh` read the passwd home's
    // ~/.config/tacit/audit-key.json, the key that signs the audit logs of the user's runs. That
    // home is the real user's: tacit runs where it is a tmpfs of the test's (inPrivateHome)
    // holding a probe in ~/.config/tacit (owner-only, as tacit makes it), and nothing is written
    // to the real one (a probe made there, and the directories it needed, were once).
    const dir = confinementDir(ctx);
    const passwdHome = os.userInfo().homedir;
    ctx.skip(!existsSync(passwdHome), `the password database gives this user no home directory (${passwdHome})`);
    const own = path.join(passwdHome, ".config", "tacit");
    const canary = makeCanary();
    // Named apart from the canary: an error naming the file must not look like a leak.
    const probe = path.join(own, `tacit-confine-probe-${randomUUID()}`);
    const seed = path.join(dir, "passwd-home");
    mkdirSync(path.join(seed, ".config", "tacit"), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(seed, path.relative(passwdHome, probe)), `${canary}\n`, { mode: 0o600 });
    const { home, project } = layout(dir);
    const run = inPrivateHome(ctx, { home: passwdHome, seed }, project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("list", () => proc.exec("sh", ["-c", 'ls -A "$0"', ${lit(own)}]));
  attempt("probe", () => proc.exec("sh", ["-c", 'cat "$0"', ${lit(probe)}]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home, TACIT_HOME: "", XDG_CONFIG_HOME: "" });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(canary);
    const found = attempts(run.stdout);
    // Covered by an empty directory (or inside the cover of that home's .config): nothing listed, no probe.
    expect(execResult(found, "list").stdout).toBe("");
    const read = execResult(found, "probe");
    expect(read.exitCode).not.toBe(0);
    expect(read.stdout).toBe("");
  });

  it("cover the hidden entries of the home the password database gives, when HOME names another", async (ctx) => {
    // HOME elsewhere (here the test's home): a confined `sh` read the real home's ~/.npmrc (its
    // registry token), that home's hidden entries being covered only by HOME. tacit runs where
    // that home is a tmpfs of the test's (inPrivateHome) holding a probe among its hidden
    // entries, and nothing is written to the real one (a probe made there was once).
    const dir = confinementDir(ctx);
    const passwdHome = os.userInfo().homedir;
    ctx.skip(!existsSync(passwdHome), `the password database gives this user no home directory (${passwdHome})`);
    const canary = makeCanary();
    const name = `.tacit-confine-probe-${randomUUID()}`;
    const probe = path.join(passwdHome, name);
    const seed = path.join(dir, "passwd-home");
    mkdirSync(seed, { mode: 0o700 });
    writeFileSync(path.join(seed, name), `${canary}\n`, { mode: 0o600 });
    const { home, project } = layout(dir);
    const run = inPrivateHome(ctx, { home: passwdHome, seed }, project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("read", () => proc.exec("sh", ["-c", 'cat "$0"', ${lit(probe)}]));
  attempt("there", () => proc.exec("sh", ["-c", 'ls -A "$0"', ${lit(passwdHome)}]));
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(canary);
    const found = attempts(run.stdout);
    expect(execResult(found, "read")).toEqual({ exitCode: 0, stdout: "", stderr: "" });
    // The probe is there in the home tacit was given (covered, so read empty), not missing.
    expect(execResult(found, "there").stdout.split("\n")).toContain(name);
  });

  it("cannot give the secure output, not made yet, a second name that scripts read", async (ctx) => {
    // --secure-output in the roots, not made yet, so not covered: a confined `sh` made it a hard
    // link of leak.txt, tacit appended the plaintext of a classified value printed then, and the
    // script read it back through leak.txt, an ordinary file. tacit now makes the file before the
    // command (so it is covered and the link fails), and refuses a sink with another name anyway
    // (test/files/sink-kinds).
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    const canary = makeCanary();
    const sink = path.join(project, "secure.log");
    const flags = ["--command-permissions", "sh", "--confine-commands", "--secure-output", sink];
    const first = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("link", () => proc.exec("sh", ["-c", ": > leak.txt && ln leak.txt secure.log"])); });
println(classify(${lit(canary)}));
`, flags, { HOME: home });
    expect(first.code, first.stderr).toBe(0);
    expect(execResult(attempts(first.stdout), "link").exitCode).not.toBe(0);
    const second = await tacit(project, `requestFileSystem(".", (fs) => println(fs.access("leak.txt").read()));\n`, flags, { HOME: home });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toContain(canary);
    expect(readFileSync(path.join(project, "leak.txt"), "utf8")).not.toContain(canary);
    expect(readFileSync(sink, "utf8")).toContain(canary);
  });

  it("cannot plant the --record directory, not made yet, to send the record outside the roots or forge its first lines", async (ctx) => {
    // `tacit run` makes its record directory when it writes the record, after the script: with
    // --record in the roots, a confined `sh` ran `ln -s ../outside rec`, and tacit wrote the record
    // (the script's code and output) into a directory outside the roots; another made rec/ itself
    // with a tacit-record.jsonl of its own, and tacit appended to it, a run that never happened first.
    const { home, project, outside, env } = layoutWithHome(ctx);
    const flags = ["--command-permissions", "sh", "--confine-commands", "--record", "rec"];
    const linked = `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("link", () => proc.exec("sh", ["-c", ${lit(`ln -s ${outside} rec`)}])); });
`;
    const first = await tacit(project, linked, flags, env);
    expect(first.code, first.stderr).toBe(0);
    expect(execResult(attempts(first.stdout), "link").exitCode).not.toBe(0);
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
    const forged = JSON.stringify({ at: "2026-01-01T00:00:00.000Z", kind: "run", code: "// forged", outcome: "ok", exitCode: 0, stdout: "", error: null, durationMs: 1, truncated: false });
    const forging = `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("forge", () => proc.exec("sh", ["-c", 'printf "%s\\n" "$0" >> rec/tacit-record.jsonl', ${lit(forged)}])); });
`;
    rmSync(path.join(project, "rec"), { recursive: true, force: true });
    const second = await tacit(project, forging, flags, env);
    expect(second.code, second.stderr).toBe(0);
    expect(execResult(attempts(second.stdout), "forge").exitCode).not.toBe(0);
    // The record holds tacit's lines only: this run's script, first.
    const lines = readFileSync(path.join(project, "rec", "tacit-record.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((line) => (JSON.parse(line) as { code: string }).code)).toEqual([forging]);
  });

  it("cannot recreate a remembered --record directory, deleted since, as a link to elsewhere or with forged lines of its own", async (ctx) => {
    // A record directory an earlier run made is remembered and covered while it exists; once the
    // person deleted it, nothing was there to cover, and a confined `sh` of a run without --record
    // made `rec` again: as a link to a directory outside the roots (the next `tacit run --record
    // rec` wrote the script's code and output there), or as a directory of its own holding a
    // tacit-record.jsonl with a run that never happened (the next run appended after it). tacit
    // now remembers which directory it made and refuses to record into another one by that name.
    const { home, project, outside, env } = layoutWithHome(ctx);
    const rec = path.join(project, "rec");
    const first = await tacit(project, `println("first");\n`, ["--record", "rec"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(path.join(rec, "tacit-record.jsonl"), "utf8")).toContain('println(\\"first\\")');
    rmSync(rec, { recursive: true });

    const linking = `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("link", () => proc.exec("sh", ["-c", ${lit(`ln -s ${outside} rec`)}])); });
`;
    const linked = await tacit(project, linking, ["--command-permissions", "sh", "--confine-commands"], env);
    expect(linked.code, linked.stderr).toBe(0);
    expect(execResult(attempts(linked.stdout), "link").exitCode).toBe(0);
    const secret = makeCanary();
    const throughLink = await tacit(project, `println(${lit(secret)});\n`, ["--record", "rec"], env);
    expect(throughLink.code, throughLink.stderr).toBe(0);
    expect(throughLink.stderr).toContain(`tacit: --record: the record directory ${rec} is a symbolic link`);
    expect(readdirSync(outside)).toEqual(["keep.txt"]);
    rmSync(rec);

    const forged = JSON.stringify({ at: "2026-01-01T00:00:00.000Z", kind: "run", code: "// forged", outcome: "ok", exitCode: 0, stdout: "", error: null, durationMs: 1, truncated: false });
    const forging = `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("forge", () => proc.exec("sh", ["-c", 'mkdir -m 700 rec && printf "%s\\n" "$0" > rec/tacit-record.jsonl && chmod 600 rec/tacit-record.jsonl', ${lit(forged)}])); });
`;
    const planted = await tacit(project, forging, ["--command-permissions", "sh", "--confine-commands"], env);
    expect(planted.code, planted.stderr).toBe(0);
    expect(execResult(attempts(planted.stdout), "forge").exitCode).toBe(0);
    const intoPlanted = await tacit(project, `println("after the forged run");\n`, ["--record", "rec"], env);
    expect(intoPlanted.code, intoPlanted.stderr).toBe(0);
    expect(intoPlanted.stderr).toContain(`tacit: --record: the record directory ${rec} is not the one tacit made there`);
    expect(readFileSync(path.join(rec, "tacit-record.jsonl"), "utf8")).toBe(`${forged}\n`);

    // Deleted again, tacit makes it anew and records there.
    rmSync(rec, { recursive: true });
    const anew = await tacit(project, `println("anew");\n`, ["--record", "rec"], env);
    expect(anew.code, anew.stderr).toBe(0);
    expect(anew.stderr).not.toContain("--record:");
    const lines = readFileSync(path.join(rec, "tacit-record.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((line) => (JSON.parse(line) as { code: string }).code)).toEqual([`println("anew");\n`]);
  });

  it("cannot change the copy of tacit in the project's node_modules that `npx tacit` runs there, when another tacit runs", async (ctx) => {
    // The running tacit's code was kept read-only, and node_modules/.bin/tacit, but not a copy the
    // project holds of its own (a global tacit running): a confined `sh` could rewrite
    // node_modules/tacit/dist/main.js, which the next `npx tacit` there runs unconfined.
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    writeTree(project, {
      "node_modules/tacit/package.json": JSON.stringify({ name: "tacit", version: "0.0.9", type: "module", bin: { tacit: "bin/tacit.js" } }),
      "node_modules/tacit/bin/tacit.js": '#!/usr/bin/env node\nimport "../dist/main.js";\n',
      "node_modules/tacit/dist/main.js": 'console.log("the local tacit");\n',
      "node_modules/.bin/tacit": { symlink: "../tacit/bin/tacit.js" },
      "node_modules/left-pad/index.js": "module.exports = 1;\n",
    });
    const main = path.join(project, "node_modules/tacit/dist/main.js");
    const attacks: Record<string, string> = {
      append: "echo 'require(\"child_process\").execSync(\"touch PWNED\")' >> node_modules/tacit/dist/main.js",
      replace: "rm -f node_modules/tacit/dist/main.js && echo payload > node_modules/tacit/dist/main.js",
      rename: "mv node_modules/tacit node_modules/tacit-old && mkdir -p node_modules/tacit/dist && echo payload > node_modules/tacit/dist/main.js",
      "ordinary work": "echo 'module.exports = 2;' > node_modules/left-pad/index.js",
    };
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
${Object.entries(attacks).map(([label, command]) => `  attempt(${lit(label)}, () => proc.exec("sh", ["-c", ${lit(command)}]));`).join("\n")}
});
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home, TACIT_HOME: path.join(dir, "tacit-home") });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of ["append", "replace", "rename"]) expect(execResult(found, label).exitCode, label).not.toBe(0);
    expect(execResult(found, "ordinary work").exitCode).toBe(0);
    expect(readFileSync(main, "utf8")).toBe('console.log("the local tacit");\n');
    expect(existsSync(path.join(project, "node_modules/tacit-old"))).toBe(false);
  });

  it("cannot reach the audit log's lock, kept in tacit's home, nor move the log away while tacit writes it", async (ctx) => {
    // The writer's lock lay beside the log (FILE.lock), covered only while it existed: a lock
    // planted where none was (a live pid, or a dead one that makes the next writer sign an
    // unsigned tail as a crashed writer's) changed how the next writer took the log. It now lies in
    // tacit's home, which is covered whole; a file beside the log is an ordinary file, which no
    // writer reads. None of these attempts gets through, and the next run continues the log.
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    const tacitHome = path.join(dir, "tacit-home");
    const env = { HOME: home, TACIT_HOME: tacitHome };
    const log = path.join(project, "logs", "audit.jsonl");
    const writerLock = writerLockFor(path.join(tacitHome, "audit-key.json"), log);
    const flags = ["--command-permissions", "sh", "--confine-commands", "--audit-log", "logs/audit.jsonl"];
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
  attempt("writer's lock", () => proc.exec("sh", ["-c", 'cat "$0" && echo 1 > "$0"', ${lit(writerLock)}]));
  attempt("remove writer's lock", () => proc.exec("sh", ["-c", 'rm "$0"', ${lit(writerLock)}]));
  attempt("beside", () => proc.exec("sh", ["-c", "echo 1 > logs/audit.jsonl.lock"]));
  attempt("rename", () => proc.exec("sh", ["-c", "mv logs logs-old && mkdir logs && echo 1 > logs/audit.jsonl.lock"]));
  attempt("append", () => proc.exec("sh", ["-c", "echo '{}' >> logs/audit.jsonl"]));
});
`, flags, env);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    // tacit's home reads as an empty directory to the command: there is no lock to read or replace.
    expect(execResult(found, "writer's lock").exitCode).not.toBe(0);
    expect(execResult(found, "writer's lock").stdout).toBe("");
    expect(execResult(found, "remove writer's lock").exitCode).not.toBe(0);
    expect(execResult(found, "beside").exitCode).toBe(0);
    expect(execResult(found, "rename").stderr).toContain("Device or resource busy");
    expect(execResult(found, "append").stderr).toContain("Read-only file system");
    expect(existsSync(writerLock)).toBe(false);
    const next = await tacit(project, `println("next");\n`, flags, env);
    expect(next.code, next.stderr).toBe(0);
    const verified = await runCli(["audit", "verify", log], { cwd: project, env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it("cannot create a missing startup file in a home directory that is an allowed root (~/.bash_profile, ~/.zshenv, ~/.gitconfig)", async (ctx) => {
    // The home's hidden entries are covered where they exist; one that does not exist cannot be.
    // Started in the home (the default root), a confined `sh` wrote ~/.bash_profile (bash reads it at
    // login, before ~/.profile) and ~/.zshenv (every zsh), and `git config --global` made a
    // ~/.gitconfig with core.fsmonitor: the user's next login shell and git status ran them,
    // unconfined. The file API refuses these (home-config.ts); confined, the home's top level is now
    // read-only: its entries are bound on themselves, writable inside as before.
    const dir = confinementDir(ctx);
    const { home } = layout(dir);
    writeTree(home, { "work/readme.txt": "hello\n", "notes.txt": "kept\n" });
    execFileSync("git", ["init", "-q"], { cwd: path.join(home, "work") });
    // A dotfiles manager's link: in a home whose top level is read-only it cannot be replaced, so it is not refused (see the .npmrc test above).
    writeTree(dir, { "dotfiles/npmrc": "fund=false\n" });
    symlinkSync(path.join(dir, "dotfiles/npmrc"), path.join(home, ".npmrc"));
    const proof = path.join(dir, "RAN_AT_LOGIN");
    const attacks: Record<string, string> = {
      "bash_profile": `printf 'touch %s\\n' ${proof} > .bash_profile`,
      zshenv: `printf 'touch %s\\n' ${proof} > .zshenv`,
      gitconfig: `git config --global core.fsmonitor "touch ${proof}; false"`,
      npmrc: `rm -f .npmrc; printf 'node-options=--require %s\\n' ${proof} > .npmrc`,
      "new top-level file": "echo new > new.txt",
      "rename an entry": "mv work work-old",
      "ordinary work": "mkdir -p work/sub && echo made > work/sub/made.txt && cat work/sub/made.txt && echo more >> notes.txt",
    };
    const r = await tacit(home, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh", "git"], (proc) => {
${Object.entries(attacks).map(([label, command]) => `  attempt(${lit(label)}, () => proc.exec("sh", ["-c", ${lit(command)}]));`).join("\n")}
});
`, ["--command-permissions", "sh,git", "--confine-commands"], { HOME: home, TACIT_HOME: path.join(dir, "tacit-home"), XDG_CONFIG_HOME: "" });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    for (const label of ["bash_profile", "zshenv", "npmrc", "new top-level file"]) expect(execResult(found, label).stderr, label).toContain("Read-only file system");
    expect(execResult(found, "gitconfig").exitCode).not.toBe(0);
    expect(execResult(found, "rename an entry").stderr).toContain("Read-only file system");
    expect(existsSync(path.join(home, "work-old"))).toBe(false);
    expect(execResult(found, "ordinary work")).toMatchObject({ exitCode: 0, stdout: "made\n" });
    expect(readFileSync(path.join(home, "notes.txt"), "utf8")).toBe("kept\nmore\n");
    expect(readlinkSync(path.join(home, ".npmrc"))).toBe(path.join(dir, "dotfiles/npmrc"));
    expect(readFileSync(path.join(dir, "dotfiles/npmrc"), "utf8")).toBe("fund=false\n");
    for (const planted of [".bash_profile", ".zshenv", ".gitconfig", "new.txt"]) expect(existsSync(path.join(home, planted)), planted).toBe(false);
    // The user's next login shell and git status in the home run nothing of the script's.
    const userEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
    spawnSync("bash", ["--login", "-c", "true"], { cwd: home, env: userEnv, encoding: "utf8", timeout: 20_000 });
    spawnSync("git", ["status"], { cwd: path.join(home, "work"), env: userEnv, encoding: "utf8", timeout: 20_000 });
    expect(existsSync(proof)).toBe(false);
  });

  it("cannot read or append to an earlier run's audit log, nor plant its lock, in a run without --audit-log", async (ctx) => {
    // tacit's warning said later runs with the same tacit home remember the audit log, but only the
    // config, the sink and the record were remembered: in a later run without --audit-log, a script
    // read the log through the file API and a confined `sh` appended to it (the next writer refused
    // to continue it). The lock, missing while no tacit writes the log, cannot be covered: one
    // planted there with a dead pid makes the next writer take the log over as a crashed writer's,
    // which signs an unsigned tail as found; with the log covered there is none, and it verifies.
    const { project, env, tacitHome } = layoutWithHome(ctx);
    const log = path.join(project, "logs", "audit.jsonl");
    const first = await tacit(project, `println("first");\n`, ["--audit-log", "logs/audit.jsonl"], env);
    expect(first.code, first.stderr).toBe(0);
    const before = readFileSync(log, "utf8");
    // Remembered in a list of its own: an older tacit's schema for own-files.json knows no audit logs.
    expect(readFileSync(path.join(tacitHome, "own-audit-logs.json"), "utf8")).toContain(log);
    expect(existsSync(path.join(tacitHome, "own-files.json"))).toBe(false);
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => { attempt("read", () => fs.access("logs/audit.jsonl").read()); });
requestExecPermission(["sh"], (proc) => {
  attempt("append", () => proc.exec("sh", ["-c", "echo '{}' >> logs/audit.jsonl"]));
  attempt("stale lock", () => proc.exec("sh", ["-c", "echo 999999999 > logs/audit.jsonl.lock"]));
});
`, ["--command-permissions", "sh", "--confine-commands"], env);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["read"], /the audit log \(--audit-log\) of an earlier tacit run on this machine/);
    expect(execResult(found, "append").stderr).toContain("Read-only file system");
    expect(execResult(found, "stale lock").exitCode).toBe(0);
    expect(readFileSync(log, "utf8")).toBe(before);
    const next = await tacit(project, `println("next");\n`, ["--audit-log", "logs/audit.jsonl"], env);
    expect(next.code, next.stderr).toBe(0);
    const verified = await runCli(["audit", "verify", log], { cwd: project, env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it("cannot keep the next writer off an earlier run's audit log with a lock planted beside it (pid 1)", async (ctx) => {
    // The writer's lock lay beside the log (FILE.lock), missing while no tacit writes the log, so
    // no cover can keep a confined command of another run from making it: `echo 1 > FILE.lock`
    // (pid 1 is always alive) made every later `tacit run --audit-log FILE` refuse to start, "being
    // written by process 1", until someone deleted it: the audit trail denied. The writers' locks
    // now live in tacit's home (owner-only, covered), and a file beside the log means nothing.
    const { home, project, env } = layoutWithHome(ctx);
    const log = path.join(project, "logs", "audit.jsonl");
    const first = await tacit(project, `println("first");\n`, ["--audit-log", "logs/audit.jsonl"], env);
    expect(first.code, first.stderr).toBe(0);
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("live lock", () => proc.exec("sh", ["-c", "echo 1 > logs/audit.jsonl.lock"])); });
`, ["--command-permissions", "sh", "--confine-commands"], env);
    expect(r.code, r.stderr).toBe(0);
    expect(execResult(attempts(r.stdout), "live lock").exitCode).toBe(0);
    const next = await tacit(project, `requestFileSystem(".", (fs) => fs.access("marker.txt").write("ran"));\n`, ["--audit-log", "logs/audit.jsonl"], env);
    expect(next.stderr).not.toContain("is being written by process 1");
    expect(next.code, next.stderr).toBe(0);
    expect(readFileSync(path.join(project, "marker.txt"), "utf8")).toBe("ran");
    const verified = await runCli(["audit", "verify", log], { cwd: project, env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it("cannot plant a log named in an MCP client's settings, with a dead writer's lock, for the next writer to sign as a crash's tail", async (ctx) => {
    // A log named only in .mcp.json, not made yet: neither it nor its lock exists, so neither is
    // covered. A confined `sh` wrote the log with a line chained from the start (no key is needed
    // for that) and FILE.lock with a dead pid; the next writer took the lock as a crashed writer's,
    // marked the forged line as that writer's unsigned tail and signed it, and `tacit audit verify`
    // passed the log. Only a lock in tacit's home (which no command or script can write) now tells
    // the writer that one of its own crashed: without one, it refuses the unsigned lines.
    const { home, project, env } = layoutWithHome(ctx);
    writeFileSync(path.join(project, ".mcp.json"), JSON.stringify({ mcpServers: { tacit: { command: "npx", args: ["tacit", "serve", "--audit-log", "logs/audit.jsonl"] } } }));
    const log = path.join(project, "logs", "audit.jsonl");
    const time = new Date().toISOString();
    const eventJson = canonicalJson({ type: "evaluation-started", evaluation: "FORGED", session: null, displayName: "never-ran.ts", codeDigest: `sha256:${"0".repeat(64)}`, policyDigest: `sha256:${"0".repeat(64)}` });
    const hash = eventHashOfJson(1, time, eventJson);
    const forged = lineText(1, time, eventJson, ZERO_CHAIN, hash, chainOf(ZERO_CHAIN, hash));
    const plant = 'mkdir -p logs && printf "%s\\n" "$0" > logs/audit.jsonl && chmod 600 logs/audit.jsonl && echo 999999999 > logs/audit.jsonl.lock';
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("plant", () => proc.exec("sh", ["-c", ${lit(plant)}, ${lit(forged)}])); });
`, ["--command-permissions", "sh", "--confine-commands"], env);
    expect(r.code, r.stderr).toBe(0);
    expect(execResult(attempts(r.stdout), "plant").exitCode).toBe(0);
    const planted = readFileSync(log, "utf8");
    expect(planted).toBe(`${forged}\n`);
    const next = await tacit(project, `requestFileSystem(".", (fs) => fs.access("marker.txt").write("ran"));\n`, ["--audit-log", "logs/audit.jsonl"], env);
    expect(next.code, next.stderr).toBe(2);
    expect(next.stderr).toContain("ends in lines no signed head covers (its last line, seq 1, is not a head), but no tacit stopped while writing it");
    expect(existsSync(path.join(project, "marker.txt"))).toBe(false);
    expect(readFileSync(log, "utf8")).toBe(planted);
    const verified = await runCli(["audit", "verify", log], { cwd: project, env });
    expect(verified.code, verified.stdout + verified.stderr).toBe(1);
  });

  it("cannot make tacit's home where it does not exist yet, to plant approvals a later run takes as a person's", async (ctx) => {
    // Started in the home directory (the default root) before it had a ~/.config: a confined `sh`
    // made ~/.config/tacit/approvals.json, and the next run deleted a file its policy says a
    // person must approve, with nobody asked.
    const dir = confinementDir(ctx);
    const { home } = layout(dir);
    writeFileSync(path.join(home, "victim.txt"), "kept\n");
    const approvals = JSON.stringify({
      version: 1,
      approvals: [{ pattern: `fs.delete ${path.join(home, "victim.txt")}`, directory: home, grantedAt: "2026-12-01T00:00:00.000Z", expiresAt: "2030-01-01T00:00:00.000Z", via: "terminal" }],
    });
    const plant = 'mkdir -p -m 700 .config/tacit && umask 077 && printf "%s" "$0" > .config/tacit/approvals.json';
    const r = await tacit(home, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => { attempt("plant", () => proc.exec("sh", ["-c", ${lit(plant)}, ${lit(approvals)}])); });
`, ["--command-permissions", "sh", "--confine-commands"], { HOME: home, TACIT_HOME: "", XDG_CONFIG_HOME: "" });
    expect(r.code, r.stderr).toBe(0);
    expect(execResult(attempts(r.stdout), "plant").exitCode).not.toBe(0);
    // The next run, whose policy puts a person in front of deletes: nobody can be asked here.
    const config = path.join(dir, "policy.json");
    writeFileSync(config, JSON.stringify({ policy: { rules: [{ action: "fs.delete", tier: "approve-once" }] } }));
    const next = await tacit(home, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => { attempt("delete", () => fs.access("victim.txt").delete()); });
`, ["--config", config], { HOME: home, TACIT_HOME: "", XDG_CONFIG_HOME: "" });
    expect(next.code, next.stderr).toBe(0);
    expectRefused(attempts(next.stdout), ["delete"], /requires a person's approval \(approve-once\), and no one could be asked/);
    expect(readFileSync(path.join(home, "victim.txt"), "utf8")).toBe("kept\n");
  });

  // Shown through the CLI first: a confined `sh` in one run (moving sec/ into b/ and leaving a
  // decoy sec/.env, back and forth) while another run's `cat sec/.env b/sec/.env` printed the real
  // .env at its 38th attempt. Here the change falls, every time, between the walk and the mounts.
  it("are refused, not run with a cover missing, where a directory changed between the walk and the mounts", (ctx) => {
    const dir = confinementDir(ctx);
    const canary = makeCanary();
    writeTree(dir, { "project/sec/.env": `${canary}\n`, "project/b/keep.txt": "kept\n" });
    const project = path.join(dir, "project");
    const confinement = new CommandConfinement({ allowedRoots: [project], classified: new ClassifiedPaths(DEFAULT_CLASSIFIED_PATHS), protectedPaths: [], tacitHomes: [], tacitFiles: [], recordDirectory: null });
    const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined);
    const wrapped = confinement.wrap(wrapper, "cat", "/usr/bin/cat", ["sec/.env", "b/sec/.env"], project);
    // What another confined command did meanwhile: the directory holding the .env moved into
    // one already listed, a decoy .env left where the walk found the real one.
    renameSync(path.join(project, "sec"), path.join(project, "b/sec"));
    writeTree(project, { "sec/.env": "decoy\n" });
    const r = runWrapped(dir, project, wrapped);
    expect(r.stdout).not.toContain(canary);
    expect(r.stderr).not.toContain(canary);
    expect(setupFailure("cat", r.status ?? -1, String(r.output[4] ?? ""))?.message).toMatch(
      /exec\("cat"\): refused, nothing was run: .*the allowed roots changed while it was set up.*Run the command again once nothing else is moving files/,
    );
    // Unchanged since its walk, the same command runs, both .env files covered.
    const again = runWrapped(dir, project, confinement.wrap(wrapper, "cat", "/usr/bin/cat", ["sec/.env", "b/sec/.env"], project));
    expect({ status: again.status, stdout: again.stdout }, again.stderr).toEqual({ status: 0, stdout: "" });
  });

  it("cannot read a classified file another session makes while they run (tacit serve, two sessions at once)", async (ctx) => {
    const dir = confinementDir(ctx);
    const { home, project, canaries } = layout(dir);
    const client = await connectServe(["--command-permissions", "sh", "--confine-commands"], project, { env: { HOME: home } });
    try {
      const [waiter, writer] = [await createSession(client), await createSession(client)];
      // Session one's command says it runs, then waits for the copy to be made and reads it.
      const waiting = runInSession(client, waiter, `requestExecPermission(["sh"], (proc) => {
  println(JSON.stringify(proc.exec("sh", ["-c", ": > started; until [ -e go ]; do sleep 0.05; done; cat src/.env.copy"], { timeoutMs: 60000 })));
});`);
      while (!existsSync(path.join(project, "started"))) await new Promise((r) => setTimeout(r, 50));
      const copy = await runInSession(client, writer, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => { attempt("copy", () => fs.writeClassified("src/.env.copy", fs.readClassified(".env"))); });`);
      writeFileSync(path.join(project, "go"), "");
      const read = await waiting;
      expect(read.stdout).not.toContain(canaries.env);
      expect(read.error ?? "").not.toContain(canaries.env);
      expectRefused(attempts(copy.stdout), ["copy"], /writeClassified\(\) refused: it would make a new classified file while a confined command \(exec\("sh"\).*Write it once that command has ended/);
      expect(existsSync(path.join(project, "src/.env.copy"))).toBe(false);
    } finally {
      await client.close();
    }
  });

  it("still run where tacit's missing home lies on a read-only mount in the roots, which the command cannot write either", (ctx) => {
    // tacit makes its missing homes in the roots before a command (previous test); on a read-only
    // mount below a root it cannot, nor can the command, and the command was refused for nothing.
    // tacit runs in a mount namespace of the test's own, where the home is made read-only.
    const dir = confinementDir(ctx);
    const home = path.join(dir, "home");
    mkdirSync(home);
    const script = `requestExecPermission(["sh"], (proc) => println(JSON.stringify(proc.exec("sh", ["-c", "echo ran"]))));\n`;
    const inNamespace = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"';
    const r = spawnSync(
      "unshare",
      ["--mount", "--propagation", "private", "sh", "-c", inNamespace, "sh", home, process.execPath, path.join(repoRoot, "bin", "tacit.js"), "run", "--no-check", "--command-permissions", "sh", "--confine-commands", "-"],
      { cwd: dir, input: script, encoding: "utf8", env: { ...process.env, HOME: home, TACIT_HOME: "", XDG_CONFIG_HOME: "" }, timeout: 30_000 },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`${JSON.stringify({ exitCode: 0, stdout: "ran\n", stderr: "" })}\n`);
    expect(existsSync(path.join(home, ".config"))).toBe(false);
  });

  it("still run, and keep what `npx tacit` runs, where node_modules is a mount of its own (a devcontainer's volume)", (ctx) => {
    // The directories on the way to what is kept read-only are bound on themselves (pins), and
    // `mount -a` skips one that is a mount point already ("already mounted"), which the setup took
    // as a failure: with node_modules/.bin/tacit kept, every confined command was refused. A mount
    // point cannot be renamed anyway. tacit runs in a mount namespace of the test's own, where
    // node_modules is bound on itself.
    const dir = confinementDir(ctx);
    const project = path.join(dir, "project");
    writeTree(project, { "node_modules/tacit/bin/tacit.js": "// tacit\n" });
    mkdirSync(path.join(project, "node_modules", ".bin"));
    symlinkSync("../tacit/bin/tacit.js", path.join(project, "node_modules", ".bin", "tacit"));
    const script = `requestExecPermission(["sh"], (proc) => println(JSON.stringify(proc.exec("sh", ["-c", "echo ran; ln -sfn ../../payload.js node_modules/.bin/tacit"]))));\n`;
    const inNamespace = 'mount --bind "$1" "$1" && shift && exec "$@"';
    const r = spawnSync(
      "unshare",
      ["--mount", "--propagation", "private", "sh", "-c", inNamespace, "sh", path.join(project, "node_modules"), process.execPath, path.join(repoRoot, "bin", "tacit.js"), "run", "--no-check", "--command-permissions", "sh", "--confine-commands", "-"],
      { cwd: project, input: script, encoding: "utf8", env: { ...process.env, HOME: path.join(dir, "home"), TACIT_HOME: path.join(dir, "tacit-home") }, timeout: 30_000 },
    );
    expect(r.stderr).toBe("");
    const ran = JSON.parse(r.stdout) as ExecResult;
    expect(ran.stdout).toBe("ran\n");
    expect(ran.stderr).toContain("Read-only file system");
    expect(readlinkSync(path.join(project, "node_modules", ".bin", "tacit"))).toBe("../tacit/bin/tacit.js");
  });

  it("cannot read the secure output that tacit first writes while the command runs (tacit serve, two sessions at once)", async (ctx) => {
    // A confined command started before anything classified was printed: the secure output in its
    // roots did not exist, so nothing covered it; once a classified print made it, the command
    // read the plaintext there and printed it to its own output, which the script gets. Shown in
    // one `tacit run` too (a classified value slow to compute printed just before the command).
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    const canary = makeCanary();
    const sink = path.join(project, "secure.log");
    const client = await connectServe(["--no-check", "--command-permissions", "sh", "--confine-commands", "--secure-output", sink], project, { env: { HOME: home } });
    try {
      const [reader, printer] = [await createSession(client), await createSession(client)];
      const reading = runInSession(client, reader, `requestExecPermission(["sh"], (proc) => {
  println(JSON.stringify(proc.exec("sh", ["-c", ": > started; until [ -e go ]; do sleep 0.05; done; cat secure.log"], { timeoutMs: 60000 })));
});`);
      while (!existsSync(path.join(project, "started"))) await new Promise((r) => setTimeout(r, 50));
      await runInSession(client, printer, `println(classify(${lit(canary)}));`);
      expect(await fileOnce(sink, (text) => text.includes(canary))).toContain(canary);
      writeFileSync(path.join(project, "go"), "");
      const read = await reading;
      expect(read.error ?? "").toBe("");
      expect(read.stdout).not.toContain(canary);
    } finally {
      await client.close();
    }
  });

  it("cannot reach the sockets of the user's runtime directory, whose daemons act outside the confinement", async (ctx) => {
    // A Unix socket on a read-only mount still takes connections. In the user's runtime directory
    // (XDG_RUNTIME_DIR, /run/user/UID) systemd's user manager and the session bus start any command
    // they are asked to (`systemd-run --user`), unconfined, and gpg-agent signs with the user's keys:
    // a confined `node` connected to a stand-in for them there and had it act on what it sent.
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    const runtime = path.join(dir, "run-user");
    mkdirSync(runtime, { mode: 0o700 });
    const socket = path.join(runtime, "bus");
    const received: string[] = [];
    const daemon = net.createServer((connection) => connection.on("data", (data) => received.push(String(data))));
    await new Promise<void>((resolve) => daemon.listen(socket, resolve));
    ctx.onTestFinished(() => void daemon.close());
    const connect = `const c = require("net").connect(${JSON.stringify(socket)}, () => { c.write("systemd-run --user touch PWNED"); c.end(); console.log("connected"); }); c.on("error", (e) => console.log("refused", e.code));`;
    const code = `${ATTEMPT_PRELUDE}
requestExecPermission(["node"], (proc) => attempt("node", () => proc.exec("node", ["-e", ${lit(connect)}])));
`;
    const r = await tacit(project, code, ["--command-permissions", "node", "--confine-commands"], { HOME: home, XDG_RUNTIME_DIR: runtime });
    expect(r.code, r.stderr).toBe(0);
    // The command ran, and found no socket there: the directory is covered by an empty one.
    expect(execResult(attempts(r.stdout), "node")).toMatchObject({ exitCode: 0, stdout: "refused ENOENT\n" });
    // And the stand-in was sent nothing (what a connection sent would have arrived while tacit ran).
    expect(received).toEqual([]);
  });

  // KNOWN LIMITATION, asserted as failing so that a fix shows up: classified paths are names, and
  // confinement covers the files at those names. git keeps every version of a file that was ever
  // committed in its object database, under no such name, so a confined git prints a committed
  // .env (`git show HEAD:.env`, `git log -p`) while `cat .env` finds it empty; a script's own
  // readBytes() of .git/objects gets the same content, compressed. Covering the object database
  // would stop git working at all. The defence is the operator's: no secret in the history of a
  // repository in the roots (the README says so).
  it.fails("KNOWN LIMITATION: a classified file that was committed is read back from git's objects by a confined git", async (ctx) => {
    const dir = confinementDir(ctx);
    const { home, project, canaries } = layout(dir);
    execFileSync("git", ["add", "-f", ".env"], { cwd: project });
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "env"], { cwd: project });
    const code = `${ATTEMPT_PRELUDE}
requestExecPermission(["cat", "git"], (proc) => {
  attempt("cat .env", () => proc.exec("cat", [".env"]));
  attempt("git show", () => proc.exec("git", ["show", "HEAD:.env"]));
});
`;
    const r = await tacit(project, code, ["--command-permissions", "cat,git", "--confine-commands"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    // The file itself is covered, and git ran.
    expect(execResult(found, "cat .env")).toEqual({ exitCode: 0, stdout: "", stderr: "" });
    expect(execResult(found, "git show").exitCode).toBe(0);
    // What must not be possible: the committed secret reaching the script.
    expect(r.stdout).not.toContain(canaries.env);
  });

  it("are refused, not run unconfined, where the host gives commands no mount namespace", () => {
    const { dir, cleanup } = realTempDir("tacit-confine-");
    try {
      const confinement = new CommandConfinement({ allowedRoots: [dir], classified: new ClassifiedPaths(DEFAULT_CLASSIFIED_PATHS), protectedPaths: [], tacitHomes: [], tacitFiles: [], recordDirectory: null });
      const noNamespace = probeNamespaceWrapper(["/nonexistent/unshare"], () => undefined);
      expect(() => confinement.wrap(noNamespace, "cat", "/usr/bin/cat", [".env"], dir)).toThrow(
        /exec\("cat"\): refused, nothing was run: commands are confined \(--confine-commands.*no PID and mount namespace.*unshare --mount --pid/,
      );
    } finally {
      cleanup();
    }
  });
});

/**
 * The directories beside the way from / to `dir` (in / and in each directory on the way, the
 * others than the next step), as absolute classified patterns: covered whole, so not walked by a
 * command confined with / a root. Not the system's places, /tmp or /proc, which tacit treats apart
 * with / a root; not links, which a walk does not follow (and a pattern would follow them).
 */
function besideTheWay(dir: string): string[] {
  const apart = new Set([...SYSTEM_PLACES, "/tmp", "/proc"]);
  const beside: string[] = [];
  for (let step = dir, parent = path.dirname(dir); step !== parent; step = parent, parent = path.dirname(parent)) {
    for (const entry of readdirSync(parent, { withFileTypes: true })) {
      const full = path.join(parent, entry.name);
      if (full !== step && entry.isDirectory() && !apart.has(full)) beside.push(full);
    }
  }
  return beside;
}

describe("commands confined with / as the allowed root (--allowed-roots /)", () => {
  // `mount -a` ignores a table line for /, and the setup took "/ : ignored" for a failure: every
  // confined command was refused. / is the namespace's / already; what it must still protect is
  // what it protects under any other root, and the system's places tacit runs programs from.
  it("run and write where the user can, while secrets, tacit's home, the system's places, git's hooks and the real /tmp stay out of reach", async (ctx) => {
    // With / the root, the walk lists every directory a command could write, and the setup is
    // refused (rightly) where one changes before the covers are mounted, three times in a row; and
    // each command stats every one of them. So what other processes do anywhere on the machine
    // decided this test: a loop making and removing directories in /var/tmp, where the layout was,
    // had it refused 5 runs in 5; another checkout's vitest in its node_modules/.vite-temp, 1 in 5;
    // under load the 14 commands' walks of this machine's ~20,000 directories passed the 30 s
    // limit. So the layout is made in the home directory (not in /var/tmp, nor in /tmp, of which
    // confined commands see a private one), and every directory beside the way from / to it is
    // classified here (besideTheWay), so covered whole and not listed: the walk lists the layout
    // and its parents only (/ and the home, whose top levels are all another process could still
    // change meanwhile). Not the system's places, /tmp or /proc: every assertion below is about
    // what tacit does with them, and with the layout, under / the root and the default patterns.
    //
    // tacit makes its missing homes that lie in the roots before a command (ownPlacesMade), and
    // with / the root that is also ~/.config/tacit of the password database's home: in the real
    // home, where every run of the suite made it (test/suite-homes.ts reported "created
    // /root/.config/tacit"). So tacit runs in a mount namespace of the test's own where that home
    // is an empty tmpfs holding only the layout, bound back in (inPrivateHome): the layout's
    // files are the real ones the assertions read, and what tacit makes beside them goes with the
    // namespace.
    skipWithoutMountNamespace(ctx);
    const passwdHome = os.userInfo().homedir;
    const { dir, cleanup } = realTempDir("tacit-confine-slash-", passwdHome);
    ctx.onTestFinished(cleanup);
    const { home, project, outside, canaries } = layout(dir);
    const tacitHome = path.join(dir, "tacit-home");
    const quietClassified = [...DEFAULT_CLASSIFIED_PATHS, ...besideTheWay(dir)].join(",");
    const ownCanary = makeCanary();
    const tmpCanary = makeCanary();
    writeTree(tacitHome, { "canary.txt": `${ownCanary}\n` });
    const id = randomUUID();
    const realTmp = `/tmp/tacit-slash-${id}`;
    const probes = { usr: `/usr/bin/tacit-probe-${id}`, etc: `/etc/tacit-probe-${id}`, top: `/tacit-probe-${id}`, scratch: `/tmp/tacit-scratch-${id}` };
    writeFileSync(realTmp, `${tmpCanary}\n`);
    ctx.onTestFinished(() => {
      for (const file of [realTmp, ...Object.values(probes)]) rmSync(file, { force: true });
    });
    const steps: Record<string, string> = {
      env: "cat .env",
      grep: "grep -r canary src",
      ssh: `cat ${path.join(home, ".ssh/id_rsa")}`,
      own: `cat ${path.join(tacitHome, "canary.txt")}`,
      realTmp: `cat ${realTmp}`,
      usr: `touch ${probes.usr}`,
      etc: `touch ${probes.etc}`,
      top: `touch ${probes.top}`,
      hook: "printf '#!/bin/sh\\ntouch HOOK_RAN\\n' > .git/hooks/pre-commit",
      bashrc: `echo 'touch PWNED' >> ${path.join(home, ".bashrc")}`,
      outside: `echo written > ${path.join(outside, "written.txt")}`,
      project: "echo made > made.txt",
      scratch: `echo scratch > ${probes.scratch} && cat ${probes.scratch}`,
      proc: "ls /proc | grep -c '^[0-9][0-9]*$'",
    };
    const run = inPrivateHome(ctx, { home: passwdHome, bindBack: dir }, project, `${ATTEMPT_PRELUDE}
requestExecPermission(["sh"], (proc) => {
${Object.entries(steps).map(([label, line]) => `  attempt(${lit(label)}, () => proc.exec("sh", ["-c", ${lit(line)}]));`).join("\n")}
});
`, ["--allowed-roots", "/", "--command-permissions", "sh", "--confine-commands", "--classified-paths", quietClassified], { HOME: home, TACIT_HOME: tacitHome });
    const r = { code: run.status, stdout: run.stdout, stderr: run.stderr };
    expect(r.code, r.stderr).toBe(0);
    for (const canary of [...Object.values(canaries), ownCanary, tmpCanary]) {
      expect(r.stdout).not.toContain(canary);
      expect(r.stderr).not.toContain(canary);
    }
    const found = attempts(r.stdout);
    // Covered: the classified files, the home's hidden entries, tacit's home; the real /tmp is not there.
    expect(execResult(found, "env")).toEqual({ exitCode: 0, stdout: "", stderr: "" });
    expect(execResult(found, "grep").exitCode).toBe(1);
    expect(execResult(found, "ssh").exitCode).not.toBe(0);
    expect(execResult(found, "own").exitCode).not.toBe(0);
    expect(execResult(found, "realTmp").exitCode).not.toBe(0);
    // Read-only: the system's places, the top of /, git's hooks, the home's startup files.
    for (const label of ["usr", "etc", "top", "hook"]) expect(execResult(found, label).stderr, label).toContain("Read-only file system");
    for (const probe of [probes.usr, probes.etc, probes.top, probes.scratch]) expect(existsSync(probe), probe).toBe(false);
    expect(existsSync(path.join(project, ".git/hooks/pre-commit"))).toBe(false);
    expect(execResult(found, "bashrc").exitCode).not.toBe(0);
    expect(readFileSync(path.join(home, ".bashrc"), "utf8")).toBe("# the user's own\n");
    expect(readFileSync(path.join(tacitHome, "canary.txt"), "utf8")).toBe(`${ownCanary}\n`);
    // Writable: anywhere else / holds (outside the project too), and a private /tmp.
    expect(execResult(found, "outside").exitCode).toBe(0);
    expect(readFileSync(path.join(outside, "written.txt"), "utf8")).toBe("written\n");
    expect(execResult(found, "project").exitCode).toBe(0);
    expect(readFileSync(path.join(project, "made.txt"), "utf8")).toBe("made\n");
    expect(execResult(found, "scratch")).toMatchObject({ exitCode: 0, stdout: "scratch\n" });
    // Its own /proc: its own few processes, not the host's.
    expect(Number(execResult(found, "proc").stdout.trim())).toBeLessThan(10);
  });
});

/** Where inPrivateHome puts tacit, and what the private home holds. */
interface PrivateHome {
  /** The password database's home directory, replaced by an empty tmpfs in tacit's namespace. */
  home: string;
  /** A directory in `home` bound back in at its own path (its files are the real ones). */
  bindBack?: string;
  /** A directory whose contents are copied into the tmpfs (modes kept): what the home holds there. */
  seed?: string;
}

/**
 * Runs `tacit run --no-check …args -` on `script` in `cwd`, in a mount namespace of its own
 * where the password database's home is an empty tmpfs, holding only `seed`'s copy and
 * `bindBack`: what a test puts in that home, and what the run makes there (tacit's own home,
 * made before a confined command where the roots hold it), goes with the namespace instead of
 * into the real home of the person running the tests. This checkout and the Node that runs
 * tacit are bound back too where they lie in that home (a checkout in ~/src, a Node of nvm's),
 * and so are the mounts below it (a devcontainer's volumes), read-only: left hidden under the
 * tmpfs, they stay in the mount table, and a confined command's setup, which mounts what the
 * table lists, fails on them. Mounting needs root (as the other namespace tests here).
 */
function inPrivateHome(ctx: TestContext, place: PrivateHome, cwd: string, script: string, args: string[], env: Record<string, string>): SetUp {
  ctx.skip(process.getuid?.() !== 0, "mounting a private home for the test needs root; without it the test would write to the real home");
  const mounts = mountsInside(place.home);
  const hidden = mounts.find((mount) => place.seed !== undefined && existsSync(path.join(place.seed, path.relative(place.home, mount))));
  ctx.skip(hidden !== undefined, `${hidden} is a mount of its own, which would hide what the test puts in the private home there`);
  const stage = mkdtempSync(path.join(os.tmpdir(), "tacit-home-stage-"));
  ctx.onTestFinished(() => rmSync(stage, { recursive: true, force: true }));
  const nodePrefix = path.dirname(path.dirname(realpathSync(process.execPath)));
  const wanted = [
    ...[place.bindBack, repoRoot, nodePrefix].filter((dir): dir is string => dir !== undefined && isInside(dir, place.home)).map((dir) => ({ kind: "dir", dir })),
    ...mounts.map((dir) => ({ kind: "mount", dir })),
  ];
  // Each is moved aside before the tmpfs hides it (a mount taken off its place), then back; none inside another.
  const keeps = wanted.filter(({ dir }) => !wanted.some((other) => other.dir !== dir && isInside(dir, other.dir)));
  const eachKeep = (body: string): string =>
    `i=0; printf "%s\\n" "$keeps" | while IFS=" " read -r kind keep; do [ -n "$keep" ] || continue; i=$((i+1)); ${body}; done; `;
  const inNamespace =
    'set -e; stage=$1 keeps=$2 seed=$3 home=$4 cwd=$5; shift 5; ' +
    eachKeep('if [ -d "$keep" ]; then mkdir "$stage/$i"; else : > "$stage/$i"; fi; mount --rbind "$keep" "$stage/$i"; if [ "$kind" = mount ]; then umount -l "$keep"; fi') +
    'mount -t tmpfs -o mode=0700 tmpfs "$home"; if [ -n "$seed" ]; then cp -a "$seed/." "$home/"; fi; ' +
    eachKeep('if [ -d "$stage/$i" ]; then mkdir -p "$keep"; else mkdir -p "$(dirname "$keep")"; : > "$keep"; fi; mount --move "$stage/$i" "$keep"; if [ "$kind" = mount ]; then mount -o remount,bind,ro "$keep"; fi') +
    'cd "$cwd"; exec "$@"';
  return spawnSync(
    "unshare",
    [
      "--mount", "--propagation", "private", "sh", "-c", inNamespace, "sh", stage, keeps.map(({ kind, dir }) => `${kind} ${dir}`).join("\n"), place.seed ?? "", place.home, cwd,
      process.execPath, path.join(repoRoot, "bin", "tacit.js"), "run", "--no-check", ...args, "-",
    ],
    { cwd: "/", input: script, encoding: "utf8", env: childEnv(env), timeout: 60_000 },
  ) as SetUp;
}

/** The mount points strictly below `dir`, as /proc/self/mountinfo lists them (its octal escapes read). */
function mountsInside(dir: string): string[] {
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.split(" ")[4]!.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))));
  return [...new Set(points.filter((point) => point !== dir && isInside(point, dir)))];
}

/** Whether `inner` is `outer` or lies below it. */
function isInside(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * A watcher (python3, inotify) that waits for `dir` to be opened, the walk's listing of it, and then
 * runs `action` (python, `os` imported): the change falls between the walk and the mounts. Resolves
 * once it watches; `done` once it acted.
 */
async function onFirstListing(ctx: TestContext, dir: string, action: string): Promise<{ done: Promise<void> }> {
  const python = "/usr/bin/python3";
  ctx.skip(!existsSync(python), "no /usr/bin/python3 to watch the directory with inotify");
  const watcher = spawn(python, ["-c", `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init()
if libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20) < 0: sys.exit("cannot watch")
print("ready", flush=True)
os.read(fd, 4096)
${action}
print("acted", flush=True)`, dir], { stdio: ["ignore", "pipe", "inherit"] });
  ctx.onTestFinished(() => {
    if (watcher.exitCode === null) watcher.kill("SIGKILL");
  });
  let said = "";
  const heard = (word: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (said.includes(word)) resolve();
      };
      watcher.stdout.on("data", (chunk: Buffer) => {
        said += chunk.toString();
        check();
      });
      watcher.on("exit", () => (said.includes(word) ? resolve() : reject(new Error(`the watcher ended before it said ${word}`))));
      check();
    });
  await heard("ready");
  return { done: heard("acted") };
}

type SetUp = ReturnType<typeof spawnSync> & { stdout: string; stderr: string };

/**
 * Runs a command `wrap` made, as the executor does (its setup reads the walked directories on fd 3,
 * reports a failure on fd 4, output[4], and waits for tacit's answer on its lifeline, fd 5), in `cwd`.
 */
function runWrapped(dir: string, cwd: string, wrapped: ReturnType<CommandConfinement["wrap"]>): SetUp {
  const walkedFile = path.join(dir, `walked-${randomUUID()}`);
  writeFileSync(walkedFile, wrapped.walked);
  const walked = openSync(walkedFile, "r");
  const lifeline = answeredLifeline(dir);
  try {
    return spawnSync(wrapped.program, wrapped.args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe", walked, "pipe", lifeline], timeout: 20_000 }) as SetUp;
  } finally {
    closeSync(walked);
    closeSync(lifeline);
  }
}

describe("confined commands whose roots change while their confinement is set up", () => {
  // A file the walk found to cover, removed before its cover was mounted (a test's probe file,
  // a build's): the mount failed and the command was refused, as was one whose listed directory
  // merely changed. The covers are planned anew (a bounded number of times) instead.
  it("run where a classified file they were to cover is removed between the walk and the mounts", async (ctx) => {
    const dir = confinementDir(ctx);
    const { home, project } = layout(dir);
    writeTree(project, { "sub/.env.probe": "probe\n", "sub/keep.txt": "kept\n" });
    const sub = path.join(project, "sub");
    const watcher = await onFirstListing(ctx, sub, `os.unlink(${JSON.stringify(path.join(sub, ".env.probe"))})`);
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestExecPermission(["cat"], (proc) => { attempt("cat", () => proc.exec("cat", ["sub/keep.txt"])); });
`, ["--command-permissions", "cat", "--confine-commands"], { HOME: home });
    await watcher.done;
    expect(existsSync(path.join(sub, ".env.probe"))).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    expect(execResult(attempts(r.stdout), "cat")).toEqual({ exitCode: 0, stdout: "kept\n", stderr: "" });
  });

  // What the executor does when the setup gives up (see ExecExecutor.run), shown step by step with
  // the real setup: a classified file made in a listed directory after the walk is no cover the
  // setup mounts, so it gives up, the command not run; planned anew, the file is covered.
  it("never run with a classified file made between the walk and the mounts left uncovered: refused, then planned anew with it covered", (ctx) => {
    const dir = confinementDir(ctx);
    const canary = makeCanary();
    writeTree(dir, { "project/sub/keep.txt": "kept\n", "made.env": `${canary}\n` });
    const project = path.join(dir, "project");
    const confinement = new CommandConfinement({ allowedRoots: [project], classified: new ClassifiedPaths(DEFAULT_CLASSIFIED_PATHS), protectedPaths: [], tacitHomes: [], tacitFiles: [], recordDirectory: null });
    const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined);
    const setUp = (wrapped: ReturnType<CommandConfinement["wrap"]>): SetUp => runWrapped(dir, project, wrapped);
    const first = confinement.wrap(wrapper, "cat", "/usr/bin/cat", ["sub/.env"], project);
    // Another process makes sub/.env, whole (a rename), after the walk listed sub/.
    renameSync(path.join(dir, "made.env"), path.join(project, "sub/.env"));
    const r = setUp(first);
    expect(r.stdout).not.toContain(canary);
    expect(r.stderr).not.toContain(canary);
    const failure = setupFailure("cat", r.status ?? -1, String(r.output[4] ?? ""), first.changedSince);
    expect(failure).toBeInstanceOf(RootsChangedDuringSetup);
    expect(failure?.message).toContain(`the allowed roots changed while it was set up: a directory listed to find the classified paths or the home's hidden entries (${path.join(project, "sub")})`);
    expect((failure as RootsChangedDuringSetup).refusedAfter(3).message).toMatch(
      /exec\("cat"\): refused, nothing was run: .*changed while it was set up, 3 times in a row \(the covers were planned anew from the roots each time\).*Run the command again once nothing else is moving files/,
    );
    // Planned anew, as the executor does: the new .env is covered.
    const again = setUp(confinement.wrap(wrapper, "cat", "/usr/bin/cat", ["sub/.env"], project));
    expect({ status: again.status, stdout: again.stdout }, again.stderr).toEqual({ status: 0, stdout: "" });
    expect(readFileSync(path.join(project, "sub/.env"), "utf8")).toBe(`${canary}\n`);
  });

  it("never run with a hidden entry of the home made between the walk and the mounts left uncovered", (ctx) => {
    // The home is listed for its hidden entries, not walked: its change was not checked, and a
    // ~/.netrc another process made meanwhile was readable to the command.
    const dir = confinementDir(ctx);
    const canary = makeCanary();
    writeTree(dir, { "project/keep.txt": "kept\n", "home/.bashrc": "# the user's own\n", "made.netrc": `${canary}\n` });
    const project = path.join(dir, "project");
    const home = path.join(dir, "home");
    const before = process.env.HOME;
    process.env.HOME = home;
    ctx.onTestFinished(() => {
      process.env.HOME = before;
    });
    const confinement = new CommandConfinement({ allowedRoots: [project], classified: new ClassifiedPaths(DEFAULT_CLASSIFIED_PATHS), protectedPaths: [], tacitHomes: [], tacitFiles: [], recordDirectory: null });
    const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined);
    const netrc = path.join(home, ".netrc");
    const first = confinement.wrap(wrapper, "cat", "/usr/bin/cat", [netrc], project);
    renameSync(path.join(dir, "made.netrc"), netrc);
    const r = runWrapped(dir, project, first);
    expect(r.stdout).not.toContain(canary);
    expect(r.stderr).not.toContain(canary);
    expect(setupFailure("cat", r.status ?? -1, String(r.output[4] ?? ""), first.changedSince)).toBeInstanceOf(RootsChangedDuringSetup);
    const again = runWrapped(dir, project, confinement.wrap(wrapper, "cat", "/usr/bin/cat", [netrc], project));
    expect(again.stdout).not.toContain(canary);
    expect({ status: again.status, stdout: again.stdout }, again.stderr).toEqual({ status: 0, stdout: "" });
  });
});
