// GDB's auto-loaded files. GDB runs the .gdbinit of the directory it is started in, and the
// script beside a program it debugs (`app-gdb.gdb`, `app-gdb.py`, `app-gdb.scm`), when the
// directory lies on its auto-load safe path. By default that path holds none of the user's
// directories, and GDB refuses such a file with a warning that tells the user how to allow it:
// `add-auto-load-safe-path <dir>`, or `set auto-load safe-path /` to allow every directory, lines
// many users put in their ~/.gdbinit. Shown with GDB 13.1 (Debian), a ~/.gdbinit holding
// `set auto-load safe-path /`: a project's .gdbinit holding `shell touch PWNED` ran at the user's
// next `gdb` started in the project, with the user's authority, outside the sandbox; without that
// line it did not. So where the GDB configuration (the user's ~/.gdbinit, ~/.gdbearlyinit, their XDG
// places, the system's /etc/gdb/gdbinit) puts a directory on the safe path, a script may not change
// nor create such a file in it (a glob there, or a path given through a variable other than `~`,
// counts as every directory). A check of the name first: only a change to one of those names reads
// the configuration (each file again only when it changed). Not covered: the safe path set by a file
// the configuration sources, by /etc/gdb/gdbinit.d, or on GDB's command line (`-iex`).

import os from "node:os";
import path from "node:path";
import { ParsedFiles } from "../bounded-file.js";
import { isWithin } from "./containment.js";
import type { ProtectedPath } from "./protected-paths.js";

/** A gdbinit is a few lines; a larger one is judged by its first 1 MiB. */
const GDBINIT_LIMIT_BYTES = 1024 * 1024;

/** The directories a safe path covers: every one (glob or variable), or these. */
type SafePath = "every" | readonly string[];

/**
 * The directories GDB's commands in `text` put on its auto-load safe path (`set auto-load
 * safe-path a:b`, `add-auto-load-safe-path a`, abbreviated as GDB allows, anywhere in a line:
 * finding more only refuses more), `~` expanded; "every" for a glob or another variable.
 * `$debugdir` and `$datadir` (and what lies below them), GDB's own places, hold no project.
 */
export function safePathOf(text: string, home: string): SafePath {
  const dirs: string[] = [];
  for (const match of text.matchAll(/(?:\bset\s+auto-l[\w-]*\s+sa[\w-]*|\badd-auto-load-sa[\w-]*)[ \t]+([^\n]*)/g)) {
    for (const raw of match[1]!.trim().replace(/^["']|["']$/g, "").split(":")) {
      const entry = raw.trim();
      if (entry === "" || /^\$(?:debugdir|datadir)(?:\/|$)/.test(entry)) continue;
      if (/[*?[$]/.test(entry)) return "every";
      dirs.push(entry === "~" || entry.startsWith("~/") ? path.join(home, entry.slice(1)) : path.resolve(entry));
    }
  }
  return dirs;
}

/** The files GDB reads its own commands from (its configuration), for the user `home`. */
function configurations(home: string, env: NodeJS.ProcessEnv): string[] {
  const xdg = env.XDG_CONFIG_HOME || path.join(home, ".config");
  return [
    path.join(home, ".gdbinit"),
    path.join(xdg, "gdb", "gdbinit"),
    path.join(home, ".gdbearlyinit"),
    path.join(xdg, "gdb", "gdbearlyinit"),
    "/etc/gdb/gdbinit",
    "/etc/gdbinit",
  ];
}

const safePaths = new ParsedFiles<SafePath>(GDBINIT_LIMIT_BYTES, (text) => safePathOf(text, os.homedir()));

/** Whether `name` (in lower case) is a file GDB auto-loads: .gdbinit, or a program's script. */
function isAutoLoaded(name: string): boolean {
  return name === ".gdbinit" || /-gdb\.(?:gdb|py|scm)$/.test(name);
}

/** The file GDB would auto-load that `changed` (a path a script would change) is, where GDB's configuration puts its directory on the safe path; or null. */
export function gdbInitChangeOf(changed: string, env: NodeJS.ProcessEnv = process.env): ProtectedPath | null {
  // In lower case: on a case-insensitive file system `.GDBINIT` is .gdbinit.
  if (!isAutoLoaded(path.basename(changed).toLowerCase())) return null;
  for (const file of configurations(os.homedir(), env)) {
    const safe = safePaths.get(file);
    if (safe === null) continue;
    if (safe !== "every" && !safe.some((dir) => isWithin(changed, dir))) continue;
    return {
      path: changed,
      what: `a file GDB runs when started in, or debugging a program in, ${path.dirname(changed)}: the GDB configuration (${file}) puts that directory on its auto-load safe path`,
      readable: true,
      refusal:
        "scripts may read it but not change it (nor create it): GDB runs its commands, shell commands included, the next time the user starts " +
        "GDB there (or debugs that program), with the user's full authority, outside the sandbox, without asking. Ask the user to change it",
    };
  }
  return null;
}
