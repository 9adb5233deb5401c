// Where a command name leads on the host's PATH. Shared by the executor (which runs that
// program) and the --strict check (which also judges the program the name really is).

import { accessSync, constants, realpathSync, statSync } from "node:fs";
import path from "node:path";

/** The program a command name denotes on the host's PATH, or null. */
export function findOnPath(command: string, searchPath: string = process.env.PATH ?? ""): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue; // A relative PATH entry would depend on the cwd.
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** The file a command name runs once symlinks are followed (`vi` → `/usr/bin/vim.basic`), or null when not on PATH. */
export function realProgramOf(command: string): string | null {
  const program = findOnPath(command);
  if (program === null) return null;
  try {
    return realpathSync.native(program);
  } catch {
    return null;
  }
}
