// Tiers come from the config's `policy` section, decided by the host from the action alone:
// path globs (absolute and relative, symlinks followed), command and argument globs, host and
// method; the highest matching tier wins. A config that names a tier or field wrongly is
// rejected before anything runs (exit 2), naming the key.

import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Action } from "../../library/protocol.js";
import { describeAction, type ScopeLookup, urlPattern } from "../../runner/approval/action-request.js";
import { type PolicyRule, TierPolicy } from "../../runner/approval/policy.js";
import { resolveRealOrSelf } from "../../runner/fs/containment.js";
import { deleteScript, unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-tiers-");

/** A lookup with one live file-system scope, "S", rooted at `root` (as it really leads now). */
function scopes(root: string, cwd = root): ScopeLookup {
  return { cwd, fsScope: (token) => (token === "S" ? { root, realRoot: resolveRealOrSelf(root) } : null) };
}

function tierOf(rules: PolicyRule[], action: Action, lookup: ScopeLookup) {
  return new TierPolicy({ rules }, lookup.cwd).tierOf(describeAction(action, lookup));
}

const fs = (kind: "FsDelete" | "FsStat" | "FsMkdir", p: string): Action => ({ kind, scope: "S", path: p });
const write = (p: string): Action => ({ kind: "FsWrite", scope: "S", path: p, content: "x", append: false });
const exec = (command: string, args: string[]): Action => ({ kind: "Exec", scope: "E", command, args, cwd: null, timeoutMs: null, input: null });
const http = (method: string, url: string): Action => ({
  kind: "HttpRequest",
  scope: "N",
  method,
  url,
  headers: {},
  secretHeaders: {},
  body: null,
  classifiedBody: null,
});

describe("canonical patterns (describeAction)", () => {
  it("names file actions by category and absolute path, commands by shape, requests by method and host", () => {
    const lookup = scopes("/w/proj", "/w");
    expect(describeAction(fs("FsDelete", "a/b.txt"), lookup)).toMatchObject({ category: "fs.delete", pattern: "fs.delete /w/proj/a/b.txt" });
    expect(describeAction(fs("FsStat", "/w/proj/x"), lookup).pattern).toBe("fs.stat /w/proj/x");
    expect(describeAction(write("../proj/c"), lookup).pattern).toBe("fs.write /w/proj/c");
    expect(describeAction({ kind: "FsRead", scope: "S", path: "r", as: "text" }, lookup).category).toBe("fs.read");
    // A token that names no live scope matches nothing.
    expect(describeAction({ kind: "FsDelete", scope: "forged", path: "a" }, lookup)).toMatchObject({ pattern: "fs.delete (no scope)", subject: { kind: "none" } });
    expect(describeAction({ kind: "FsOpenScope", root: "proj" }, lookup).pattern).toBe("fs.open /w/proj");

    expect(describeAction(exec("git", ["push", "origin", "main"]), lookup).pattern).toBe("exec git push *");
    expect(describeAction(exec("git", ["status"]), lookup).pattern).toBe("exec git status");
    expect(describeAction(exec("ls", ["-la", "/"]), lookup).pattern).toBe("exec ls *");
    expect(describeAction(exec("true", []), lookup).pattern).toBe("exec true");

    expect(describeAction(http("post", "https://API.example.com/v1?q=1"), lookup).pattern).toBe("net POST api.example.com");
    expect(describeAction(http("GET", "http://127.0.0.1:8080/x"), lookup).pattern).toBe("net GET http://127.0.0.1:8080");
    expect(urlPattern("get", new URL("https://example.com:8443/"))).toBe("net GET example.com:8443");
    // IPv6 hosts keep their brackets: without them these two were one pattern.
    expect(urlPattern("get", new URL("http://[::1]:8080/"))).toBe("net GET http://[::1]:8080");
    expect(urlPattern("get", new URL("http://[::1:8080]/"))).toBe("net GET http://[::1:8080]");
    expect(describeAction(http("GET", "not a url"), lookup).pattern).toBe("net (not a URL)");
    expect(describeAction({ kind: "Chat", message: "hi" }, lookup)).toMatchObject({ category: "chat", pattern: "chat" });
    expect(describeAction({ kind: "Print", parts: [] }, lookup).category).toBe("internal");
  });

  it("names a path however a raw request spells it as path.resolve does (absolute ones normalized without it where they are already)", () => {
    // The stub sends normalized absolute paths; a script with the raw channel can send any text.
    const lookup = scopes("/w/proj", "/w");
    const spelled = ["/w/proj/a.txt", "/w/proj/./a.txt", "/w/proj//a.txt", "/w/proj/a.txt/", "/w/proj/x/../a.txt", "/w/proj/..", "//w/proj", "/", "/..", "/w/proj/.", "a/./b/", "../x", ".", ""];
    for (const p of spelled) {
      const request = describeAction({ kind: "FsRead", scope: "S", path: p, as: "text" }, lookup);
      expect(request.pattern, p).toBe(`fs.read ${path.resolve("/w/proj", p)}`);
      expect(request.subject.kind === "path" && request.subject.named, p).toBe(path.resolve("/w/proj", p));
    }
  });
});

describe("TierPolicy", () => {
  it("no rules: everything is allow (the allowlists alone decide)", () => {
    const policy = new TierPolicy(null, "/w");
    expect(policy.empty).toBe(true);
    expect(policy.tierOf(describeAction(fs("FsDelete", "a"), scopes("/w")))).toBe("allow");
    expect(policy.beyondTierOf(describeAction(exec("rm", ["-rf", "/"]), scopes("/w")))).toBeNull();
  });

  it("path globs: absolute, relative to the working directory, ** across directories, dot files", () => {
    const lookup = scopes("/w/proj", "/w");
    const rules: PolicyRule[] = [
      { action: "fs.delete", tier: "approve-once", path: "/w/proj/build/**" },
      { action: "fs.write", tier: "always-ask", path: "proj/*.lock" },
    ];
    expect(tierOf(rules, fs("FsDelete", "build/out/x.o"), lookup)).toBe("approve-once");
    expect(tierOf(rules, fs("FsDelete", "build/.hidden"), lookup)).toBe("approve-once");
    expect(tierOf(rules, fs("FsDelete", "src/x.ts"), lookup)).toBe("allow");
    // The rule names the action: a write under build/ is not a delete.
    expect(tierOf(rules, write("build/x.o"), lookup)).toBe("allow");
    // Relative globs start at the working directory (/w), not at the scope's root.
    expect(tierOf(rules, write("package.lock"), lookup)).toBe("always-ask");
    expect(tierOf(rules, write("sub/package.lock"), lookup)).toBe("allow");
    expect(tierOf(rules, write("package.lock"), scopes("/other", "/w"))).toBe("allow");
    // No path in the rule: every path of that action.
    expect(tierOf([{ action: "fs.mkdir", tier: "approve-once" }], fs("FsMkdir", "anything/at/all"), lookup)).toBe("approve-once");
  });

  it("symlinks: a rule on /x/deploy/** matches a write or delete through a link into it", () => {
    const { root } = world();
    const deploy = path.join(root, "deploy");
    mkdirSync(path.join(deploy, "sub"), { recursive: true });
    mkdirSync(path.join(root, "proj"));
    symlinkSync(deploy, path.join(root, "proj", "link"));
    symlinkSync(path.join(deploy, "sub", "gone.txt"), path.join(root, "proj", "dead")); // a dead link into it
    const lookup = scopes(path.join(root, "proj"), root);
    const rules: PolicyRule[] = [{ action: "fs.write", tier: "always-ask", path: `${deploy}/**` }];
    expect(tierOf(rules, write("link/new.txt"), lookup)).toBe("always-ask");
    expect(tierOf(rules, write("link/sub/new.txt"), lookup)).toBe("always-ask");
    expect(tierOf(rules, write("dead"), lookup)).toBe("always-ask");
    expect(tierOf(rules, write("plain.txt"), lookup)).toBe("allow");
    // And the other way round: a rule on the link's name still matches.
    const byName: PolicyRule[] = [{ action: "fs.delete", tier: "approve-once", path: `${root}/proj/link/**` }];
    expect(tierOf(byName, fs("FsDelete", "link/sub"), lookup)).toBe("approve-once");
  });

  it("fs.read: a search or listing of a directory is asked about when a rule may match something below it", () => {
    // A security review read private/** through grepRecursive(".") while read() was refused.
    const lookup = scopes("/w");
    const rules: PolicyRule[] = [{ action: "fs.read", tier: "always-ask", path: "private/**" }];
    const action = (kind: "FsGrepRecursive" | "FsFind" | "FsList" | "FsGrep" | "FsRead", p: string): Action => {
      switch (kind) {
        case "FsGrepRecursive":
          return { kind, scope: "S", path: p, pattern: "x", glob: null };
        case "FsFind":
          return { kind, scope: "S", path: p, glob: "*" };
        case "FsList":
          return { kind, scope: "S", path: p, recursive: false };
        case "FsGrep":
          return { kind, scope: "S", path: p, pattern: "x" };
        case "FsRead":
          return { kind, scope: "S", path: p, as: "text" };
      }
    };
    expect(tierOf(rules, action("FsRead", "private/notes.txt"), lookup)).toBe("always-ask");
    expect(tierOf(rules, action("FsGrepRecursive", "."), lookup)).toBe("always-ask");
    expect(tierOf(rules, action("FsFind", "."), lookup)).toBe("always-ask");
    expect(tierOf(rules, action("FsList", "private"), lookup)).toBe("always-ask");
    expect(tierOf(rules, action("FsGrepRecursive", "private/deeper"), lookup)).toBe("always-ask");
    // Nothing the rule covers lies below these.
    expect(tierOf(rules, action("FsGrepRecursive", "public"), lookup)).toBe("allow");
    expect(tierOf(rules, action("FsList", "."), lookup)).toBe("always-ask");
    expect(tierOf(rules, action("FsGrep", "public/a.txt"), lookup)).toBe("allow");
    expect(tierOf(rules, action("FsRead", "public/a.txt"), lookup)).toBe("allow");
  });

  it("exec: command and argument globs (* only), command names case-insensitively", () => {
    const lookup = scopes("/w");
    const rules: PolicyRule[] = [
      { action: "exec", tier: "approve-once", command: "git", args: "push*" },
      { action: "exec", tier: "always-ask", command: "rm" },
      { action: "exec", tier: "approve-once", command: "kubectl*", args: "* --force *" },
    ];
    expect(tierOf(rules, exec("git", ["push", "origin", "main"]), lookup)).toBe("approve-once");
    expect(tierOf(rules, exec("git", ["push"]), lookup)).toBe("approve-once");
    expect(tierOf(rules, exec("git", ["status"]), lookup)).toBe("allow");
    // Fail safe: "push" after other arguments may be the subcommand (`git -C . push`), so a rule
    // that asks matches there too; over-asking about `git log push` is the price.
    expect(tierOf(rules, exec("git", ["log", "push"]), lookup)).toBe("approve-once");
    expect(tierOf(rules, exec("GIT", ["push"]), lookup)).toBe("approve-once");
    expect(tierOf(rules, exec("rm", []), lookup)).toBe("always-ask");
    expect(tierOf(rules, exec("rmdir", ["x"]), lookup)).toBe("allow");
    expect(tierOf(rules, exec("kubectl-1.30", ["delete", "--force", "pod"]), lookup)).toBe("approve-once");
    expect(tierOf(rules, exec("kubectl", ["delete", "pod"]), lookup)).toBe("allow");
    // Glob metacharacters other than * are literal.
    expect(tierOf([{ action: "exec", tier: "always-ask", command: "a.c" }], exec("abc", []), lookup)).toBe("allow");
  });

  it("exec: an args glob on a rule that asks fails safe: global options and aliases do not dodge it", () => {
    const lookup = scopes("/w");
    const rules: PolicyRule[] = [{ action: "exec", tier: "always-ask", command: "git", args: "push*" }];
    // Global options before the subcommand: the glob matches from any argument.
    expect(tierOf(rules, exec("git", ["-C", ".", "push", "origin", "HEAD"]), lookup)).toBe("always-ask");
    expect(tierOf(rules, exec("git", ["--git-dir=.git", "--work-tree", ".", "push"]), lookup)).toBe("always-ask");
    // An alias moves the subcommand into another argument: one containing the glob's head matches,
    // and so does any argument that defines an alias at all (what it runs is not in the arguments).
    expect(tierOf(rules, exec("git", ["-c", "alias.p=push", "p", "origin", "HEAD"]), lookup)).toBe("always-ask");
    expect(tierOf(rules, exec("git", ["-c", "ALIAS.x=!sh -c 'git pu''sh'", "x"]), lookup)).toBe("always-ask");
    // Configuration on the command line can reach a push without naming it (include.path,
    // help.autocorrect): any -c makes the rule ask.
    expect(tierOf(rules, exec("git", ["-c", "include.path=/tmp/inc.cfg", "shipit", "origin"]), lookup)).toBe("always-ask");
    expect(tierOf(rules, exec("git", ["-c", "help.autocorrect=immediate", "pusj", "origin"]), lookup)).toBe("always-ask");
    expect(tierOf(rules, exec("git", ["--config-env=core.x=ENV", "shipit"]), lookup)).toBe("always-ask");
    // What no argument names is still not asked about.
    expect(tierOf(rules, exec("git", ["status"]), lookup)).toBe("allow");
    expect(tierOf(rules, exec("git", ["-C", ".", "status"]), lookup)).toBe("allow");
    // A glob with words after its head: the whole head must appear.
    const force: PolicyRule[] = [{ action: "exec", tier: "always-ask", command: "git", args: "push --force*" }];
    expect(tierOf(force, exec("git", ["-C", ".", "push", "--force", "origin"]), lookup)).toBe("always-ask");
    expect(tierOf(force, exec("git", ["-c", "alias.fp=push --force", "fp"]), lookup)).toBe("always-ask");
    expect(tierOf(force, exec("git", ["-C", ".", "push", "origin"]), lookup)).toBe("allow");
    // A glob without *: from any argument to the end.
    const exact: PolicyRule[] = [{ action: "exec", tier: "approve-once", command: "npm", args: "publish" }];
    expect(tierOf(exact, exec("npm", ["--prefix", "x", "publish"]), lookup)).toBe("approve-once");
    // …and any argument that holds it: over-asking, never under-asking.
    expect(tierOf(exact, exec("npm", ["publish", "--dry-run"]), lookup)).toBe("approve-once");
    expect(tierOf(exact, exec("npm", ["run", "build"]), lookup)).toBe("allow");
  });

  it("exec: matching an args glob takes time linear in the command line (no backtracking on the script's text)", () => {
    const lookup = scopes("/w");
    // The head "a a" fits at the start; the rest has many stars and never matches (no "c").
    const rules: PolicyRule[] = [{ action: "exec", tier: "always-ask", command: "x", args: "a a*a*a*a*a*a*c" }];
    // No clock here (a bound on a measured time failed under load): the command line is made so
    // long that only a linear match ends within the test's timeout. 200,000 words are about
    // 400,000 characters: linear, some milliseconds; the glob tried from every argument, about
    // 8 * 10^10 steps, which would not end for minutes.
    const args = Array.from({ length: 200_000 }, () => "a");
    expect(tierOf(rules, exec("x", args), lookup)).toBe("allow");
  }, 20_000);

  it("net: host pattern and method; a host with no port on every port", () => {
    const lookup = scopes("/w");
    const rules: PolicyRule[] = [
      { action: "net", tier: "approve-once", host: "*.example.com", method: "post" },
      { action: "net", tier: "always-ask", host: "127.0.0.1:*" },
    ];
    expect(tierOf(rules, http("POST", "https://api.example.com/x"), lookup)).toBe("approve-once");
    expect(tierOf(rules, http("GET", "https://api.example.com/x"), lookup)).toBe("allow");
    // No port in the pattern: a rule that asks is not dodged by naming one.
    expect(tierOf(rules, http("POST", "https://api.example.com:8443/x"), lookup)).toBe("approve-once");
    expect(tierOf(rules, http("POST", "https://example.org/x"), lookup)).toBe("allow");
    expect(tierOf(rules, http("GET", "http://127.0.0.1:9/x"), lookup)).toBe("always-ask");
    expect(tierOf(rules, http("DELETE", "http://127.0.0.1/x"), lookup)).toBe("always-ask");
    expect(tierOf([{ action: "net", tier: "always-ask" }], http("GET", "https://anything.test/"), lookup)).toBe("always-ask");
  });

  it("the highest matching tier wins, in any order", () => {
    const lookup = scopes("/w");
    const low: PolicyRule = { action: "fs.delete", tier: "approve-once" };
    const high: PolicyRule = { action: "fs.delete", tier: "always-ask", path: "/w/secret/**" };
    expect(tierOf([low, high], fs("FsDelete", "secret/a"), lookup)).toBe("always-ask");
    expect(tierOf([high, low], fs("FsDelete", "secret/a"), lookup)).toBe("always-ask");
    expect(tierOf([high, low], fs("FsDelete", "public/a"), lookup)).toBe("approve-once");
    const git: PolicyRule[] = [
      { action: "exec", tier: "always-ask", command: "git", args: "push --force*" },
      { action: "exec", tier: "approve-once", command: "git" },
    ];
    expect(tierOf(git, exec("git", ["push", "--force", "origin"]), lookup)).toBe("always-ask");
    expect(tierOf(git, exec("git", ["push", "origin"]), lookup)).toBe("approve-once");
  });

  it("beyondTierOf: only beyondAllowlist rules make a refused action askable", () => {
    const lookup = scopes("/w");
    const policy = new TierPolicy(
      {
        rules: [
          { action: "exec", tier: "always-ask", command: "echo" },
          { action: "exec", tier: "approve-once", command: "touch", beyondAllowlist: true },
        ],
      },
      "/w",
    );
    expect(policy.beyondTierOf(describeAction(exec("touch", ["x"]), lookup))).toBe("approve-once");
    expect(policy.beyondTierOf(describeAction(exec("echo", ["x"]), lookup))).toBeNull();
    expect(policy.tierOf(describeAction(exec("echo", ["x"]), lookup))).toBe("always-ask");
    // A beyondAllowlist rule reads a host as the allowlists do: no port, the default ports alone.
    const net = new TierPolicy({ rules: [{ action: "net", tier: "always-ask", host: "api.example.com", beyondAllowlist: true }] }, "/w");
    expect(net.beyondTierOf(describeAction(http("GET", "https://api.example.com/x"), lookup))).toBe("always-ask");
    expect(net.beyondTierOf(describeAction(http("GET", "https://api.example.com:8443/x"), lookup))).toBeNull();
  });
});

describe("policy validation through tacit run --config (exit 2, naming the key)", () => {
  async function rejected(rules: unknown[]): Promise<string> {
    const w = world();
    w.file("a.txt");
    const run = await unattended(w, ["run", "--config", w.config(rules), w.script(deleteScript("a.txt"))]);
    expect(run.code, run.all).toBe(2);
    // Nothing ran: the file is still there, and no approvals file appeared.
    expect(w.exists("a.txt")).toBe(true);
    expect(run.stdout).not.toContain("deleted");
    return run.stderr;
  }

  it("a bad tier", async () => {
    const stderr = await rejected([{ action: "fs.delete", tier: "allow" }]);
    expect(stderr).toMatch(/policy\.rules\.0\.tier/);
  });

  it("an unknown action", async () => {
    const stderr = await rejected([{ action: "fs.nuke", tier: "always-ask" }]);
    expect(stderr).toMatch(/policy\.rules\.0\.action/);
  });

  it("a field that does not apply to the action", async () => {
    const stderr = await rejected([{ action: "fs.delete", tier: "always-ask" }, { action: "fs.delete", tier: "always-ask", command: "git" }]);
    expect(stderr).toContain("policy.rules.1.command");
    expect(stderr).toContain('"command" does not apply to action "fs.delete"');
    const host = await rejected([{ action: "exec", tier: "always-ask", host: "example.com" }]);
    expect(host).toContain("policy.rules.0.host");
  });

  it("beyondAllowlist without a subject, on an action it cannot extend, or with args", async () => {
    const noSubject = await rejected([{ action: "exec", tier: "always-ask", beyondAllowlist: true }]);
    expect(noSubject).toContain("policy.rules.0.beyondAllowlist");
    expect(noSubject).toContain("command");
    const wrongAction = await rejected([{ action: "fs.delete", tier: "always-ask", path: "**", beyondAllowlist: true }]);
    expect(wrongAction).toContain("policy.rules.0.beyondAllowlist");
    const withArgs = await rejected([{ action: "exec", tier: "always-ask", command: "git", args: "push*", beyondAllowlist: true }]);
    expect(withArgs).toContain("policy.rules.0.beyondAllowlist");
  });

  it("an unknown key in a rule, a command with a path, a bad host pattern", async () => {
    const unknown = await rejected([{ action: "fs.delete", tier: "always-ask", paths: "/x" }]);
    expect(unknown).toContain('"policy.rules.0.paths"');
    const slash = await rejected([{ action: "exec", tier: "always-ask", command: "/bin/rm" }]);
    expect(slash).toContain("policy.rules.0.command");
    const host = await rejected([{ action: "net", tier: "always-ask", host: "http://example.com/x" }]);
    expect(host).toContain("policy.rules.0.host");
  });
});
