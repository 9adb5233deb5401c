// Files a direnv `.envrc` loads. direnv runs an `.envrc` only once the user allowed its exact
// content (`direnv allow`: a change blocks it until allowed again), so `.envrc` itself is safe
// to leave writable. But what an allowed `.envrc` loads is not checked: shown with direnv 2.32
// (Debian), an `.envrc` holding `source_env_if_exists .envrc.local` (a common way to keep
// personal settings out of the repository) ran the `touch PWNED` a script wrote into
// .envrc.local at the next `direnv export` (which direnv's shell hook runs at every prompt in the
// project), and one holding `dotenv_if_exists` exported the `PROMPT_COMMAND="touch PWNED"` a
// script wrote into .env into the user's shell, which ran it at the next prompt. So a script may
// not change (nor create) a file an `.envrc` above it names with source_env, source_env_if_exists,
// dotenv or dotenv_if_exists (`.env` by default), whether or not the `.envrc` is allowed yet (the
// user may allow it later: it reads innocently). Not covered: directories an `.envrc` puts on
// PATH (PATH_add, layout node's node_modules/.bin), whose programs shadow commands the user types
// there; the `.envrc` source_up loads from a directory above (outside the project, as a rule); a
// name given through a variable other than $PWD. See README.

import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readBoundedFile } from "../bounded-file.js";
import { isWithin } from "./containment.js";
import type { ProtectedPath } from "./protected-paths.js";
import { TurnMemo } from "./turn-memo.js";

/** An `.envrc` is a few lines; a larger one is judged by its first 64 KiB (what it names there is protected). */
const ENVRC_LIMIT_BYTES = 64 * 1024;

/** The first ENVRC_LIMIT_BYTES of a regular file, or null. */
function readEnvrc(file: string): string | null {
  const read = readBoundedFile(file, ENVRC_LIMIT_BYTES);
  return read === null || read.unchanged ? null : read.text;
}

/** One word of shell text as the shell would give it, where that can be known without running it: quotes removed, `$PWD` and `~` expanded; null for other expansions. */
function shellWord(word: string, dir: string): string | null {
  const unquoted = word.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
  const expanded = unquoted.replace(/^~(?=\/|$)/, os.homedir()).replace(/\$\{PWD\}|\$PWD\b/g, dir);
  return expanded.includes("$") || expanded.includes("`") ? null : expanded;
}

/** The files the `.envrc` in `dir` (text `text`) loads, and the command that does. */
function loadedBy(text: string, dir: string): Array<{ file: string; by: string }> {
  const files: Array<{ file: string; by: string }> = [];
  // Each command at the start of a line or after ; && || (a conditional `[ -f x ] && source_env x` included).
  const command = /(?:^|[;&|]\s*|\bthen\s+|\bdo\s+)(source_env_if_exists|source_env|dotenv_if_exists|dotenv)\b[ \t]*([^\n;&|]*)/gm;
  for (const [line, name, rest] of text.matchAll(command)) {
    const by = line.replace(/^[;&|\s]+|^(?:then|do)\s+/, "").trim();
    // A comment ends the command: `dotenv # local settings` loads .env.
    const words = rest!.replace(/(?:^|\s)#.*$/, "").match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
    const named = words[0] === undefined ? (name!.startsWith("dotenv") ? ".env" : null) : shellWord(words[0], dir);
    if (named === null) continue;
    const file = path.resolve(dir, named);
    // source_env with a directory loads the .envrc in it.
    files.push({ file: name!.startsWith("source_env") && existsSync(path.join(file, ".envrc")) ? path.join(file, ".envrc") : file, by });
  }
  return files;
}

interface Loaded {
  file: string;
  by: string;
  envrc: string;
}

/** What the `.envrc` files in each directory and those above it load, nearest first, remembered for the operation (see turn-memo.ts). */
const loadedAt = new TurnMemo<readonly Loaded[]>();

/** What the `.envrc` in `dir` loads. */
function loadedIn(dir: string): Loaded[] {
  const envrc = path.join(dir, ".envrc");
  // readBoundedFile asks existsSync first: most directories hold none, and a failed open costs an exception.
  const text = readEnvrc(envrc);
  return text === null ? [] : loadedBy(text, dir).map((loaded) => ({ ...loaded, envrc }));
}

/** What the `.envrc` files in `dir` and every directory above it load, nearest first. */
function loadedAbove(dir: string): readonly Loaded[] {
  const walked: string[] = [];
  let above: readonly Loaded[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    const known = loadedAt.lookup(at);
    if (known) {
      above = known.value;
      break;
    }
    walked.push(at);
    if (path.dirname(at) === at) break;
  }
  // From the top down, each directory's own in front of what is above it.
  for (const at of walked.reverse()) {
    above = [...loadedIn(at), ...above];
    loadedAt.set(at, above);
  }
  return above;
}

/** The file `changed` is (or lies in) that an `.envrc` in a directory above it loads, as a protected path; or null. */
function loadedFileChange(changed: string): ProtectedPath | null {
  const hit = loadedAbove(path.dirname(changed)).find(({ file }) => isWithin(changed, file));
  if (!hit) return null;
  return {
    path: hit.file,
    what: `a file direnv loads for ${hit.envrc} (${hit.by})`,
    readable: true,
    refusal:
      "scripts may read it but not change it: direnv's shell hook loads it at the user's next prompt in that directory, " +
      "running its code or exporting its variables (PROMPT_COMMAND, PATH, …) into the user's shell, outside the sandbox, " +
      "without asking (only the .envrc itself needs `direnv allow`). Ask the user to change it",
  };
}

/** What of the above `named` or `real` (a path a script would change) is, or null. */
export function direnvChangeOf(named: string, real: string): ProtectedPath | null {
  return loadedFileChange(real) ?? (named === real ? null : loadedFileChange(named));
}
