// The other names a program has on PATH, so that an exec rule holds however a script names the
// program it is on. Matched on the name alone, an always-ask rule on `make` let a script run
// make as `gmake` (a link to it on Debian) with no question, and one on `gcc` ran gcc as
// `gcc-12` or `x86_64-linux-gnu-gcc-12`, each permitted beside the ruled name.
//
// A command is the program its name runs (found on the host's PATH as the executor finds it,
// symbolic links followed, and a hard link the same file: Debian's perl5.36.0 is perl): a rule's command glob stands for every program a name it matches on PATH
// runs, and a command whose name runs one of them is matched. A multi-call program (BusyBox)
// acts as the name it is run by, so it is judged by the name alone, as --strict judges it.

import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { realProgramOf } from "../exec/program-path.js";
import { MULTI_CALL_PROGRAMS } from "../exec/strict-denylist.js";

export class ProgramNames {
  private names: ReadonlySet<string> | undefined;
  /** What each name looked up runs (null: nothing on PATH, or a multi-call program); at most one look-up per name on PATH. */
  private readonly reals = new Map<string, string | null>();

  constructor(private readonly searchPath: string = process.env.PATH ?? "") {}

  /**
   * The program `name` runs, as the file's identity (device and inode: symbolic links followed,
   * and hard links one file), or null (not on PATH, or a multi-call program, which acts as its name).
   */
  programOf(name: string): string | null {
    // Only names on PATH are looked up: a command line's every word is asked about, and each
    // look-up is a stat per PATH entry on the host's main thread.
    if (!this.namesOnPath().has(name)) return null;
    if (this.reals.has(name)) return this.reals.get(name)!;
    const real = realProgramOf(name, this.searchPath);
    const program = real === null || MULTI_CALL_PROGRAMS.has(path.basename(real).toLowerCase()) ? null : fileIdentity(real);
    this.reals.set(name, program);
    return program;
  }

  /** The programs the names on PATH that `matches` (given a name in lower case) run. */
  programsNamed(matches: (lowerCaseName: string) => boolean): ReadonlySet<string> {
    const programs = new Set<string>();
    for (const name of this.namesOnPath()) {
      if (!matches(name.toLowerCase())) continue;
      const program = this.programOf(name);
      if (program !== null) programs.add(program);
    }
    return programs;
  }

  /** Every entry's name in PATH's absolute directories (read once). */
  private namesOnPath(): ReadonlySet<string> {
    if (this.names !== undefined) return this.names;
    const names = new Set<string>();
    for (const dir of this.searchPath.split(path.delimiter)) {
      if (!path.isAbsolute(dir)) continue; // As findOnPath: a relative entry is never searched.
      try {
        for (const name of readdirSync(dir)) names.add(name);
      } catch {
        // No such directory, or unreadable: nothing is found there either.
      }
    }
    return (this.names = names);
  }
}

/** A file's device and inode, or null when it is gone. */
function fileIdentity(file: string): string | null {
  try {
    const stats = statSync(file, { bigint: true });
    return `${stats.dev}:${stats.ino}`;
  } catch {
    return null;
  }
}
