// Vim's 'exrc' option. Where the user's Vim configuration sets it, Vim runs the .vimrc (or
// _vimrc, .exrc, _exrc; .gvimrc for gvim) of whatever directory it is started in, with the user's
// authority and without asking: its 'secure' option, which would forbid shell commands there,
// applies only to files the user does not own, and tacit writes files as the user. Shown with
// Vim 9.0 (Debian), a ~/.vimrc holding `set exrc`: a project's .vimrc holding
// `call system("touch PWNED")`, and an .exrc holding `!touch PWNED`, ran when Vim was started in
// the project; without `set exrc` neither did. So where the Vim configuration sets 'exrc' (the
// user's vimrc, the system's, $VIMINIT or $EXINIT), a script may not change nor create such a
// file in any directory. The same for Neovim's .nvim.lua, .nvimrc and .exrc where its init.vim or
// init.lua sets 'exrc': Neovim 0.9 and later ask first (their trust database), but the Neovim of
// Debian 12 (0.7) and Ubuntu 22.04 (0.6) runs them as Vim does, and which one the user runs is not
// known here. A check of the name first: only a change to one of those names reads the
// configuration (each file again only when it changed). Not covered: 'exrc' set by a file the
// configuration sources or by a plugin.

import os from "node:os";
import path from "node:path";
import { ParsedFiles } from "../bounded-file.js";
import type { ProtectedPath } from "./protected-paths.js";

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

/** Whether Neovim's Lua `text` turns 'exrc' on (`vim.o.exrc = true`, `vim.opt.exrc = true`, …, or a `set exrc` it runs, comments included: finding more only refuses more). */
export function luaSetsExrc(text: string): boolean {
  return /\bvim\.(?:o|go|opt|opt_global)\.(?:exrc|ex)\s*=\s*true\b/.test(text) || /\bset(?:g|global)?!?\s+(?:[^"'\]\n|]*\s)?(?:exrc|ex)\b(?![-=?])/.test(text);
}

const configurationFiles = new ParsedFiles<boolean>(VIMRC_LIMIT_BYTES, (text, file) => (file.endsWith(".lua") ? luaSetsExrc(text) : setsExrc(text)));

interface Editor {
  name: string;
  /** When it runs such a file, for the refusal. */
  runs: string;
  /** The files it runs from its start directory with 'exrc' on, in lower case: on a case-insensitive file system `.VIMRC` is .vimrc. */
  localFiles: ReadonlySet<string>;
  /** Where it reads its own startup commands from. */
  configurations: (env: NodeJS.ProcessEnv) => string[];
}

const home = (): string => os.homedir();
const configHome = (env: NodeJS.ProcessEnv): string => env.XDG_CONFIG_HOME || path.join(home(), ".config");

const EDITORS: readonly Editor[] = [
  {
    name: "Vim",
    runs: "Vim runs its commands, shell commands included, the next time the user starts Vim in that directory, without asking ('secure' does not apply to files the user owns)",
    localFiles: new Set([".vimrc", "_vimrc", ".exrc", "_exrc", ".gvimrc", "_gvimrc"]),
    configurations: (env) => [
      path.join(home(), ".vimrc"),
      path.join(home(), ".vim", "vimrc"),
      path.join(configHome(env), "vim", "vimrc"),
      path.join(home(), ".exrc"),
      "/etc/vim/vimrc",
      "/etc/vim/vimrc.local",
      "/etc/vimrc",
    ],
  },
  {
    name: "Neovim",
    runs: "Neovim before 0.9 (Debian 12's, Ubuntu 22.04's) runs its commands, shell commands included, the next time the user starts it in that directory, without asking (later ones ask first)",
    localFiles: new Set([".nvim.lua", ".nvimrc", ".exrc"]),
    configurations: (env) => {
      const app = env.NVIM_APPNAME || "nvim";
      const systemDirs = (env.XDG_CONFIG_DIRS || "/etc/xdg").split(":").filter((dir) => dir !== "");
      return [
        path.join(configHome(env), app, "init.lua"),
        path.join(configHome(env), app, "init.vim"),
        ...systemDirs.map((dir) => path.join(dir, app, "sysinit.vim")),
        "/usr/share/nvim/sysinit.vim",
      ];
    },
  },
];

/** Where `editor`'s configuration sets 'exrc', or null. */
function exrcSetBy(editor: Editor, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const variable of editor.name === "Vim" ? (["VIMINIT", "EXINIT"] as const) : (["VIMINIT"] as const)) {
    const value = env[variable];
    if (value !== undefined && setsExrc(value)) return `$${variable}`;
  }
  return editor.configurations(env).find((file) => configurationFiles.get(file) === true) ?? null;
}

/** The .vimrc, .exrc or kin `changed` (a path a script would change) is, where Vim's or Neovim's configuration sets 'exrc'; or null. */
export function vimExrcChangeOf(changed: string): ProtectedPath | null {
  const name = path.basename(changed).toLowerCase();
  for (const editor of EDITORS) {
    if (!editor.localFiles.has(name)) continue;
    const setBy = exrcSetBy(editor);
    if (setBy === null) continue;
    return {
      path: changed,
      what: `a file ${editor.name} runs when started in ${path.dirname(changed)}: the ${editor.name} configuration (${setBy}) sets 'exrc'`,
      readable: true,
      refusal: `scripts may read it but not change it (nor create it): ${editor.runs}, with the user's full authority, outside the sandbox. Ask the user to change it`,
    };
  }
  return null;
}
