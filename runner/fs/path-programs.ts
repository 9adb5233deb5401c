// The programs on the user's PATH: tacit's environment carries the PATH of the shell or client
// that started it, and the directories on it that lie inside the allowed roots (~/bin, which
// Debian's and Ubuntu's ~/.profile put on PATH, ~/go/bin, a project's bin/ a user added) hold
// programs the user runs by name, with their full authority and outside the sandbox. A write
// keeps a file's mode, so a script could rewrite an existing executable there: shown through the
// real CLI, with tacit started in a home directory whose bin/ is on PATH, a script rewrote
// bin/deploy to `touch PWNED`, and the user's next `deploy` made PWNED. So an existing executable
// file directly in a PATH directory (absolute entries only, as named and where it leads) may be
// read but not changed or deleted. A file a script creates is never executable, so new files
// there, and files that are not executable, stay writable (as for the directories an .envrc
// puts on PATH, direnv.ts). Not covered: a PATH set only in the user's shell startup files and not
// in tacit's environment, and what those programs run in turn.

import { statSync } from "node:fs";
import path from "node:path";
import { resolveRealOrSelf } from "./containment.js";
import type { ProtectedPath } from "./protected-paths.js";

let known: { value: string; dirs: ReadonlySet<string> } | undefined;

/** PATH's absolute directories, as named and where each leads, worked out again only when PATH changes. */
function pathDirectories(): ReadonlySet<string> {
  const value = process.env.PATH ?? "";
  if (known?.value !== value) {
    const dirs = new Set<string>();
    for (const entry of value.split(path.delimiter)) {
      if (!path.isAbsolute(entry)) continue;
      dirs.add(path.resolve(entry));
      dirs.add(resolveRealOrSelf(entry));
    }
    known = { value, dirs };
  }
  return known.dirs;
}

/** The program `changed` (a path a script would change) is, if it is an existing executable file directly in a directory on PATH; or null. */
export function pathProgramChangeOf(changed: string): ProtectedPath | null {
  const dir = path.dirname(changed);
  if (!pathDirectories().has(dir)) return null;
  const stats = statSync(changed, { throwIfNoEntry: false });
  if (!stats?.isFile() || (stats.mode & 0o111) === 0) return null;
  return {
    path: changed,
    what: `an executable program in ${dir}, a directory on the user's PATH`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor delete it): the user runs it, outside the sandbox and with their full authority, " +
      "whenever they type its name (and so do their scripts). Files there that are not executable stay writable, and a file a script " +
      "creates is never executable. Ask the user to change it",
  };
}
