// The .env of a directory Oh My Zsh's dotenv plugin always loads. The plugin loads a directory's
// .env at every cd into it (a chpwd hook); it asks first, but the answer "always" writes the
// directory (its path, `${PWD:A}`) into its allowed list, and from then on it loads whatever that
// .env holds without asking: the list holds no hash of the content. Releases before 2025 source
// the file as zsh code (`set -a; source .env`); later ones parse KEY=value lines and export them,
// apart from a list of forbidden names (LD_PRELOAD, NODE_OPTIONS, PATH, …), which still leaves
// variables that make the user's next commands run a program of the script's (LESSOPEN at the
// next `less`, GIT_ASKPASS, PYTHONSTARTUP, BROWSER, …). So a script may not change (nor create)
// the .env (or $ZSH_DOTENV_FILE) of a directory on that list; reading it is not refused, nor the
// .env of any other directory (the plugin asks there). The list is looked for where the plugin
// keeps it ($ZSH_DOTENV_ALLOWED_LIST, else $ZSH_CACHE_DIR/dotenv-allowed.list, else
// ~/.oh-my-zsh/cache/dotenv-allowed.list) and in ~/.cache/oh-my-zsh/, as far as tacit's
// environment tells (these are often shell variables set in ~/.zshrc and not exported). Read once
// per operation (each place looked at; the list read again only when its version changed). Not covered:
// ZSH_DOTENV_PROMPT=false (every .env is loaded, without asking: keep .env out of the script's
// roots), a list or file name set only inside ~/.zshrc.

import os from "node:os";
import path from "node:path";
import { ParsedFiles } from "../bounded-file.js";
import { resolveRealOrSelf } from "./containment.js";
import { OperationMemo } from "./operation-memo.js";
import type { ProtectedPath } from "./protected-paths.js";

/** A list of directories; a larger one is judged by its first 1 MiB. */
const LIST_LIMIT_BYTES = 1024 * 1024;

/** Where the plugin's allowed list may be. */
function allowedLists(env: NodeJS.ProcessEnv): string[] {
  const home = os.homedir();
  const zsh = env.ZSH || path.join(home, ".oh-my-zsh");
  return [
    ...(env.ZSH_DOTENV_ALLOWED_LIST ? [env.ZSH_DOTENV_ALLOWED_LIST] : []),
    ...(env.ZSH_CACHE_DIR ? [path.join(env.ZSH_CACHE_DIR, "dotenv-allowed.list")] : []),
    path.join(zsh, "cache", "dotenv-allowed.list"),
    path.join(env.XDG_CACHE_HOME || path.join(home, ".cache"), "oh-my-zsh", "dotenv-allowed.list"),
  ];
}

/** The directories each list holds (and where each really is), read again only when the list changes. */
const directoriesIn = new ParsedFiles<readonly string[]>(LIST_LIMIT_BYTES, (text) =>
  text
    .split("\n")
    .filter((line) => path.isAbsolute(line))
    .flatMap((line) => {
      const real = resolveRealOrSelf(line);
      return real === line ? [line] : [line, real];
    }),
);

/** The protected .env files, by path, and the list that names each, read once per operation. */
const allowedMemo = new OperationMemo<ReadonlyMap<string, string>>();

function allowedEnvFiles(env: NodeJS.ProcessEnv = process.env): ReadonlyMap<string, string> {
  return allowedMemo.get("", () => {
    const name = env.ZSH_DOTENV_FILE || ".env";
    const files = new Map<string, string>();
    for (const list of new Set(allowedLists(env))) for (const dir of directoriesIn.get(list) ?? []) files.set(path.resolve(dir, name), list);
    return files;
  });
}

/** The .env `changed` (a path a script would change) is, in a directory the plugin always loads, or null. */
export function zshDotenvChangeOf(changed: string): ProtectedPath | null {
  const list = allowedEnvFiles().get(changed);
  if (list === undefined) return null;
  return {
    path: changed,
    what: `the file Oh My Zsh's dotenv plugin loads in ${path.dirname(changed)}, a directory on its allowed list (${list})`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor create it): the plugin remembers the directory, not the file's content, so it loads " +
      "the file at the user's next cd there without asking, running it as zsh code (releases before 2025) or exporting its variables " +
      "into the user's shell, outside the sandbox. Ask the user to change it",
  };
}
