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
// user may allow it later: it reads innocently). Nor an executable program in a directory an
// `.envrc` puts first on PATH (PATH_add, path_add PATH, load_prefix, layout node's
// node_modules/.bin, layout python's .direnv/python-VERSION/bin and the other layouts'
// directories, PATH=…:$PATH), or one a link there leads to: shown with direnv 2.32, an allowed
// `PATH_add bin` and a script that rewrote the existing executable bin/deploy (a write keeps the
// file's mode) ran the script's code when the user typed `deploy` in the project; and an allowed
// `layout python3` and a script that rewrote its virtual environment's bin/pip, at the user's next
// `pip`. A file tacit creates is never executable (0666 less the umask), so the script's bin/ls
// is not run, and such files stay writable. And the Nix files `use nix`, `use flake` and `use devenv`
// evaluate (their shellHook runs; direnv reloads when they change). The same for what the
// .envrc files direnv has records of load (direnv-trust.ts), wherever those lie: so, from below,
// an allowed .envrc's source_up (the nearest .envrc above it) and `source_env ../..`. Not
// covered: what such a program runs in turn (a bin/deploy that runs scripts/deploy.js,
// node_modules' own code); a name given through a variable other than $PWD; other variables
// path_add sets (PYTHONPATH, …). See README.

import { readdirSync, realpathSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readBoundedText } from "../bounded-file.js";
import { type ShellWord, shellWords } from "../shell-word.js";
import { isWithin } from "./containment.js";
import { recordedEnvrcs } from "./direnv-trust.js";
import type { ProtectedPath } from "./protected-paths.js";
import { OperationMemo } from "./operation-memo.js";

/** An `.envrc` is a few lines; a larger one is judged by its first 64 KiB (what it names there is protected). */
const ENVRC_LIMIT_BYTES = 64 * 1024;

/** The first ENVRC_LIMIT_BYTES of a regular file, or null. */
const readEnvrc = (file: string): string | null => readBoundedText(file, ENVRC_LIMIT_BYTES);

/**
 * Each use of one of `names` (an alternation, as a pattern) in the text of the `.envrc` in `dir`:
 * at the start of a line, indented or not, or after ; && || { ( ! then do else (a conditional
 * `[ -f x ] && source_env x` included),
 * with the command as written and its words as the shell gives them (quotes and escapes taken
 * off, `$PWD` and `~` expanded; a comment ends it: `dotenv # local settings` loads .env).
 */
function* commandsIn(text: string, names: string, dir: string): Generator<{ name: string; by: string; words: ShellWord[] }> {
  // Indented (inside if, case or a function), or after ; && || | { ( ! then do else.
  const command = new RegExp(String.raw`(?:^|[;&|({!]|\b(?:then|do|else)\b)\s*(${names})[ \t]*([^\n;&|]*)`, "gm");
  for (const [, name = "", rest = ""] of text.matchAll(command)) {
    const by = (name.endsWith("=") ? `${name}${rest}` : `${name} ${rest}`).trim();
    yield { name, by, words: shellWords(rest, { known: { PWD: dir }, home: os.homedir() }) };
  }
}

/** A word's text, or null when only the shell knows it (an expansion other than `$PWD`). */
const known = (word: ShellWord | undefined): string | null => (word === undefined || word.expands ? null : word.text);

/** The files the `.envrc` in `dir` (text `text`) loads, and the command that does. */
function loadedBy(text: string, dir: string): Array<{ file: string; by: string; orItsEnvrc?: true }> {
  const files: Array<{ file: string; by: string; orItsEnvrc?: true }> = [];
  for (const { name, by, words } of commandsIn(text, String.raw`(?:source_env_if_exists|source_env|dotenv_if_exists|dotenv)\b`, dir)) {
    const named = words[0] === undefined ? (name.startsWith("dotenv") ? ".env" : null) : known(words[0]);
    if (named === null) continue;
    files.push({ file: path.resolve(dir, named), by, ...(name.startsWith("source_env") ? { orItsEnvrc: true as const } : {}) });
  }
  return [...files, ...nixFilesBy(text, dir)];
}

/**
 * The Nix files the `.envrc` in `dir` (text `text`) has evaluated, and the command: `use nix`
 * (nix-shell: the .nix files given, and shell.nix and default.nix), `use flake` (flake.nix and
 * flake.lock of the local flake given before `#`, or of `dir`), `use devenv` (its devenv.nix,
 * .yaml, .lock and devenv.local.nix). Their shellHook or enterShell is bash code run at the
 * user's next prompt, and direnv watches these files: a change reloads, unasked.
 */
function nixFilesBy(text: string, dir: string): Array<{ file: string; by: string }> {
  const files: Array<{ file: string; by: string }> = [];
  for (const { name, by, words } of commandsIn(text, String.raw`use[ \t]+(?:nix|flake|devenv)\b`, dir)) {
    const args = words.map(known);
    const tool = name.split(/[ \t]+/)[1];
    let named: string[];
    if (tool === "nix") named = ["shell.nix", "default.nix", ...args.filter((arg): arg is string => arg !== null && arg.endsWith(".nix"))];
    else if (tool === "devenv") named = ["devenv.nix", "devenv.yaml", "devenv.lock", "devenv.local.nix"];
    else {
      const ref = args.find((arg) => arg === null || !arg.startsWith("-"));
      if (ref === null) continue;
      // A local flake: `.`, `./sub#shell`, `path:./sub`, `git+file:./sub`; anything else (github:…, a registry name) is fetched.
      const local = ref === undefined ? "." : ref.split("#")[0]!.replace(/^(?:path|git\+file):/, "");
      if (local !== "" && !/^[./~]/.test(local)) continue;
      const flake = local === "" ? "." : local;
      named = [path.join(flake, "flake.nix"), path.join(flake, "flake.lock")];
    }
    for (const file of named) files.push({ file: path.resolve(dir, file), by });
  }
  return files;
}

/**
 * The names the `.envrc` in `dir` (text `text`) loads with source_up or source_up_if_exists (the
 * nearest of that name in a directory above its own, `.envrc` by default), and the command.
 */
function sourcedUpBy(text: string, dir: string): Array<{ file: string; by: string }> {
  const names: Array<{ file: string; by: string }> = [];
  for (const { by, words } of commandsIn(text, String.raw`source_up(?:_if_exists)?\b`, dir)) {
    const named = words[0] === undefined ? ".envrc" : known(words[0]);
    if (named !== null) names.push({ file: named, by });
  }
  return names;
}

/** direnv's directory for a layout's environments (`direnv_layout_dir`, by default `$PWD/.direnv`), in `dir`. */
const LAYOUT_DIR = ".direnv";

/** The entries of `dir`'s layout directory whose name `pattern` matches, relative to `dir` (none where there is no such directory). */
function layoutEntries(dir: string, pattern: RegExp): string[] {
  try {
    return readdirSync(path.join(dir, LAYOUT_DIR)).filter((entry) => pattern.test(entry)).map((entry) => path.join(LAYOUT_DIR, entry));
  } catch {
    return [];
  }
}

/**
 * The directories `layout NAME ARGS` (words `texts`, NAME first) in the `.envrc` in `dir` puts
 * on PATH, as direnv's stdlib (2.32) does: node's node_modules/.bin, php's vendor/bin, go's and
 * perl's under .direnv, python's (python2, python3, pyenv) virtual environment
 * .direnv/python-VERSION (each one there: the version is the interpreter's) or the older
 * .direnv/virtualenv, pipenv's (the project's .venv, which pipenv uses where there is one), ruby's
 * GEM_HOME and BUNDLE_BIN, anaconda's environment named by a path. Their programs (pip, pytest, a
 * gem's command) are files a script could otherwise rewrite, keeping their mode.
 */
function layoutPathDirs(texts: ReadonlyArray<string | null>, dir: string): Array<string | null> {
  const [layout, first] = texts;
  switch (layout) {
    case "node":
      return ["node_modules/.bin"];
    case "php":
      return ["vendor/bin"];
    case "go":
      return [`${LAYOUT_DIR}/go/bin`];
    case "perl":
      return [`${LAYOUT_DIR}/perl5/bin`];
    case "python":
    case "python2":
    case "python3":
    case "pyenv":
      return layoutEntries(dir, /^(?:python-.+|virtualenv)$/).map((env) => `${env}/bin`);
    case "pipenv":
      return [".venv/bin"];
    case "ruby":
      return [`${LAYOUT_DIR}/bin`, ...layoutEntries(dir, /^ruby(?:-.+)?$/).map((env) => `${env}/bin`)];
    case "anaconda":
      // A prefix given as a path (`./env`, `/opt/envs/x`); a name is conda's, outside the project.
      return first !== undefined && first !== null && /^\.?\//.test(first) ? [`${first}/bin`] : [];
    default:
      return [];
  }
}

/**
 * The directories the `.envrc` in `dir` (text `text`) puts on PATH, and the command that does:
 * `PATH_add a b`, `path_add PATH a b`, `load_prefix p` (p/bin, p/sbin), `layout …` (see
 * layoutPathDirs), `PATH_rm` aside; and `PATH=a:$PATH` / `export PATH="$PWD/a:$PATH"`.
 */
function pathDirsBy(text: string, dir: string): Array<{ file: string; by: string }> {
  const dirs: Array<{ file: string; by: string }> = [];
  for (const { name, by, words } of commandsIn(text, String.raw`PATH_add|path_add|load_prefix|layout|(?:export\s+)?PATH=`, dir)) {
    const texts = words.map(known);
    let named: Array<string | null>;
    if (name === "PATH_add") named = texts;
    else if (name === "path_add") named = texts[0] === "PATH" ? texts.slice(1) : [];
    else if (name === "load_prefix") named = texts.slice(0, 1).flatMap((prefix) => (prefix === null ? [] : [`${prefix}/bin`, `${prefix}/sbin`]));
    else if (name === "layout") named = layoutPathDirs(texts, dir);
    // PATH=a:$PATH: the entries other than $PATH, each known unless it holds an expansion of its own.
    else named = (words[0]?.text ?? "").split(":").filter((entry) => entry !== "" && !/^\$\{?PATH\}?$/.test(entry)).map((entry) => (/[$`]/.test(entry) ? null : entry));
    for (const word of named) if (word !== null) dirs.push({ file: path.resolve(dir, word), by });
  }
  return dirs;
}

interface Loaded {
  /** For "up", the name as written. */
  file: string;
  by: string;
  envrc: string;
  /**
   * "load": a file direnv loads; "path": a directory it puts first on PATH; "up": a name direnv
   * looks for in each directory above the .envrc's, loading the nearest.
   */
  kind: "load" | "path" | "up";
  /** source_env: a directory stands for the .envrc in it. */
  orItsEnvrc?: true;
}

/** What the `.envrc` file `envrc` (text `text`) loads. */
const loadsOf = (text: string, envrc: string): Loaded[] => {
  const dir = path.dirname(envrc);
  return [
    ...loadedBy(text, dir).map((loaded) => ({ ...loaded, envrc, kind: "load" as const })),
    ...pathDirsBy(text, dir).map((loaded) => ({ ...loaded, envrc, kind: "path" as const })),
    ...sourcedUpBy(text, dir).map((loaded) => ({ ...loaded, envrc, kind: "up" as const })),
  ];
};

/** What the `.envrc` files in each directory and those above it load, nearest first, remembered for the operation (see operation-memo.ts). */
const loadedAt = new OperationMemo<readonly Loaded[]>();

/** What the `.envrc` in `dir` loads. */
function loadedIn(dir: string): Loaded[] {
  const envrc = path.join(dir, ".envrc");
  // readBoundedText asks existsSync first: most directories hold none, and a failed open costs an exception.
  const text = readEnvrc(envrc);
  return text === null ? [] : loadsOf(text, envrc);
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

/**
 * What the .envrc files direnv has records of load (direnv-trust.ts), by the path each protects:
 * `within` (the path and what lies in it), `exact` (the path only), and the directories put on
 * PATH. Built again only when the records change (their key): a user may hold hundreds of
 * records, and a change judged against each of them cost milliseconds.
 */
interface RecordedIndex {
  key: string;
  within: ReadonlyMap<string, Loaded>;
  exact: ReadonlyMap<string, Loaded>;
  paths: readonly Loaded[];
}

let recordedIndex: RecordedIndex | undefined;

function indexOf(key: string, envrcs: readonly string[]): RecordedIndex {
  const within = new Map<string, Loaded>();
  const exact = new Map<string, Loaded>();
  const paths: Loaded[] = [];
  for (const envrc of envrcs) {
    const text = readEnvrc(envrc);
    if (text === null) continue;
    for (const loaded of loadsOf(text, envrc)) {
      if (loaded.kind === "path") paths.push(loaded);
      else for (const target of targetsOf(loaded)) (target.exact ? exact : within).set(target.file, loaded);
    }
  }
  return { key, within, exact, paths };
}

function recordedLoads(): RecordedIndex {
  const { key, envrcs } = recordedEnvrcs();
  if (recordedIndex?.key !== key) recordedIndex = indexOf(key, envrcs);
  return recordedIndex;
}

/**
 * The paths a load protects: `exact` only that path, else it and what lies in it. source_env's
 * DIR stands for DIR/.envrc, and for DIR itself (which becomes a file if it is not a
 * directory); source_up's name in every directory above the .envrc's (a new one nearer takes over).
 */
function targetsOf(loaded: Loaded): Array<{ file: string; exact: boolean }> {
  if (loaded.kind === "up") {
    const targets: Array<{ file: string; exact: boolean }> = [];
    for (let at = path.dirname(path.dirname(loaded.envrc)); ; at = path.dirname(at)) {
      targets.push({ file: path.resolve(at, loaded.file), exact: false });
      if (path.dirname(at) === at) return targets;
    }
  }
  if (loaded.orItsEnvrc) return [{ file: loaded.file, exact: true }, { file: path.join(loaded.file, ".envrc"), exact: false }];
  return [{ file: loaded.file, exact: false }];
}

/** What a recorded .envrc loads that `changed` is or lies in, or null: a lookup per directory above it. */
function recordedLoadOf(changed: string): Loaded | null {
  const index = recordedLoads();
  if (index.within.size === 0 && index.exact.size === 0) return null;
  const hit = index.exact.get(changed);
  if (hit) return hit;
  for (let at = changed; ; at = path.dirname(at)) {
    const found = index.within.get(at);
    if (found) return found;
    if (path.dirname(at) === at) return null;
  }
}

/** The file `changed` is (or lies in) that an `.envrc` above it, or one direnv has a record of, loads, as a protected path; or null. */
function loadedFileChange(changed: string): ProtectedPath | null {
  const loads = (loaded: Loaded): boolean => loaded.kind !== "path" && targetsOf(loaded).some((target) => (target.exact ? changed === target.file : isWithin(changed, target.file)));
  const hit = loadedAbove(path.dirname(changed)).find(loads) ?? recordedLoadOf(changed);
  if (!hit) return null;
  return {
    path: changed,
    what: `a file direnv loads for ${hit.envrc} (${hit.by})`,
    readable: true,
    refusal:
      "scripts may read it but not change it: direnv's shell hook loads it at the user's next prompt in that directory, " +
      "running its code or exporting its variables (PROMPT_COMMAND, PATH, …) into the user's shell, outside the sandbox, " +
      "without asking (only the .envrc itself needs `direnv allow`). Ask the user to change it",
  };
}

/** Where the links in a directory on PATH lead (really), remembered for the operation: node_modules/.bin holds links into the packages. */
const linkTargetsIn = new OperationMemo<ReadonlySet<string>>();

function linkTargets(dir: string): ReadonlySet<string> {
  return linkTargetsIn.get(dir, () => {
    const targets = new Set<string>();
    try {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isSymbolicLink()) continue;
        try {
          targets.add(realpathSync(path.join(dir, entry.name)));
        } catch {
          // A dangling link runs nothing.
        }
      }
    } catch {
      // No such directory (yet): nothing in it runs.
    }
    return targets;
  });
}

/**
 * The program `changed` is, if it is an executable file in a directory an `.envrc` above it puts
 * on PATH (or a link there leads to it), as a protected path; or null. Costs nothing where no
 * `.envrc` above puts a directory on PATH, and a stat where one does: only an existing executable
 * is refused (a file a script writes is created without any execute bit, and keeps its mode when
 * rewritten), so the script's other files there, and new ones, stay writable.
 */
function pathProgramChange(changed: string): ProtectedPath | null {
  const dirs = [...loadedAbove(path.dirname(changed)), ...recordedLoads().paths].filter(({ kind }) => kind === "path");
  if (dirs.length === 0) return null;
  const stats = statSync(changed, { throwIfNoEntry: false });
  if (!stats?.isFile() || (stats.mode & 0o111) === 0) return null;
  const real = (() => {
    try {
      return realpathSync(changed);
    } catch {
      return changed;
    }
  })();
  const hit = dirs.find(({ file }) => path.dirname(changed) === file || path.dirname(real) === file || linkTargets(file).has(real));
  if (!hit) return null;
  return {
    path: changed,
    what: `an executable program in ${hit.file}, a directory direnv puts first on the user's PATH for ${hit.envrc} (${hit.by})`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor delete it): with direnv's shell hook, the user runs it, outside the sandbox and " +
      "with their full authority, whenever they type its name in that project (it also shadows a system command of the same " +
      "name). Files there that are not executable stay writable, and a file a script creates is never executable. Ask the user to change it",
  };
}

// What of the above a path a script would change is: a file an `.envrc` above it loads, a program on the PATH one sets.
export { loadedFileChange as direnvLoadChangeOf, pathProgramChange as direnvProgramChangeOf };
