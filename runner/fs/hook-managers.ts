// Git hook managers whose runner is installed in a repository's hooks directory: the hook git
// runs at the user's next `git commit` or `git push` is the manager's runner, and what that
// runner runs is decided by a configuration file in the worktree, which git-repository.ts does
// not otherwise protect. Each was shown with the real tool, a script with nothing but
// requestFileSystem(".") writing the file and the user's next commit running its command:
// - lefthook (npm `lefthook`, 2.x): `lefthook.yml` and its variants, `lefthook-local.yml`
//   (meant to be git-ignored, so no diff shows it), and the scripts under `.lefthook/` and
//   `.lefthook-local/` a configuration names; the runner also installs hooks the configuration
//   newly names, on its own, at its next run;
// - pre-commit (Debian's 3.0.4): the configuration its hook names (`--config=`, by default
//   `.pre-commit-config.yaml`), whose `repo: local` hooks run their `entry:` command;
// - husky 4 (npm `husky@4`): `.huskyrc`, `.huskyrc.json`/`.yaml`/`.yml`, and the JavaScript
//   ones (`.huskyrc.js`, `husky.config.js`, …), which its runner reads at every hook.
// Protected only while the runner is installed (recognized by the hook's content): without it
// these files run nothing until the user runs the manager (`lefthook install`, `pre-commit
// install`, `npm install`), which is running the project's own code. Not covered, and why:
// simple-git-hooks copies the command into the hook at install time and reads its
// configuration only then; overcommit refuses to run a configuration whose signature changed
// until the user runs `overcommit --sign`; husky 5 and later keep their hooks in the directory
// core.hooksPath names, already protected.
// And what those configurations name, read from them: the scripts pre-commit's hooks run by
// their path (`entry: ./scripts/check.sh`, `entry: python tools/lint.py`, `args: [x.py]`), the
// files lefthook's `extends:` merges in and those files' own, the directories its
// `source_dir:`/`source_dir_local:` name, the scripts its `run:` commands name by their path;
// and husky 4's `"husky"` key in the package.json of the directory its runner was installed
// from (a write that changes that key is refused; package.json otherwise stays writable:
// file-system.ts asks husky4ManifestOf). Shown with the real pre-commit: a script that rewrote
// the ./scripts/check.sh a `repo: local` hook's entry names ran its code at the next commit.
// Not covered: a path given through a variable, what those scripts run in turn. lefthook's
// copies of its `remotes:` (in the repository's info/lefthook-remotes) are git-repository.ts's.
// Which runners are installed and what their configurations name is remembered for one
// operation (operation-memo.ts), not longer: a script cannot change a hooks directory
// (git-repository.ts), but the user can install or remove a runner between two changes, and the
// answer must follow.

import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readBoundedText } from "../bounded-file.js";
import { shellWords } from "../shell-word.js";
import { existsAsDirectory, isWithin } from "./containment.js";
import type { ProtectedPath } from "./protected-paths.js";
import { OperationMemo } from "./operation-memo.js";

/** Installed runners are a few KiB; a larger hook is judged by its beginning, where every runner says what it is. */
const HOOK_LIMIT_BYTES = 64 * 1024;

/** Configuration files are a few KiB; a larger one is judged by its beginning. */
const CONFIG_LIMIT_BYTES = 256 * 1024;

interface HookManager {
  name: string;
  /** The worktree files and directories (absolute) the configuration the runner reads names as run, merged or sourced: read from it. */
  named?(hook: string, hookFile: string, worktree: string, env: NodeJS.ProcessEnv): Array<{ file: string; by: string }>;
  /** Whether a hook's text is this manager's runner. */
  runs(hook: string): boolean;
  /** The worktree files and directories (relative to its top, `/`-separated, lower case) the runner reads what to run from. */
  configuration(hook: string, env: NodeJS.ProcessEnv): string[];
  /** Whether a worktree path (relative, lower case) may be one of them whatever the hook says: the cheap test that is made first. */
  mayConfigure(relative: string): boolean;
}

const LEFTHOOK_CONFIG = /^(?:\.config\/)?\.?lefthook(?:-local)?\.(?:ya?ml|jsonc?|toml)$/;
const LEFTHOOK_NAMES = ["", ".", ".config/"].flatMap((dir) =>
  ["lefthook", "lefthook-local"].flatMap((name) => ["yml", "yaml", "json", "jsonc", "toml"].map((ext) => `${dir}${name}.${ext}`)),
);
/** Where lefthook's `scripts:` live (source_dir and source_dir_local, by default). */
const LEFTHOOK_SCRIPTS = [".lefthook", ".lefthook-local"];

const HUSKY4_NAMES = [".huskyrc", ".huskyrc.json", ".huskyrc.yaml", ".huskyrc.yml", ".huskyrc.js", ".huskyrc.cjs", "huskyrc.cjs", "husky.config.js", "husky.config.cjs"];

/** The configuration a pre-commit hook names (its template's `--config=…`), or pre-commit's default. */
function preCommitConfigOf(hook: string): string {
  const named = /--config(?:=|\s+)(?:"([^"]+)"|'([^']+)'|([^\s)"']+))/.exec(hook);
  return (named?.[1] ?? named?.[2] ?? named?.[3] ?? ".pre-commit-config.yaml").replace(/^\.\//, "");
}

const readConfig = (file: string): string | null => readBoundedText(file, CONFIG_LIMIT_BYTES);

/** The words of a command or list that name a file of the worktree by its path (with a `/` or an extension, or an existing file), resolved in `worktree`; never a directory's contents as a whole. */
export function pathWords(words: readonly string[], worktree: string): string[] {
  return words
    .map((word) => word.trim().replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1"))
    .filter((word) => word !== "" && !word.startsWith("-") && !word.includes("$") && !word.includes("://") && !word.includes("{"))
    .filter((word) => word.includes("/") || /\.[A-Za-z0-9]+$/.test(word) || existsSync(path.resolve(worktree, word)))
    .map((word) => path.resolve(worktree, word))
    .filter((file) => file !== worktree && !existsAsDirectory(file));
}

/**
 * A YAML/JSON/TOML value's list, once for each place the key appears (a list item's key too):
 * `[a, "b"]` inline, else the `- item` lines below the key (more indented, or at its indent).
 */
function listsAfter(text: string, key: string): string[][] {
  const lists: string[][] = [];
  const at = new RegExp(`^([ \\t]*)(?:-[ \\t]+)?["']?${key}["']?[ \\t]*[:=][ \\t]*(.*)$`, "gm");
  for (const match of text.matchAll(at)) {
    const items: string[] = [];
    const value = match[2]!.replace(/(?:^|\s)#.*$/, "").trim();
    if (value.startsWith("[")) for (const item of value.replace(/^\[|\][,\s]*$/g, "").split(",")) items.push(item);
    else if (value !== "") items.push(value.replace(/,$/, ""));
    else {
      const rest = text.slice(match.index! + match[0].length + 1).split("\n");
      for (const line of rest) {
        const item = /^[ \t]*-[ \t]+(.*)$/.exec(line);
        if (!item) break;
        items.push(item[1]!.replace(/(?:^|\s)#.*$/, ""));
      }
    }
    lists.push(items);
  }
  return lists;
}

const listAfter = (text: string, key: string): string[] => listsAfter(text, key).flat();

/**
 * The words of every `key: value` command line (a list item's too), as the manager reads them:
 * lefthook runs `run:` with sh, pre-commit splits `entry:` with Python's shlex and runs it
 * without a shell (`./scr"ipt".sh` is ./script.sh either way). Words whose value only the shell
 * knows (`$HOOK_DIR/x`) are left out.
 */
function commandWords(text: string, key: string, dialect: "sh" | "shlex"): string[][] {
  const line = new RegExp(`^[ \\t]*(?:-[ \\t]+)?["']?${key}["']?[ \\t]*[:=][ \\t]*(.+)$`, "gm");
  return [...text.matchAll(line)].map((match) => {
    const value = match[1]!.replace(/(?:^|\s)#.*$/, "").trim().replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
    return shellWords(value, { dialect, home: os.homedir() })
      .filter((word) => !word.expands)
      .map((word) => word.text);
  });
}

/** What lefthook's configuration files (and the files they extend) name: extended files, source directories, scripts `run:` names by path. */
function lefthookNamed(worktree: string, env: NodeJS.ProcessEnv): Array<{ file: string; by: string }> {
  const named: Array<{ file: string; by: string }> = [];
  const seen = new Set<string>();
  const queue = [...LEFTHOOK_NAMES, ...(env.LEFTHOOK_CONFIG ? [env.LEFTHOOK_CONFIG] : [])].map((file) => path.resolve(worktree, file));
  while (queue.length > 0 && seen.size < 32) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readConfig(file);
    if (text === null) continue;
    const by = path.relative(worktree, file);
    for (const extended of pathWords(listAfter(text, "extends"), worktree)) {
      named.push({ file: extended, by: `extends, in ${by}` });
      queue.push(extended);
    }
    for (const key of ["source_dir", "source_dir_local"]) {
      for (const dir of listAfter(text, key).map((value) => value.trim().replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1"))) {
        if (dir !== "" && !dir.includes("$")) named.push({ file: path.resolve(worktree, dir), by: `${key}, in ${by}` });
      }
    }
    for (const words of commandWords(text, "run", "sh")) {
      for (const script of pathWords(words, worktree)) named.push({ file: script, by: `run: ${words.join(" ")}, in ${by}` });
    }
  }
  return named.filter(({ file }) => file !== worktree);
}

/** What pre-commit's configuration names by path in its hooks' `entry:` and inline `args:` (run from the worktree's top). */
function preCommitNamed(hook: string, worktree: string): Array<{ file: string; by: string }> {
  const config = preCommitConfigOf(hook);
  const text = readConfig(path.resolve(worktree, config));
  if (text === null) return [];
  const named: Array<{ file: string; by: string }> = [];
  for (const words of commandWords(text, "entry", "shlex")) {
    for (const script of pathWords(words, worktree)) named.push({ file: script, by: `entry: ${words.join(" ")}, in ${config}` });
  }
  // Inline (`args: [--strict, conf/rules.sh]`) or block style (`- conf/rules.sh` lines below it).
  for (const items of listsAfter(text, "args")) {
    const shown = items.map((item) => item.trim()).join(", ");
    for (const script of pathWords(items, worktree)) named.push({ file: script, by: `args: [${shown}], in ${config}` });
  }
  return named;
}

/** The directory husky 4's runner was installed from (its husky.local.sh's `cd "…"`, relative to the worktree's top), or the top. */
function husky4ProjectOf(hookFile: string, worktree: string): string {
  const local = readConfig(path.join(path.dirname(hookFile), "husky.local.sh")) ?? "";
  const cd = /^cd\s+"([^"]*)"/m.exec(local);
  return cd ? path.resolve(worktree, cd[1]!) : worktree;
}

const MANAGERS: readonly HookManager[] = [
  {
    name: "lefthook",
    // Every lefthook runner calls `lefthook run <hook>`: directly (0.x), or through its function `call_lefthook run` (1.x, 2.x).
    runs: (hook) => /lefthook\s+run\b/.test(hook),
    configuration: (_hook, env) => [...LEFTHOOK_NAMES, ...LEFTHOOK_SCRIPTS, ...(env.LEFTHOOK_CONFIG ? [env.LEFTHOOK_CONFIG] : [])],
    mayConfigure: (relative) => LEFTHOOK_CONFIG.test(relative) || LEFTHOOK_SCRIPTS.some((dir) => relative === dir || relative.startsWith(`${dir}/`)),
    named: (_hook, _file, worktree, env) => lefthookNamed(worktree, env),
  },
  {
    name: "pre-commit",
    runs: (hook) => /File generated by pre-commit|-mpre_commit|\bhook-impl\b/.test(hook),
    configuration: (hook) => [preCommitConfigOf(hook)],
    // Its configuration may be given another name at install: any YAML file is looked at (read as YAML whatever its name, but such names are YAML in practice).
    mayConfigure: (relative) => /\.ya?ml$/.test(relative),
    named: (hook, _file, worktree) => preCommitNamed(hook, worktree),
  },
  {
    name: "husky 4",
    runs: (hook) => /^# husky$/m.test(hook) && /husky\.sh/.test(hook),
    configuration: () => HUSKY4_NAMES,
    mayConfigure: (relative) => HUSKY4_NAMES.includes(relative),
  },
];

/** A hook file's text (its first HOOK_LIMIT_BYTES: a longer one is judged by them), or null (none, not a regular file, unreadable). */
const readHook = (file: string): string | null => readBoundedText(file, HOOK_LIMIT_BYTES);

/** The hooks in `dir` git may run (not its `.sample` files), by name and text. */
function installedHooks(dir: string): Array<{ file: string; text: string }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const hooks: Array<{ file: string; text: string }> = [];
  for (const name of names) {
    if (name.endsWith(".sample")) continue;
    const text = readHook(path.join(dir, name));
    if (text !== null) hooks.push({ file: path.join(dir, name), text });
  }
  return hooks;
}

interface Runner {
  manager: HookManager;
  file: string;
  text: string;
}

/** The runners installed in each set of hooks directories, remembered for the operation (see operation-memo.ts). */
const runnersIn = new OperationMemo<readonly Runner[]>();

function installedRunners(hooksDirs: readonly string[]): readonly Runner[] {
  const dirs = [...new Set(hooksDirs)];
  return runnersIn.get(dirs.join("\0"), () =>
    dirs.flatMap((dir) => installedHooks(dir).flatMap((hook) => MANAGERS.filter((manager) => manager.runs(hook.text)).map((manager) => ({ manager, ...hook })))),
  );
}

/** What each runner's configuration names, remembered for the operation. */
const namedBy = new OperationMemo<ReadonlyArray<{ file: string; by: string }>>();

function refusal(manager: HookManager): string {
  return (
    `scripts may read it but not change it (nor create it): at the user's next git commit or push, ${manager.name}'s runner ` +
    "runs the commands this file names with the user's full authority, outside the sandbox. Ask the user to change it"
  );
}

/**
 * The hook manager configuration `changed` is (or lies in), in the worktree `worktree` whose
 * hooks git runs from `hooksDirs`, or a file that configuration names as run, merged or sourced,
 * as a protected path; or null. The hooks directories are read once an operation; where no
 * runner is installed, that is all a change costs.
 */
export function hookManagerChangeOf(changed: string, worktree: string, hooksDirs: readonly string[], env: NodeJS.ProcessEnv): ProtectedPath | null {
  if (!isWithin(changed, worktree) || changed === worktree) return null;
  const runners = installedRunners(hooksDirs);
  if (runners.length === 0) return null;
  // In lower case: on a case-insensitive file system (macOS, Windows) the runner's `lefthook.yml` is also a script's `LEFTHOOK.YML`.
  const relative = path.relative(worktree, changed).split(path.sep).join("/").toLowerCase();
  for (const hook of runners) {
    const { manager } = hook;
    if (manager.mayConfigure(relative) || (manager.name === "lefthook" && env.LEFTHOOK_CONFIG)) {
      const configuration = manager
        .configuration(hook.text, env)
        .map((file) => path.resolve(worktree, file))
        .find((file) => isWithin(changed.toLowerCase(), file.toLowerCase()));
      if (configuration !== undefined) {
        return {
          path: configuration,
          what: `the configuration of the git hook manager ${manager.name}, whose runner is installed as ${hook.file}`,
          readable: true,
          refusal: refusal(manager),
        };
      }
    }
    if (!manager.named) continue;
    const key = `${manager.name}\0${hook.file}\0${worktree}\0${env.LEFTHOOK_CONFIG ?? ""}`;
    const named = env === process.env ? namedBy.get(key, () => manager.named!(hook.text, hook.file, worktree, env)) : manager.named(hook.text, hook.file, worktree, env);
    const hit = named.find(({ file }) => isWithin(changed, file));
    if (hit) {
      return {
        path: hit.file,
        what: `a file the configuration of the git hook manager ${manager.name} names (${hit.by}), whose runner is installed as ${hook.file}`,
        readable: true,
        refusal:
          `scripts may read it but not change it (nor create it): at the user's next git commit or push, ${manager.name}'s runner ` +
          "runs it, or the commands it names, with the user's full authority, outside the sandbox. Ask the user to change it",
      };
    }
  }
  return null;
}

/**
 * The husky 4 runner (its hook file) that reads the `"husky"` key of the package.json `manifest`
 * is, or null: the package.json of the directory the runner was installed from, in the worktree
 * `worktree` whose hooks git runs from `hooksDirs`.
 */
export function husky4ManifestOf(manifest: string, worktree: string, hooksDirs: readonly string[]): string | null {
  if (path.basename(manifest) !== "package.json" || !isWithin(manifest, worktree)) return null;
  const runner = installedRunners(hooksDirs).find(({ manager, file }) => manager.name === "husky 4" && path.join(husky4ProjectOf(file, worktree), "package.json") === manifest);
  return runner?.file ?? null;
}

/** The `"husky"` value of a package.json's text, as JSON text to compare; undefined for none or a text JSON cannot parse (husky 4 runs nothing from it). */
export function husky4KeyOf(text: string | null): string | undefined {
  if (text === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    const value = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>).husky : undefined;
    return value === undefined ? undefined : JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * Every worktree file and directory (absolute) the runners installed in `hooksDirs` read what to
 * run from, or that their configuration names as run, merged or sourced: what hookManagerChangeOf
 * refuses a script to change, for --confine-commands (exec/confinement.ts), which keeps those that
 * exist read-only.
 */
export function hookManagerPlacesOf(worktree: string, hooksDirs: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const places: string[] = [];
  for (const hook of installedRunners(hooksDirs)) {
    places.push(...hook.manager.configuration(hook.text, env).map((file) => path.resolve(worktree, file)));
    places.push(...(hook.manager.named?.(hook.text, hook.file, worktree, env) ?? []).map(({ file }) => file));
  }
  return places.filter((place) => place !== worktree && isWithin(place, worktree));
}
