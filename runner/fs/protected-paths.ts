// tacit's own files, which no script may read or write whatever the allowed roots say: the
// config file (it may hold the LLM key), the secure output (plaintext secrets), tacit's home
// (remembered approvals, the audit signing key and the audit logs' anchors), the audit log and its lock, and the record
// directory. A script that could reach them
// could read secrets back, grant itself approvals, or forge and sign the log. And tacit's own
// code (its package, the packages it loads, Deno and the type checker among them), which a
// script may read but not change: tacit runs it with your full authority, so a script that
// rewrote it would run code of its own outside the sandbox the next time tacit loads it. And
// the working directories of tacit's type checks (temp-dirs.ts), refused like tacit's files.
// And the files that decide how tacit starts (launch-files.ts: npm's .npmrc, the MCP clients'
// settings that hold tacit's command and flags), which a script may read but not change; and
// the files those settings name for tacit (client-settings.ts), refused like this run's own, and
// so are the config, sink and record files earlier runs on this machine were given (remembered-files.ts).
// And every mount of the kernel's process file system (proc-mounts.ts), which is not tacit's but
// shows tacit itself: its environment (the LLM key), its open files, its memory.
// And, to changes, what git runs later (git-repository.ts, hook-managers.ts) and the files a
// direnv .envrc loads into the user's shell (direnv.ts) and an .envrc direnv trusts by path
// (direnv-trust.ts), and mise's configuration in a directory
// mise trusts and the files it loads (mise.ts), and the .env of a directory Oh My Zsh's dotenv
// plugin always loads (zsh-dotenv.ts), and the programs of a trusted .shadowenv.d (shadowenv.ts),
// and the .vimrc and .exrc files Vim runs where its configuration sets 'exrc' (vim-exrc.ts), and the
// .gdbinit files GDB runs where its configuration puts their directory on its safe path (gdb-init.ts),
// and the modules a site-packages .pth file imports at every start of Python and a venv's pyvenv.cfg (python-startup.ts),
// and the scripts Claude Code's hooks, status line and key helper run (agent-hooks.ts), and the
// executables in the directories on the user's PATH (path-programs.ts), and the launch files of
// every other directory, which a client or `npx tacit` started there reads (launch-files.ts).

import path from "node:path";
import type { RunnerConfig } from "../config.js";
import { filesNamedByClientSettings, RECORD_DIRECTORY_WHAT } from "../client-settings.js";
import { isNpxTacitProgram, launchFileNamedAt, tacitBinDirectoryManifestOf, tacitLaunchFiles } from "../launch-files.js";
import { npxTacitCodeLocations, tacitCodeLocations } from "../paths.js";
import { rememberedOwnFiles } from "../remembered-files.js";
import { tacitHomes } from "../tacit-home.js";
import { CHANNEL_DIR_PREFIX } from "../sandbox-input.js";
import { tacitTempDirBelow, tacitTempDirOf, tempDirPlaces } from "../temp-dirs.js";
import { agentHookChangeOf } from "./agent-hooks.js";
import { isWithin, isWithinInAnyCase, namedAndReal, withinTest, withinTestInAnyCase } from "./containment.js";
import { direnvLoadChangeOf, direnvProgramChangeOf } from "./direnv.js";
import { direnvTrustedChangeOf } from "./direnv-trust.js";
import { gdbInitChangeOf } from "./gdb-init.js";
import { pythonStartupModuleChangeOf, pyvenvConfigChangeOf } from "./python-startup.js";
import { gitRepositoryChangeOf } from "./git-repository.js";
import { miseChangeOf } from "./mise.js";
import { pathProgramChangeOf } from "./path-programs.js";
import { shadowenvChangeOf } from "./shadowenv.js";
import { vimExrcChangeOf } from "./vim-exrc.js";
import { zshDotenvChangeOf } from "./zsh-dotenv.js";
import { kernelInterfaceMounts, procMounts } from "./proc-mounts.js";

export interface ProtectedPath {
  /** Absolute: where it really is (symlinks resolved), or the name tacit opens it by. */
  path: string;
  /** What it is, for the refusal. */
  what: string;
  /** Scripts may read it, only not change it (tacit's own code). */
  readable?: true;
  /** Why scripts may not use it and what to do instead, where "it belongs to tacit" is not the reason. */
  refusal?: string;
}

/** Whether an operation only reads a path, or may change what is there (write, create, delete). */
export type PathUse = "read" | "change";

/** A place scripts may read but not change, and what to call it in a refusal. */
function readOnlyAt(what: string): (location: string) => ProtectedPath {
  return (location) => ({ path: location, what, readable: true });
}

let readOnlyPaths: ProtectedPath[] | undefined;

/**
 * What scripts may read but not change, found on first use (a few tens of milliseconds: only a
 * script that changes files pays it), whatever the config says:
 * - tacit's own code: a project that has tacit as a dependency holds it inside the default
 *   allowed root, and a script that wrote into it ran code of its own with your authority at
 *   tacit's next start, or in tacit serve at the type checker's next restart, with no command
 *   permitted;
 * - the files that decide how tacit is started: a script that wrote
 *   `node-options=--require ./x.js` into the project's .npmrc ran x.js inside tacit, with your
 *   authority, at the next `npx tacit`; one that rewrote .mcp.json gave itself wider flags;
 * - the kernel's control file systems (sysfs, cgroup, debugfs, …: proc-mounts.ts), whose writes
 *   change how the system runs: a script made a cgroup and set its limits under /sys/fs/cgroup.
 */
export function readOnlyProtectedPaths(): readonly ProtectedPath[] {
  readOnlyPaths ??= [
    ...tacitCodeLocations().map(readOnlyAt("tacit's own code (its package, or a package it loads, which run with your full authority)")),
    ...npxTacitCodeLocations().map(
      readOnlyAt("the code of the tacit that `npx tacit` runs here (a copy in node_modules, or a package it loads, which runs with your full authority at its next start)"),
    ),
    // Read once, with the rest: a mount made later needs privileges tacit does not give scripts.
    ...kernelInterfaceMounts().map(({ type, point }) =>
      readOnlyAt(
        `the kernel's ${type} file system (mounted at ${point}), whose files are the kernel's controls rather than files: writing one, or making or removing an entry there, changes how the system or its processes run (a cgroup's can freeze tacit or stop it starting processes)`,
      )(point),
    ),
    ...tacitLaunchFiles().map(
      readOnlyAt(
        "a file that decides how tacit starts (npm's configuration, which can make `npx tacit` run code of its own inside tacit, or an MCP client's settings holding tacit's command and policy flags)",
      ),
    ),
  ];
  return readOnlyPaths;
}

export function protectedPathsOf(config: RunnerConfig, env: NodeJS.ProcessEnv = process.env): ProtectedPath[] {
  const paths: ProtectedPath[] = [];
  // Both where each file really is and the name tacit opens it by: a script that replaced a
  // link on the way to it with a directory of its own (so that the name led elsewhere) could
  // otherwise fill that directory with approvals, a key or a sink tacit would then use.
  const protect = (file: string, what: string, refusal?: string): void => {
    for (const where of namedAndReal([file])) paths.push(refusal === undefined ? { path: where, what } : { path: where, what, refusal });
  };
  // Each place a run of this user may keep it, not only this run's (tacit-home.ts, tacitHomes).
  for (const home of tacitHomes(env)) protect(home, "tacit's home (remembered approvals, the audit signing key and the audit logs' anchors)");
  if (config.configFile) protect(config.configFile, "tacit's config file (--config, which may hold the LLM API key)");
  if (config.library.secureOutput) protect(config.library.secureOutput, "the secure output file (--secure-output, which holds plaintext)");
  if (config.auditLog) {
    protect(config.auditLog, "the audit log (--audit-log)");
    // The writer's lock lies in tacit's home (audit/log.ts); FILE.lock is where older versions of tacit take it, so it stays refused.
    protect(`${config.auditLog}.lock`, "the audit log's lock");
  }
  if (config.recordPath) protect(config.recordPath, RECORD_DIRECTORY_WHAT);
  // And the same files of the runs the MCP clients' settings start (client-settings.ts): a run
  // without those flags refused its script only its own, so the script could read the sink or
  // the key of the tacit serve the project registers, or plant approvals in its home.
  for (const named of filesNamedByClientSettings(process.cwd(), env)) protect(named.path, named.what);
  // And the same files that earlier runs on this machine were given on their command lines or in
  // their config (remembered-files.ts): a script of a run without those flags rewrote the
  // project's tacit.json, and the person's next `tacit run --config tacit.json` ran what it added.
  for (const remembered of rememberedOwnFiles(env)) protect(remembered.path, remembered.what, remembered.refusal);
  for (const mount of procMounts()) {
    paths.push({
      path: mount,
      what: `the kernel's process file system (procfs, mounted at ${mount})`,
      refusal: PROCFS_REFUSAL,
    });
  }
  return paths;
}

/** Why procfs is refused to scripts, and what to do instead: for a path named there, and for a link that leads there (LeadsIntoProcfs). */
export const PROCFS_REFUSAL =
  "scripts can neither read nor write anything there, whatever the allowed roots say: it shows every process as the host " +
  "sees it, tacit's own included (its environment with the LLM API key, its open files such as the secure output and the " +
  "audit log, its memory), and some of its files change how the system runs. Work with other files; to learn about a " +
  "process, run a command that reports it (requestExecPermission), if the operator permits one";

/**
 * A repository's own configuration and hooks (`.git/config`, `.git/config.worktree`,
 * `.git/hooks/…`, the same of its submodules and worktrees) and a `.git` file (which names the
 * repository's directory): git runs the commands they name (core.fsmonitor at every `git
 * status`, core.pager, core.sshCommand, aliases, hooks) with the user's authority, so a script
 * that changed them ran code of its own outside the sandbox at the user's next git command.
 */
// In any case: on a case-insensitive file system (macOS, Windows) a script's `.git/CONFIG` is git's `.git/config`.
const GIT_CONTROL = /(?:^|\/)\.git(?:\/(?:modules\/.+|worktrees\/[^/]+))?(?:\/(?:config|config\.worktree|hooks)(?:\/|$)|$)/i;

/** The repository control file `changed` is (see GIT_CONTROL), as a protected path to refuse changes to, or null. */
export function gitControlOf(changed: string): ProtectedPath | null {
  return !GIT_CONTROL.test(changed)
    ? null
    : {
        path: changed,
        what: "a git repository's configuration or hooks",
        readable: true,
        refusal:
          "scripts may read it but not change it: git runs the commands it names (core.fsmonitor at every git status, core.pager, " +
          "aliases, hooks) with the user's full authority, outside the sandbox. Ask the user to change it",
      };
}

/**
 * The launch file `changed` is (or lies in) in a directory other than the one tacit was started in
 * (launch-files.ts, launchFileNamedAt): npm's and yarn's configuration, an MCP client's project
 * settings. The client, or `npx tacit`, started in that directory runs what it names.
 */
function launchFileElsewhereOf(changed: string): ProtectedPath | null {
  const found = launchFileNamedAt(changed);
  return found === null
    ? null
    : {
        path: path.join(found.dir, found.name),
        what: `${found.name} in ${found.dir}, settings that decide what an AI client or npm started in that directory runs`,
        readable: true,
        refusal:
          "scripts may read it but not change it (nor create or delete it), in any directory, not only where tacit was started: an MCP client " +
          "(Claude Code, Gemini CLI, Cursor, OpenCode, …) started there runs the commands, hooks and servers its settings name, and npm's " +
          "configuration there (node-options, script-shell) makes the next `npx` or `npm run` there (`npx tacit` included) run a file it names, " +
          "all with the user's full authority, outside the sandbox. Ask the user to change it",
      };
}

/** The file named tacit in a bin directory a package.json names (launch-files.ts, tacitBinDirectoryManifestOf), which `npx tacit` runs there. */
function tacitBinElsewhereOf(changed: string): ProtectedPath | null {
  const manifest = tacitBinDirectoryManifestOf(changed);
  return manifest === null
    ? null
    : {
        path: changed,
        what: `the program \`npx tacit\` runs in ${path.dirname(manifest)}: ${manifest} names its directory in directories.bin`,
        readable: true,
        refusal:
          "scripts may read it but not change it (nor create or delete it): `npx tacit` started in that directory (as an MCP client registered " +
          "for the user starts it there) runs it instead of the installed tacit, with the user's full authority, outside the sandbox. Give the " +
          "file another name, or ask the user",
      };
}

/**
 * node_modules/.bin/tacit in any directory (launch-files.ts, isNpxTacitProgram), which `npx tacit`
 * started there or below runs before any installed tacit. Refused as named too, not only where it
 * leads: a pnpm-style shim there is a shell script of its own, not a link into tacit's code, and a
 * script with nothing but requestFileSystem(".") rewrote one (its mode kept) so that the next
 * `npx tacit` ran the script's shell code.
 */
function npxTacitProgramOf(changed: string): ProtectedPath | null {
  return !isNpxTacitProgram(changed)
    ? null
    : {
        path: changed,
        what: `the program \`npx tacit\` runs in ${path.dirname(path.dirname(path.dirname(changed)))} and the directories below it`,
        readable: true,
        refusal:
          "scripts may read it but not change it (nor create or delete it): `npx tacit` started there or below (as an MCP client registered " +
          "for the user starts it) runs it before any installed tacit, with the user's full authority, outside the sandbox. Ask the user " +
          "(npm install makes it)",
      };
}

/**
 * The protected path that `named` or `real` is (or lies inside), or null. `use`: "read" lets
 * tacit's own code through (it may be read); anything else is refused it too. `readOnlyAround`:
 * those of readOnlyProtectedPaths() that `named` and `real` can lie in, where the caller knows
 * (see FileSystemExecutor's protectedAround); all of them by default.
 */
export function protectedPathOf(
  paths: readonly ProtectedPath[],
  named: string,
  realPath: string,
  use: PathUse = "change",
  readOnlyAround: () => readonly ProtectedPath[] = readOnlyProtectedPaths,
): ProtectedPath | null {
  // The path as named is tried too only where it is another string: each check is a function of the string.
  const realInside = withinTest(realPath);
  const namedInside = named === realPath ? null : withinTest(named);
  // And in any case: on a case-insensitive file system `SECURE.LOG` opens the secure output `secure.log`.
  const realInsideInAnyCase = withinTestInAnyCase(realPath);
  const namedInsideInAnyCase = named === realPath ? null : withinTestInAnyCase(named);
  const inside = (p: ProtectedPath): boolean =>
    realInside(p.path) ||
    (namedInside !== null && namedInside(p.path)) ||
    realInsideInAnyCase(p.path) ||
    (namedInsideInAnyCase !== null && namedInsideInAnyCase(p.path));
  // Each check on changes judges the path where it really leads, then (if another) the path as named.
  const either = (check: (changed: string) => ProtectedPath | null): ProtectedPath | null => check(realPath) ?? (named === realPath ? null : check(named));
  return (
    paths.find(inside) ??
    checkDir(tacitTempDirOf(realPath) ?? (named === realPath ? null : tacitTempDirOf(named))) ??
    (use === "change"
      ? (readOnlyAround().find(inside) ??
        either(gitControlOf) ??
        either(gitRepositoryChangeOf) ??
        either(direnvLoadChangeOf) ??
        either(direnvTrustedChangeOf) ??
        either(direnvProgramChangeOf) ??
        either(miseChangeOf) ??
        either(zshDotenvChangeOf) ??
        either(shadowenvChangeOf) ??
        either(vimExrcChangeOf) ??
        either(gdbInitChangeOf) ??
        either(pythonStartupModuleChangeOf) ??
        either(pyvenvConfigChangeOf) ??
        either(agentHookChangeOf) ??
        either(launchFileElsewhereOf) ??
        either(tacitBinElsewhereOf) ??
        either(npxTacitProgramOf) ??
        either(pathProgramChangeOf))
      : null)
  );
}

/**
 * One of tacit's directories in the temporary directory (temp-dirs.ts). A type check's: another
 * run's script, its checker settings and tacit serve's checker launcher, which a script whose
 * roots hold the temporary directory could otherwise rewrite before the checker reads or runs
 * them. A sandbox's input socket's, until the host has connected to it.
 */
function checkDir(dir: string | null): ProtectedPath | null {
  if (dir === null) return null;
  if (path.basename(dir).startsWith(CHANNEL_DIR_PREFIX)) return { path: dir, what: "the socket of a starting sandbox's input, which tacit connects to" };
  return { path: dir, what: "a working directory of tacit's type checker (a script being checked, its settings and the checker's launcher)" };
}

/**
 * The protected path that lies below `named` or `real`, or null: removing such a directory or
 * link would let a script put something of its own where tacit looks for its files.
 */
export function protectedPathBelow(paths: readonly ProtectedPath[], named: string, realPath: string): ProtectedPath | null {
  const below = (p: ProtectedPath): boolean =>
    isWithin(p.path, realPath) || isWithin(p.path, named) || isWithinInAnyCase(p.path, realPath) || isWithinInAnyCase(p.path, named);
  return paths.find(below) ?? checkDir(tacitTempDirBelow(realPath) ?? tacitTempDirBelow(named)) ?? readOnlyProtectedPaths().find(below) ?? null;
}

/**
 * A path as a glob that matches only itself. A space escaped too: a classified pattern's
 * unescaped trailing space is dropped (see classified-paths.ts), so a secure output named
 * "secure.log " was excluded as "secure.log", and grepRecursive() printed its plaintext.
 */
const literalGlob = (text: string): string => text.replace(/[*?[\]{}()!+@\\ ]/g, "\\$&");

/** As absolute classified-path patterns, so a recursive search skips them without opening them. */
export function asSearchExclusions(paths: readonly ProtectedPath[]): string[] {
  return [...paths.map((p) => literalGlob(p.path)), ...tempDirPlaces().map(({ root, prefix }) => `${literalGlob(root)}/${prefix}*`)];
}
