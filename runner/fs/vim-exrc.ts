// Vim's 'exrc' option. Where the user's Vim configuration sets it, Vim runs the .vimrc (or
// _vimrc, .exrc, _exrc; .gvimrc for gvim) of whatever directory it is started in, with the user's
// authority and without asking: its 'secure' option, which would forbid shell commands there,
// applies only to files the user does not own, and tacit writes files as the user. Shown with
// Vim 9.0 (Debian), a ~/.vimrc holding `set exrc`: a project's .vimrc holding
// `call system("touch PWNED")`, and an .exrc holding `!touch PWNED`, ran when Vim was started in
// the project; without `set exrc` neither did. So where the Vim configuration sets 'exrc' (the
// user's vimrc, the system's, $VIMINIT or $EXINIT), a script may not change nor create such a
// file in any directory. A check of the name first: only a change to one of those names reads
// the configuration (each file again only when it changed). Not covered: 'exrc' set by a file
// the vimrc sources or a plugin; Neovim, whose 'exrc' asks first (its trust database, since 0.9).

import os from "node:os";
import path from "node:path";
import { ParsedFiles } from "../bounded-file.js";
import type { ProtectedPath } from "./protected-paths.js";

/** The files Vim reads from its start directory when 'exrc' is set. In lower case: on a case-insensitive file system `.VIMRC` is Vim's .vimrc. */
const LOCAL_NAMES: ReadonlySet<string> = new Set([".vimrc", "_vimrc", ".exrc", "_exrc", ".gvimrc", "_gvimrc"]);

/** A vimrc is a few hundred lines; a larger one is judged by its first 1 MiB. */
const VIMRC_LIMIT_BYTES = 1024 * 1024;

/**
 * Whether Vim script `text` turns 'exrc' (or its short name 'ex') on: `set exrc`, `se ex`,
 * `setglobal exrc`, `set exrc=` forms aside, or `let &exrc = 1`; at a line's start or after `|`.
 */
export function setsExrc(text: string): boolean {
  const setCommand = /(?:^|\|)[\s:]*(?:se|set|setg|setglobal)!?\s+(?:[^"|\n]*\s)?(?:exrc|ex)(?=\s|$|\||")/m;
  const letCommand = /(?:^|\|)[\s:]*let\s+&(?:g:)?(?:exrc|ex)\s*=\s*(?:[1-9]|v:true|true)/m;
  return setCommand.test(text) || letCommand.test(text);
}

const vimrcs = new ParsedFiles<boolean>(VIMRC_LIMIT_BYTES, setsExrc);

/** The places Vim (and vi, through Vim) reads its startup commands from. */
function configurations(env: NodeJS.ProcessEnv): string[] {
  const home = os.homedir();
  return [
    path.join(home, ".vimrc"),
    path.join(home, ".vim", "vimrc"),
    path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), "vim", "vimrc"),
    path.join(home, ".exrc"),
    "/etc/vim/vimrc",
    "/etc/vim/vimrc.local",
    "/etc/vimrc",
  ];
}

/** Where Vim's configuration sets 'exrc', or null. */
function exrcSetBy(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const variable of ["VIMINIT", "EXINIT"] as const) {
    const value = env[variable];
    if (value !== undefined && setsExrc(value)) return `$${variable}`;
  }
  return configurations(env).find((file) => vimrcs.get(file) === true) ?? null;
}

/** The .vimrc, .exrc or kin `changed` (a path a script would change) is, where Vim's configuration sets 'exrc'; or null. */
export function vimExrcChangeOf(changed: string): ProtectedPath | null {
  if (!LOCAL_NAMES.has(path.basename(changed).toLowerCase())) return null;
  const setBy = exrcSetBy();
  if (setBy === null) return null;
  return {
    path: changed,
    what: `a file Vim runs when started in ${path.dirname(changed)}: the Vim configuration (${setBy}) sets 'exrc'`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor create it): Vim runs its commands, shell commands included, with the user's full " +
      "authority, outside the sandbox, the next time the user starts Vim in that directory, without asking ('secure' does not apply " +
      "to files the user owns). Ask the user to change it",
  };
}
