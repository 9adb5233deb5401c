// The programs on the user's PATH: tacit's environment carries the PATH of the shell or client
// that started it, and the directories on it that lie inside the allowed roots (~/bin, which
// Debian's and Ubuntu's ~/.profile put on PATH, ~/go/bin, a project's bin/ a user added) hold
// programs the user runs by name, with their full authority and outside the sandbox. A write
// keeps a file's mode, so a script could rewrite an existing executable there: shown through the
// real CLI, with tacit started in a home directory whose bin/ is on PATH, a script rewrote
// bin/deploy to `touch PWNED`, and the user's next `deploy` made PWNED. So an existing executable
// file directly in a PATH directory (as named and where it leads; a relative entry and an empty
// one as the user's shell finds them from any directory they may stand in, a "~/" one in the home
// directory) may be read but not changed or deleted. A file a script creates is never executable, so new files
// there, and files that are not executable, stay writable (as for the directories an .envrc
// puts on PATH, direnv.ts). So is the file a link directly in a PATH directory leads to, wherever
// it lies: `npm link` makes /usr/local/bin/<tool> a link, through the global node_modules, to the
// project's own bin file, and a script rewrote that file in the roots (its mode kept), so that the
// permitted command <tool> and the user's next <tool> ran the script's code. So is the interpreter
// a program there names in its "#!" line (and the one that names in turn, and the program env runs
// for "#!/usr/bin/env -S /abs/interp"), which the kernel runs
// when the user types the program's name: a script rewrote tools/interp, named by bin/deploy's
// "#!", and the user's next `deploy` ran its code. Not covered: a PATH set only in the user's shell
// startup files and not in tacit's environment, and what those programs run or load in turn.

import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync, readSync, realpathSync, type Stats, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { resolveRealOrSelf } from "./containment.js";
import type { ProtectedPath } from "./protected-paths.js";

interface PathDirectories {
  /** PATH, the working directory and the home directory these were worked out for. */
  value: string;
  /** Absolute directories, as named and where each leads. */
  dirs: ReadonlySet<string>;
  /** Where each leads, once each (a directory named two ways holds the same links). */
  realDirs: ReadonlySet<string>;
  /** The entries as PATH writes them, for those that are not absolute: by the directory each names now, as named and where it leads. */
  writtenAs: ReadonlyMap<string, string>;
  /**
   * The relative entries (an empty one, ".", "./bin", "node_modules/.bin", "../bin"), each with the
   * end of the path of every directory it names from one the user may stand in: "" for any
   * directory (an empty entry, ".", "..": every directory is one of those of another), "bin" for
   * "./bin" and "../bin". The user's shell looks there from wherever they stand, not only where
   * tacit was started: in project/sub, `./bin` is project/sub/bin.
   */
  relative: ReadonlyArray<{ entry: string; tail: string }>;
}
let known: PathDirectories | undefined;

/**
 * The directory a PATH entry names for the user's shell standing where tacit was started, or null
 * for one no shell finds programs in (a relative entry names others too, from wherever the user
 * stands: see PathDirectories.relative). Not only absolute entries: an empty one (a stray ":") and
 * "." are the working directory, and a relative one (`./bin`, which Rails' and rbenv's binstubs
 * advice puts first; `node_modules/.bin`) lies in it; bash expands a leading "~" (`~/tools`) at each
 * lookup. Absolute entries alone were kept: a script rewrote ./bin/deploy, and the user's next
 * `deploy` there ran its code.
 */
function entryDirectory(entry: string, cwd: string, home: string): string | null {
  if (entry === "~" || entry.startsWith("~/")) return path.join(home, entry.slice(1));
  // "~user/…": another user's home, which the roots seldom hold; left out, as before.
  if (entry.startsWith("~")) return null;
  return path.resolve(cwd, entry);
}

/**
 * What a relative entry names the end of (see PathDirectories.relative): its steps after the last
 * "..". The kernel takes a ".." from where the steps before it lead, a link's target: "tools/lib/.."
 * is the directory holding where tools/lib leads, any directory, not "tools" as the text reads.
 */
function relativeTail(entry: string): string {
  const steps = entry.split(path.sep).filter((step) => step !== "" && step !== ".");
  return steps.slice(steps.lastIndexOf("..") + 1).join(path.sep);
}

/**
 * Where the user's shell finds the directory a PATH entry names (standing where tacit was started):
 * the kernel resolves the entry as written, a ".." from where a link before it leads ("proj/../bin",
 * with proj a link to deep/x, is deep/bin), where `dir`, worked out as text, dropped "proj/.." first.
 */
function kernelDirectory(entry: string, cwd: string, home: string, dir: string): string {
  const written = entry === "~" || entry.startsWith("~/") ? home + entry.slice(1) : path.isAbsolute(entry) ? entry : `${cwd}${path.sep}${entry}`;
  try {
    return realpathSync.native(written);
  } catch {
    // Nowhere yet: where the text leads, as before.
    return resolveRealOrSelf(dir);
  }
}

/** The relative PATH entry (as written) under which the user's shell, standing somewhere, finds programs in `dir`, if any. */
function relativeEntryFor(directories: PathDirectories, dir: string): string | undefined {
  return directories.relative.find(({ tail }) => tail === "" || dir.endsWith(path.sep + tail))?.entry;
}

/** PATH's directories, worked out again only when PATH, the working directory or the home directory changes. */
function pathDirectories(): PathDirectories {
  const cwd = process.cwd();
  const home = os.homedir();
  const value = `${process.env.PATH ?? ""}\0${cwd}\0${home}`;
  if (known?.value !== value) {
    const dirs = new Set<string>();
    const realDirs = new Set<string>();
    const writtenAs = new Map<string, string>();
    const relative: Array<{ entry: string; tail: string }> = [];
    for (const entry of (process.env.PATH ?? "").split(path.delimiter)) {
      if (!path.isAbsolute(entry) && !entry.startsWith("~")) relative.push({ entry, tail: relativeTail(entry) });
      const dir = entryDirectory(entry, cwd, home);
      if (dir === null) continue;
      dirs.add(dir);
      const reals = new Set([resolveRealOrSelf(dir), kernelDirectory(entry, cwd, home, dir)]);
      for (const real of reals) {
        dirs.add(real);
        realDirs.add(real);
      }
      if (!path.isAbsolute(entry)) {
        for (const named of [dir, ...reals]) if (!writtenAs.has(named)) writtenAs.set(named, entry);
      }
    }
    known = { value, dirs, realDirs, writtenAs, relative };
  }
  return known;
}

/**
 * Per PATH directory, as last listed: its identity and change time then, its links that led to an
 * executable file by that file's name, and its other links (leading nowhere yet, or to a file not
 * executable). What a link leads to changes with no change to the directory, so a check resolves
 * again the links that may lead to the file changed: those whose program had its name, and the
 * others. `npm link` points /usr/local/bin/<tool> into the project's dist/, which the user's build
 * makes again while tacit runs, and `npm link` in another project re-points the global
 * node_modules/<tool> and leaves the link on PATH as it is: listed once, the file built later, or
 * the other project's, was no program to tacit, and a script rewrote it.
 */
const linksListed = new Map<string, { stamp: string; byName: ReadonlyMap<string, readonly string[]>; unsettled: readonly string[] }>();

/** The real executable file `link` leads to, or null (it leads nowhere, or to something else). */
function programBehind(link: string): string | null {
  try {
    const real = realpathSync.native(link);
    const target = statSync(real);
    return target.isFile() && (target.mode & 0o111) !== 0 ? real : null;
  } catch {
    // A link that leads nowhere runs nothing.
    return null;
  }
}

/** The links directly in `dir` (see linksListed); listed again only when `dir` changed. */
function linkedPrograms(dir: string): { byName: ReadonlyMap<string, readonly string[]>; unsettled: readonly string[] } {
  const none = { byName: new Map<string, string[]>(), unsettled: [] };
  const stats = statSync(dir, { bigint: true, throwIfNoEntry: false });
  if (stats === undefined || !stats.isDirectory()) return none;
  // A link made, removed or renamed there changes the directory's times.
  const stamp = `${stats.dev}:${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}`;
  const kept = linksListed.get(dir);
  if (kept?.stamp === stamp) return kept;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return none;
  }
  const byName = new Map<string, string[]>();
  const unsettled: string[] = [];
  for (const entry of entries) {
    if (!entry.isSymbolicLink()) continue;
    const link = path.join(dir, entry.name);
    const real = programBehind(link);
    if (real === null) unsettled.push(link);
    else byName.set(path.basename(real), [...(byName.get(path.basename(real)) ?? []), link]);
  }
  const listed = { stamp, byName, unsettled };
  linksListed.set(dir, listed);
  return listed;
}

/** The link directly in a PATH directory that leads to `changed`, an executable file, or null. */
function pathLinkTo(changed: string): string | null {
  for (const dir of pathDirectories().realDirs) {
    const { byName, unsettled } = linkedPrograms(dir);
    const link = [...(byName.get(path.basename(changed)) ?? []), ...unsettled].find((other) => programBehind(other) === changed);
    if (link !== undefined) return link;
  }
  return null;
}

/** The most bytes of a program read for its "#!" line (Linux reads 256). */
const SHEBANG_BYTES = 256;
/** How many interpreters deep a "#!" line leads: Linux follows an interpreter that is a script itself, four levels at most. */
const INTERPRETER_LEVELS = 4;

/**
 * The interpreters the "#!" line of `file` names, as written (absolute), if `file` is an executable
 * file; else none. The first is the one the kernel runs; where that is env, the second is the
 * program env runs in turn ("#!/usr/bin/env -S <dir>/tools/interp": a script rewrote tools/interp,
 * and the user's next `deploy` ran its code). One open and read of each file (most are none: ELF programs).
 */
function shebangOf(file: string): string[] {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO there does not hold the check.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    const head = Buffer.alloc(SHEBANG_BYTES);
    const n = readSync(fd, head, 0, SHEBANG_BYTES, 0);
    if (n < 3 || head[0] !== 0x23 || head[1] !== 0x21) return [];
    const line = /^#![ \t]*([^ \t\n]+)([^\n]*)/.exec(head.subarray(0, n).toString("latin1"));
    if (line === null || !path.isAbsolute(line[1]!)) return [];
    const stats = fstatSync(fd);
    if (!stats.isFile() || (stats.mode & 0o111) === 0) return [];
    const envRuns = path.basename(line[1]!) === "env" ? envProgramOf(line[2]!) : null;
    return envRuns === null ? [line[1]!] : [line[1]!, envRuns];
  } catch {
    // A directory (EISDIR), or unreadable: no "#!" line the check can see.
    return [];
  } finally {
    closeSync(fd);
  }
}

/** env's options that take the next word as their value. */
const ENV_VALUE_OPTIONS = new Set(["--unset", "--chdir"]);

/**
 * The program env runs given `args` (the rest of a "#!" line after env), if named absolutely or from
 * an absolute -C directory; else null (a bare name env finds on PATH, whose programs are kept
 * already; a relative one it finds from wherever the user stands). Options and NAME=value words are
 * passed over, -S's string split.
 */
function envProgramOf(args: string): string | null {
  const words = args.split(/[ \t]+/).filter((word) => word !== "");
  // Where -C (--chdir) changes into first: a relative program is found from there ("-C <dir>/tools ./interp").
  let chdir: string | null = null;
  const valueOf = (option: string, rest: string, at: number): string | undefined => {
    const value = rest !== "" ? rest : words[at + 1];
    if ((option === "C" || option === "--chdir") && value !== undefined) chdir = value;
    return value;
  };
  for (let i = 0; i < words.length; i++) {
    let word = words[i]!;
    if (word.startsWith("--split-string=")) word = word.slice("--split-string=".length);
    else if (/^-[^-]/.test(word)) {
      // Short options in one word ("-iS/abs/interp"): -u and -C take the rest (or the next word)
      // as their value; -S starts its string with the rest.
      const cluster = /^-([^SuC]*)([SuC]?)(.*)$/.exec(word)!;
      if (cluster[2] === "") continue;
      if (cluster[2] !== "S") {
        valueOf(cluster[2]!, cluster[3]!, i);
        if (cluster[3] === "") i++;
        continue;
      }
      word = cluster[3]!;
    }
    if (word === "" || word === "--split-string") continue;
    if (ENV_VALUE_OPTIONS.has(word)) {
      valueOf(word, "", i);
      i++;
      continue;
    }
    if (word.startsWith("--chdir=")) chdir = word.slice("--chdir=".length);
    if (word.startsWith("-") || /^[^=/]+=/.test(word)) continue;
    if (path.isAbsolute(word)) return word;
    // A bare name env finds on PATH; one with a slash from the directory -C named, if absolute.
    const from: string | null = chdir;
    return word.includes("/") && from !== null && path.isAbsolute(from) ? path.resolve(from, word) : null;
  }
  return null;
}

/**
 * Per PATH directory, as last listed: the interpreters its programs' "#!" lines name, where each
 * leads, with the program that names it (see pathInterpreterOf). Listed again when the directory changed.
 */
const interpretersListed = new Map<string, { stamp: string; byInterpreter: ReadonlyMap<string, string> }>();

/** The interpreters the programs directly in `dir` name (see interpretersListed), and theirs in turn. */
function interpretersIn(dir: string): ReadonlyMap<string, string> {
  const stats = statSync(dir, { bigint: true, throwIfNoEntry: false });
  if (stats === undefined || !stats.isDirectory()) return new Map();
  const stamp = `${stats.dev}:${stats.ino}:${stats.mtimeNs}:${stats.ctimeNs}`;
  const kept = interpretersListed.get(dir);
  if (kept?.stamp === stamp) return kept.byInterpreter;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return new Map();
  }
  const byInterpreter = new Map<string, string>();
  // Most programs there name one of a few interpreters (/bin/sh, /usr/bin/perl): each resolved once.
  const resolved = new Map<string, string | null>();
  const resolve = (written: string): string | null => {
    if (!resolved.has(written)) resolved.set(written, programBehind(written));
    return resolved.get(written)!;
  };
  for (const entry of entries) {
    // Not a device or socket there: opening one may act.
    if (!entry.isFile() && !(entry.isSymbolicLink() && statSync(path.join(dir, entry.name), { throwIfNoEntry: false })?.isFile() === true)) continue;
    const program = path.join(dir, entry.name);
    // The interpreter's own "#!" line too: the kernel runs what that names in turn.
    let at: string | null = program;
    for (let level = 0; at !== null && level < INTERPRETER_LEVELS; level++) {
      const written = shebangOf(at);
      at = null;
      // The next level is the last one named: env's program, not env.
      for (const interpreter of written) {
        at = resolve(interpreter);
        if (at !== null && !byInterpreter.has(at)) byInterpreter.set(at, program);
      }
    }
  }
  interpretersListed.set(dir, { stamp, byInterpreter });
  return byInterpreter;
}

/** The program directly in a PATH directory whose "#!" line (or its interpreter's) names `changed`, an executable file, or null. */
function pathInterpreterOf(changed: string): string | null {
  for (const dir of pathDirectories().realDirs) {
    const program = interpretersIn(dir).get(changed);
    if (program !== undefined) return program;
  }
  return null;
}

/**
 * The program `changed` (a path a script would change) is, if it is an existing executable file
 * directly in a directory on PATH, or the file a link directly there leads to; or null.
 */
export function pathProgramChangeOf(changed: string): ProtectedPath | null {
  // Only an existing executable file runs as a program, and most files a script changes are none:
  // they need no look at PATH's links (a stat of each PATH directory, some 16 system calls a write).
  let stats: Stats | undefined;
  try {
    stats = statSync(changed, { throwIfNoEntry: false });
  } catch {
    // No file there to run (a path through a file, or a loop of links): the change fails on its own, with its own words.
    return null;
  }
  if (!stats?.isFile() || (stats.mode & 0o111) === 0) return null;
  const dir = path.dirname(changed);
  const directories = pathDirectories();
  const relativeEntry = directories.dirs.has(dir) ? directories.writtenAs.get(dir) : relativeEntryFor(directories, dir);
  if (!directories.dirs.has(dir) && relativeEntry === undefined) {
    const link = pathLinkTo(changed);
    if (link === null) {
      // The interpreter a program there names: the kernel runs it whenever the user types the program's name.
      const program = pathInterpreterOf(changed);
      if (program === null) return null;
      return {
        path: changed,
        what: `the interpreter the "#!" line of the program ${path.basename(program)} in ${path.dirname(program)}, a directory on the user's PATH, names`,
        readable: true,
        refusal:
          "scripts may read it but not change it (nor delete it): the system runs it, with the user's full authority and outside the " +
          "sandbox, whenever the user types that program's name (and so does a permitted command of that name). Ask the user to change it",
      };
    }
    return {
      path: changed,
      what: `the program ${path.basename(link)} in ${path.dirname(link)}, a directory on the user's PATH, whose link ${link} leads to it`,
      readable: true,
      refusal:
        "scripts may read it but not change it (nor delete it): the user runs it by that name, outside the sandbox and with their full " +
        "authority (and so does a permitted command of that name). Ask the user to change it",
    };
  }
  return {
    path: changed,
    what: `an executable program in ${dir}, a directory on the user's PATH${entryNote(relativeEntry)}`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor delete it): the user runs it, outside the sandbox and with their full authority, " +
      "whenever they type its name (and so do their scripts). Files there that are not executable stay writable, and a file a script " +
      "creates is never executable. Ask the user to change it",
  };
}

/** How PATH names a directory it does not name absolutely, for a refusal. */
function entryNote(entry: string | undefined): string {
  if (entry === undefined) return "";
  const written = entry === "" ? "an empty entry" : `the entry ${JSON.stringify(entry)}`;
  return ` (${written}, which the user's shell finds programs in from the directory they stand in)`;
}
