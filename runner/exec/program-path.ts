// Where a command name leads on the host's PATH. Shared by the executor (which runs that
// program) and the --strict check (which also judges the program the name really is).

import { accessSync, constants, realpathSync, statSync } from "node:fs";
import path from "node:path";

/** Whether `file` exists and this process may execute it. */
export function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The longest file name Linux (and macOS) file systems take, in bytes. */
export const NAME_MAX_BYTES = 255;

/** The program a command name denotes on the host's PATH, or null. */
export function findOnPath(command: string, searchPath: string = process.env.PATH ?? ""): string | null {
  // No file has a longer name (NAME_MAX): looked for, each PATH entry threw ENAMETOOLONG.
  if (Buffer.byteLength(command) > NAME_MAX_BYTES) return null;
  for (const dir of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue; // A relative PATH entry would depend on the cwd.
    const candidate = path.join(dir, command);
    try {
      // A name that is not there is told without an exception: one per PATH entry and name made
      // requestExecPermission of 1,000 names, under --strict, hold tacit's main thread ~0.9 s.
      if (statSync(candidate, { throwIfNoEntry: false })?.isFile() !== true) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** The file a command name runs once symlinks are followed (`vi` → `/usr/bin/vim.basic`), or null when not on PATH. */
export function realProgramOf(command: string, searchPath?: string): string | null {
  const program = findOnPath(command, searchPath);
  if (program === null) return null;
  try {
    return realpathSync.native(program);
  } catch {
    return null;
  }
}

/**
 * What a word that names a program by a path (`./build`, `bin/tool`, `/tmp/x`) would run, for a
 * command that runs the program its words name (`env ./build`, `find -exec bin/tool`): looked
 * for as it is when absolute, else from each of `bases` (the command's working directory and the
 * directories its words name, where `git -C dir` or `env --chdir dir` would look). `{ name }`:
 * the program on PATH it is, links followed (a link `./x` to /usr/bin/touch is "touch");
 * "unknown": an executable file that is no program on PATH by its own name (a copy under another
 * name, a project's script a script rewrote: it may run anything), or several different ones;
 * null: no executable file.
 */
export function programAtPath(word: string, bases: readonly string[]): { name: string } | "unknown" | null {
  const candidates = path.isAbsolute(word) ? [word] : bases.map((base) => path.resolve(base, word));
  const reals = new Set<string>();
  for (const candidate of candidates) {
    try {
      const stat = statSync(candidate);
      if (!stat.isFile() || (stat.mode & 0o111) === 0) continue;
      reals.add(realpathSync.native(candidate));
    } catch {
      // Nothing there (or gone meanwhile): nothing to run from this base.
    }
  }
  if (reals.size === 0) return null;
  if (reals.size > 1) return "unknown";
  const [real] = reals as Set<string>;
  const name = path.basename(real!);
  return realProgramOf(name) === real ? { name } : "unknown";
}

/** Whether `candidate` is a directory (links followed). */
export function isDirectory(candidate: string): boolean {
  try {
    return statSync(candidate).isDirectory();
  } catch {
    return false;
  }
}
