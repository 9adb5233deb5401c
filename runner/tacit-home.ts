// Where tacit keeps what outlives a run: the audit signing key, the audit logs' anchors (the
// last head signed in each log, audit/anchor.ts), remembered approvals, and caches (type-check
// verdicts, the network-namespace probe's note: namespace-probe-memo.ts).
// $TACIT_HOME when set (tests, containers), else $XDG_CONFIG_HOME/tacit, else ~/.config/tacit.
// The directory is owner-only: these files decide what an agent may do or prove what it did.

import { chmodSync, mkdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isWithin, LeadsIntoProcfs, resolveReal } from "./fs/containment.js";
import { passwdHome } from "./fs/home-config.js";
import { shellOnlyPart } from "./shell-only.js";

export function tacitHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TACIT_HOME) return path.resolve(env.TACIT_HOME);
  const config = env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(os.homedir(), ".config");
  return path.join(config, "tacit");
}

/**
 * Why tacit's home cannot be used as the environment sets it, or null. A relative TACIT_HOME (or
 * XDG_CONFIG_HOME without TACIT_HOME, or HOME without either) named another home in each working directory, inside the
 * project: a script of a run started in its parent (whose root held it, while that run's own home
 * was elsewhere) could write approvals there that the next run started in the project, as the
 * same user, would trust. An absolute path in /proc does the same (/proc/self/cwd/x is the
 * working directory's x in each process), and so does one reached through a link into /proc: the
 * home is judged by where its path really leads.
 */
export function tacitHomeSettingProblem(env: NodeJS.ProcessEnv = process.env): string | null {
  // HOME too, where neither is set: os.homedir() returns HOME as it is, so HOME=proj put the home
  // in proj/.config/tacit of each working directory just the same. (An empty or unset HOME is
  // read from the password database, which is absolute.)
  const name = env.TACIT_HOME ? "TACIT_HOME" : env.XDG_CONFIG_HOME ? "XDG_CONFIG_HOME" : env.HOME ? "HOME" : null;
  const value = name === null ? "" : env[name]!;
  if (name !== null && !path.isAbsolute(value)) {
    const otherwise =
      name === "TACIT_HOME"
        ? "or unset it to use $XDG_CONFIG_HOME/tacit or ~/.config/tacit"
        : name === "XDG_CONFIG_HOME"
          ? "or unset it to use ~/.config/tacit"
          : "or set TACIT_HOME to an absolute path for tacit's home";
    return (
      `${name} is a relative path (${JSON.stringify(value)}), which names another home for tacit in each working directory, inside what ` +
      `scripts may write: set it to an absolute path (such as ${absoluteMeant(value, env)}), ${otherwise}`
    );
  }
  const home = tacitHome(env);
  const through = procfsOnTheWay(home);
  if (through === null) return null;
  const setBy = name === null ? "the home directory the password database gives" : `${name}=${JSON.stringify(value)}`;
  const instead =
    `set TACIT_HOME to an absolute path of a directory of your own outside /proc (such as ${path.join(passwdHome() ?? os.homedir(), ".config", "tacit")})` +
    (name === "TACIT_HOME" ? ", or unset it to use $XDG_CONFIG_HOME/tacit or ~/.config/tacit" : name === "XDG_CONFIG_HOME" ? ", or unset XDG_CONFIG_HOME to use ~/.config/tacit" : "");
  return (
    `tacit's home would be ${home} (${setBy}), which ${through}: a place there leads somewhere else in each process (/proc/self/cwd is ` +
    `the working directory, so each run and each command a script starts, tacit among them, would keep its approvals and audit key in ` +
    `a directory of wherever it runs, inside what scripts may write). Nothing was run. ${capitalized(instead)}`
  );
}

/** How `home` leads into the kernel's process file system (named in /proc, or through a link there), or null. */
function procfsOnTheWay(home: string): string | null {
  if (isWithin(home, PROCFS)) return "is in /proc";
  try {
    resolveReal(home, "refuse");
  } catch (error) {
    if (error instanceof LeadsIntoProcfs) return `is reached through a link into /proc (procfs, mounted at ${error.mount})`;
    // Any other failure (a loop of links, no permission) is ensureTacitHome's to report, with its fix.
  }
  return null;
}

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** Where the kernel's process file system is mounted: no fixed place for a home. */
const PROCFS = "/proc";

/**
 * The absolute path a relative home setting most likely meant: with a leading ~ or $HOME, which
 * only a shell expands (an MCP client's settings pass "~/.tacit" as written), that expanded, not
 * "<working directory>/~/.tacit"; otherwise `value` from the working directory.
 */
function absoluteMeant(value: string, env: NodeJS.ProcessEnv): string {
  const found = shellOnlyPart(value, env);
  return found?.expanded ? `${found.expanded}: ${found.part} is expanded by a shell, not by tacit` : path.resolve(value);
}

/**
 * Every place this user's runs may keep tacit's home: this run's, and those of runs started
 * without TACIT_HOME or XDG_CONFIG_HOME (a shell, a client, a container may set them and another
 * not). Scripts are refused them all (fs/protected-paths.ts): a run with TACIT_HOME set elsewhere
 * let a script whose root held the home directory read ~/.config/tacit/audit-key.json, the key
 * that signs the audit logs of every run without it. ~/.config/tacit is taken both from HOME and
 * from the password database (os.homedir() reads HOME first): with HOME set elsewhere too, a run
 * started in the user's real home read the key kept there.
 */
export function tacitHomes(env: NodeJS.ProcessEnv = process.env): string[] {
  const byHome = env.HOME ? path.resolve(env.HOME) : os.homedir();
  const byPasswd = passwdHome();
  return [
    ...new Set([
      tacitHome(env),
      tacitHome({ ...env, TACIT_HOME: undefined }),
      path.join(byHome, ".config", "tacit"),
      ...(byPasswd === null ? [] : [path.join(byPasswd, ".config", "tacit")]),
    ]),
  ];
}

/** Tacit's home cannot be used: it is no directory, cannot be made, or is another user's. The message says what to set instead. */
export class TacitHomeError extends Error {
  override name = "TacitHomeError";
}

/** How the person set tacit's home, for an error: the variable to change. */
function homeSource(env: NodeJS.ProcessEnv): string {
  return env.TACIT_HOME ? "TACIT_HOME" : env.XDG_CONFIG_HOME ? "XDG_CONFIG_HOME/tacit" : "~/.config/tacit";
}

/** Creates the directory (0700) if needed and returns it; refuses one others can write to. */
export function ensureTacitHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = tacitHome(env);
  const fix = "set TACIT_HOME to a directory of your own (tacit makes it, owner-only, if it does not exist)";
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
  } catch (error) {
    // Node's own words were "EEXIST: file already exists, mkdir '…'", and `tacit approvals grant` died with an internal error.
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "EEXIST" || code === "ENOTDIR" ? "it, or a directory above it, is a file, not a directory" : (error as Error).message;
    throw new TacitHomeError(`tacit's home ${home} (${homeSource(env)}) cannot be made: ${why}; ${fix}`);
  }
  const stat = statSync(home);
  if (!stat.isDirectory()) throw new TacitHomeError(`tacit's home ${home} (${homeSource(env)}) is not a directory; ${fix}`);
  if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
    throw new TacitHomeError(`tacit's home ${home} (${homeSource(env)}) belongs to another user (uid ${stat.uid}); ${fix}`);
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(home, 0o700);
  return home;
}
