// What a script's file write could make git run later, outside the sandbox, beyond the `.git`
// names protected-paths.ts refuses by name (GIT_CONTROL). Each was shown with git 2.39 by a
// script with nothing but requestFileSystem("."):
// - the hooks directory a repository's configuration names (core.hooksPath, husky's `.husky/_`
//   or `.husky`): a script that wrote an executable hook there, or for husky 9 `.husky/pre-commit`
//   (its `.husky/_/pre-commit` runs that with `sh -e`, executable or not), ran it at the user's
//   next `git commit`;
// - a file the configuration includes (include.path, includeIf.*.path; a repository that shares
//   settings with `include.path = ../.gitconfig` includes a file of the worktree): it is read as
//   the configuration, so `core.fsmonitor` there ran at the next `git status`;
// - a directory git takes for a repository (HEAD beside objects and refs, or beside a
//   `commondir` file naming where they are): one the script made with HEAD, objects, refs and a
//   config is a bare repository whose core.pager ran at `git log` there and whose remote
//   (protocol.ext.allow) at `git fetch` there, and so did one with HEAD and a commondir naming a
//   directory the script filled; shell prompts and editors run git in the directories one opens,
//   on their own. (A commondir in the project's `.git` moves its configuration the same way, but
//   was refused already: nothing may be made directly in a directory named `.git`.)
// - a program of the worktree a command setting names (COMMAND_SETTINGS: a diff's textconv at git
//   diff, a clean filter at git status, an alias; and a trailer's command at git commit --trailer,
//   tar.<format>.command at git archive, imap.tunnel, instaweb.httpd, core.alternateRefsCommand at
//   git fetch with alternates, a remote's ext:: URL at git fetch, uploadpack.packObjectsHook at a
//   local clone; send-email's, git gui's, git svn's and git 2.54's hook.<name>.command by their
//   documentation, not installed here), and the template directory init.templateDir names, whose
//   hooks and config git copies into the repositories git init and git clone make.
// And the configuration a git hook manager's runner installed as a hook reads (hook-managers.ts).
// Reads are not affected: none of this is secret.

import { lstatSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readBoundedText } from "../bounded-file.js";
import { existsAsDirectory, isWithin, resolveRealOrSelf } from "./containment.js";
import { hookManagerChangeOf, hookManagerPlacesOf, husky4ManifestOf } from "./hook-managers.js";
import { shellWords } from "../shell-word.js";
import { OperationMemo } from "./operation-memo.js";
import type { ProtectedPath } from "./protected-paths.js";

/** What makes a directory a repository to git (is_git_directory): HEAD, and objects and refs (or a commondir naming where they are). */
const REPOSITORY_SHAPE = new Set(["head", "objects", "refs", "commondir"]);
/** What in a repository's directory names commands git runs: its configuration, hooks, and where its configuration is (commondir). */
const REPOSITORY_CONTROL = new Set(["config", "config.worktree", "commondir", "hooks"]);

/** Configuration files are a few KiB; past this, only this much of one is read (git's own limit is far larger, but no setup needs it). */
const CONFIG_LIMIT_BYTES = 1024 * 1024;
/** git's own limit on nested includes. */
const INCLUDE_DEPTH = 10;

const REFUSE_CONFIG =
  "scripts may read it but not change it: git reads it as the repository's configuration and runs the commands it names " +
  "(core.fsmonitor at every git status, core.pager, aliases, a remote's command at git fetch) with the user's full authority, " +
  "outside the sandbox. Ask the user to change it";

/** Where lefthook keeps the repositories its `remotes:` name (`git rev-parse --git-path info`/lefthook-remotes), whose configurations it merges. */
const LEFTHOOK_REMOTES = "lefthook-remotes";

/** Whether `dir` is a repository to git as it is now (see REPOSITORY_SHAPE). */
function isRepositoryDirectory(dir: string): boolean {
  return present(path.join(dir, "HEAD")) && (present(path.join(dir, "commondir")) || (present(path.join(dir, "objects")) && present(path.join(dir, "refs"))));
}

function present(file: string): boolean {
  try {
    return lstatSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/**
 * The repository directory `changed` (a path a script creates, writes or deletes) is the
 * configuration or hooks of, or that it would make a repository of, as a protected path; or
 * null. Every directory on the way is looked at where the entry leading to `changed` is one of
 * those names (a mkdir makes its parents too). Refused: a change of `config`, `config.worktree`,
 * `commondir` or `hooks/…` in a directory that is (or, with it, becomes) a repository, and the
 * change that makes a repository of a directory that already holds one of those (so that the
 * order the files are made in does not matter). Objects, refs and HEAD of an existing
 * repository may still be written: they name no command.
 */
function repositoryDirectoryChange(changed: string): ProtectedPath | null {
  for (let child = changed, dir = path.dirname(changed); dir !== child; child = dir, dir = path.dirname(dir)) {
    // In lower case: on a case-insensitive file system (macOS, Windows) git's "config" is also a script's "CONFIG".
    const entry = path.basename(child).toLowerCase();
    if (entry === LEFTHOOK_REMOTES && path.basename(dir).toLowerCase() === "info" && isRepositoryDirectory(path.dirname(dir))) {
      return {
        path: child,
        what: `lefthook's copies of the remote configurations a lefthook.yml names (remotes:), kept in the git repository ${path.dirname(dir)}`,
        readable: true,
        refusal:
          "scripts may read them but not change them: lefthook merges them into the configuration its hooks read, and runs the " +
          "commands they name with the user's full authority at the next git commit or push, outside the sandbox. Ask the user to change them",
      };
    }
    const control = REPOSITORY_CONTROL.has(entry);
    if (!control && !REPOSITORY_SHAPE.has(entry)) continue;
    const had = (name: string): boolean => present(path.join(dir, name === "head" ? "HEAD" : name));
    const has = (name: string): boolean => name === entry || had(name);
    const isRepository = (have: (name: string) => boolean): boolean => have("head") && (have("commondir") || (have("objects") && have("refs")));
    if (!isRepository(has) || ![...REPOSITORY_CONTROL].some(has)) continue;
    if (control || !isRepository(had)) {
      return {
        path: dir,
        what: control
          ? `a git repository's configuration or hooks (${dir} is a repository to git: it holds HEAD, objects and refs, or a commondir)`
          : `a directory that would become a git repository with a configuration or hooks in it (${dir}: HEAD, objects and refs, or a commondir, beside a config or hooks)`,
        readable: true,
        refusal:
          "git takes such a directory for a repository wherever it is, and runs the commands its configuration and hooks name " +
          "(core.fsmonitor, core.pager, a remote's command at git fetch, hooks) with the authority of whoever runs git there, outside " +
          "the sandbox (a shell prompt or an editor does so on its own in the directories one opens). Keep such files under another " +
          "directory name, or ask the user to make the repository",
      };
    }
  }
  return null;
}

/**
 * The text of a configuration file, or null (none, not a regular file, unreadable). Past
 * CONFIG_LIMIT_BYTES (or grown while read), what was read: what it names is protected all the same.
 */
const readConfigText = (file: string): string | null => readBoundedText(file, CONFIG_LIMIT_BYTES);

/** One `key = value` of a configuration file: its section (lower case), subsection (as written, or ""), key (lower case) and value. */
interface ConfigEntry {
  section: string;
  subsection: string;
  key: string;
  value: string;
}

/**
 * The entries of git's configuration syntax, as far as judging them needs: sections
 * (`[core]`, `[includeIf "gitdir:x"]`, `[core.x]`), keys in any case, values quoted or not,
 * backslash escapes, comments (# and ;) and lines continued with a backslash.
 */
export function parseGitConfig(text: string): ConfigEntry[] {
  const entries: ConfigEntry[] = [];
  let section = "";
  let subsection = "";
  const lines = text.replace(/\\\r?\n/g, "").split(/\r?\n/);
  for (const raw of lines) {
    let line = raw.trimStart();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header) {
      const [name, ...dotted] = header[1]!.split(".");
      section = name!.toLowerCase();
      subsection = header[2] ?? dotted.join(".");
      line = line.slice(header[0].length).trimStart();
    }
    const pair = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(line);
    if (!pair) continue;
    entries.push({ section, subsection, key: pair[1]!.toLowerCase(), value: pair[2] === undefined ? "true" : configValue(pair[2]) });
  }
  return entries;
}

/** A value as git reads it: quotes removed, escapes applied, a comment outside quotes dropped, outer space trimmed. */
function configValue(raw: string): string {
  let value = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') quoted = !quoted;
    else if (c === "\\" && i + 1 < raw.length) {
      const next = raw[++i]!;
      value += next === "n" ? "\n" : next === "t" ? "\t" : next === "b" ? "\b" : next;
    } else if (!quoted && (c === "#" || c === ";")) break;
    else value += c;
  }
  return value.trim();
}

/** A path as git expands it in the configuration: `~/` is the home directory, a relative one is relative to `base`. */
function configPath(value: string, base: string): string {
  const expanded = value === "~" ? os.homedir() : value.startsWith("~/") ? path.join(os.homedir(), value.slice(2)) : value;
  return path.resolve(base, expanded);
}

/** What a repository's configuration names that a script must not change, and where it says so. */
interface ConfiguredFiles {
  includes: Array<{ file: string; by: string }>;
  hooks: Array<{ dir: string; value: string; by: string }>;
  programs: Array<{ file: string; setting: string; by: string }>;
  templates: Array<{ dir: string; value: string; by: string }>;
}

/**
 * The settings whose value is a command git runs (git-config(1)), by section and key (the
 * subsection, a driver's or a tool's name, dropped); "*": every key of the section. A command
 * there that names a file of the worktree (`diff.tc.textconv = ./tools/textconv.sh`, an alias
 * `!node scripts/x.js`) ran whatever a script wrote into that file at the next `git diff`,
 * `git status` (a clean filter) or alias.
 */
const COMMAND_SETTINGS: Readonly<Record<string, ReadonlySet<string>>> = {
  // core.alternateRefsCommand: at git fetch (and a push received) in a repository with alternates.
  core: new Set(["fsmonitor", "pager", "editor", "sshcommand", "askpass", "gitproxy", "alternaterefscommand"]),
  sequence: new Set(["editor"]),
  interactive: new Set(["difffilter"]),
  diff: new Set(["external", "command", "textconv"]),
  difftool: new Set(["cmd", "path"]),
  mergetool: new Set(["cmd", "path"]),
  merge: new Set(["driver"]),
  filter: new Set(["clean", "smudge", "process"]),
  credential: new Set(["helper"]),
  gpg: new Set(["program", "defaultkeycommand"]),
  remote: new Set(["uploadpack", "receivepack"]),
  submodule: new Set(["update"]),
  browser: new Set(["cmd", "path"]),
  man: new Set(["cmd", "path"]),
  web: new Set(["browser"]),
  alias: new Set(["*"]),
  pager: new Set(["*"]),
  // git interpret-trailers and git commit --trailer (a trailer's command runs even with no such trailer given).
  trailer: new Set(["command", "cmd"]),
  // git archive --format=<format>, or -o x.<format>.
  tar: new Set(["command"]),
  // git imap-send.
  imap: new Set(["tunnel"]),
  // git send-email (smtpServer is a program only as an absolute path: SMTP_SERVER_KEY).
  sendemail: new Set(["tocmd", "cccmd", "headercmd", "sendmailcmd"]),
  // git gui's Tools menu.
  guitool: new Set(["cmd"]),
  // git instaweb (a daemon it knows by name: ./tools/lighttpd-wrapper ran).
  instaweb: new Set(["httpd"]),
  // git svn, for an author missing from the authors file.
  svn: new Set(["authorsprog"]),
  // Configuration-based hooks (git 2.54 and later; git 2.39 ignores them, but the user's next git may not).
  hook: new Set(["command"]),
  // A fetch served from this machine (a local clone or fetch); git honours it only from the user's or the system's
  // configuration, but a program named in a repository's is protected all the same (no need to tell which is which).
  uploadpack: new Set(["packobjectshook"]),
};

/**
 * sendemail.smtpServer (or sendemail.<identity>.smtpServer): a host name, or as an absolute path
 * a sendmail-like program git send-email runs, the whole value the path (not split into words).
 */
const SMTP_SERVER_KEY = "smtpserver";

/**
 * The words of a command that name a file by a path (with a slash: a bare name is looked up in
 * PATH), relative to `base`. Not an existing directory: `!cd web/ && make` names no program in
 * web/, and taking it for one refused every change under web/.
 */
function programFiles(command: string, base: string): string[] {
  // Read as the shell git hands it to reads it: `sh scr"ipts"/x.sh` runs scripts/x.sh.
  return shellWords(command, { home: os.homedir() })
    .filter(({ text, expands }) => !expands && text.includes("/") && !text.startsWith("-") && !text.includes("://"))
    .map(({ text }) => configPath(text, base))
    .filter((file) => !existsAsDirectory(file));
}

/**
 * The words of the command a remote's `ext::` URL runs (git-remote-ext(1): at git fetch, pull or
 * push with that remote, where protocol.ext.allow lets it; without a shell), that name a file by a
 * path, relative to `base`. ext splits at spaces, reads "% " as a space in a word and "%%" as a
 * percent; %s, %S and %G are git's to fill in. A word is also read as the shell would, for a
 * command handed to one (`ext::sh -c ./tools/fetch.sh% %S`).
 */
function extCommandFiles(command: string, base: string): string[] {
  const words: Array<{ text: string; expands: boolean }> = [];
  let word = { text: "", expands: false };
  for (let i = 0; i <= command.length; i++) {
    const c = command[i];
    if (c === undefined || c === " ") {
      if (word.text !== "" || word.expands) words.push(word);
      word = { text: "", expands: false };
    } else if (c === "%" && i + 1 < command.length) {
      const next = command[++i]!;
      if (next === " " || next === "%") word.text += next;
      else word.expands = true;
    } else word.text += c;
  }
  return words
    .filter(({ expands }) => !expands)
    .flatMap(({ text }) => [
      ...(text.includes("/") && !text.startsWith("-") && !text.includes("://") ? [configPath(text, base)] : []),
      ...programFiles(text, base),
    ])
    .filter((file) => !existsAsDirectory(file));
}

/**
 * Reads `file` and the files it includes (every include and includeIf, whatever its condition:
 * a condition can come true later), collecting includes and core.hooksPath (relative to
 * `worktree`, where git runs hooks).
 */
function collectConfig(file: string, worktree: string, found: ConfiguredFiles, depth = 0, seen = new Set<string>()): void {
  if (depth > INCLUDE_DEPTH || seen.has(file)) return;
  seen.add(file);
  const text = readConfigText(file);
  if (text === null) return;
  for (const { section, subsection, key, value } of parseGitConfig(text)) {
    if ((section === "include" || section === "includeif") && key === "path" && value !== "") {
      const included = configPath(value, path.dirname(file));
      found.includes.push({ file: included, by: file });
      collectConfig(included, worktree, found, depth + 1, seen);
    } else if (section === "core" && key === "hookspath" && value !== "") {
      found.hooks.push({ dir: configPath(value, worktree), value, by: file });
    } else if (section === "init" && key === "templatedir" && value !== "") {
      // Copied whole (hooks/, config, …) into the repository each git init or git clone makes; git reads it from the
      // user's or the system's configuration only, but one a repository's names is protected all the same.
      found.templates.push({ dir: configPath(value, worktree), value, by: file });
    } else if (section === "sendemail" && key === SMTP_SERVER_KEY) {
      if (value.startsWith("/") || value.startsWith("~/")) {
        const program = configPath(value, worktree);
        if (!existsAsDirectory(program)) found.programs.push({ file: program, setting: `${[section, subsection, key].filter((part) => part !== "").join(".")} = ${value}`, by: file });
      }
    } else if (section === "remote" && (key === "url" || key === "pushurl") && value.startsWith("ext::")) {
      for (const program of extCommandFiles(value.slice("ext::".length), worktree)) found.programs.push({ file: program, setting: `remote.${subsection}.${key} = ${value}`, by: file });
    } else if (section === "url" && (key === "insteadof" || key === "pushinsteadof") && subsection.startsWith("ext::")) {
      // `[url "ext::sh tools/fetch.sh "] insteadOf = corp:`: what a URL is rewritten to (the rest of the URL is appended).
      for (const program of extCommandFiles(subsection.slice("ext::".length), worktree)) found.programs.push({ file: program, setting: `url.${subsection}.${key} = ${value}`, by: file });
    } else if (COMMAND_SETTINGS[section]?.has(key) || COMMAND_SETTINGS[section]?.has("*")) {
      // An alias is a command only with a leading "!" (else it is git's own), as is a submodule's update.
      const command = section === "alias" || section === "submodule" ? (value.startsWith("!") ? value.slice(1) : "") : value;
      // Run in the worktree's top directory (filters, drivers, aliases), so relative to it.
      for (const program of programFiles(command, worktree)) found.programs.push({ file: program, setting: `${[section, subsection, key].filter((part) => part !== "").join(".")} = ${value}`, by: file });
    }
  }
}

/** The user's and the system's configuration files git reads in every repository. */
function globalConfigFiles(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || os.homedir();
  const xdg = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : path.join(home, ".config");
  // And those the environment names instead (read too, should the user's next git run without them).
  const named = [env.GIT_CONFIG_SYSTEM, env.GIT_CONFIG_GLOBAL].filter((file): file is string => typeof file === "string" && file !== "");
  return ["/etc/gitconfig", path.join(xdg, "git", "config"), path.join(home, ".gitconfig"), ...named];
}

interface Repository {
  worktree: string;
  gitDir: string;
}

/** The repository each directory lies in, remembered for the operation (see operation-memo.ts). */
const repositories = new OperationMemo<Repository | null>();

/** The repository `dir` is the worktree top of (its `.git`, a `.git` file followed), or null. */
function repositoryIn(dir: string): Repository | null {
  const dotGit = path.join(dir, ".git");
  let isDirectory: boolean;
  try {
    // Missing (as it is in most directories above a change) without an error built for it: a
    // write's checks ask each directory up to / (a thrown ENOENT costs five times the lstat).
    const stats = lstatSync(dotGit, { throwIfNoEntry: false });
    if (stats === undefined) return null;
    isDirectory = stats.isDirectory();
  } catch {
    return null;
  }
  if (isDirectory) return { worktree: dir, gitDir: dotGit };
  const named = /^gitdir:\s*(.+?)\s*$/m.exec(readConfigText(dotGit) ?? "");
  return named ? { worktree: dir, gitDir: path.resolve(dir, named[1]!) } : null;
}

/**
 * The repository whose worktree `changed` lies in, or null. The directories on the way up are
 * remembered for the operation: a mkdir of many levels asks for each, and each asked for them all.
 */
function enclosingRepository(changed: string): Repository | null {
  const walked: string[] = [];
  let found: Repository | null = null;
  for (let dir = path.dirname(changed); ; dir = path.dirname(dir)) {
    const known = repositories.lookup(dir);
    if (known) {
      found = known.value;
      break;
    }
    walked.push(dir);
    found = repositoryIn(dir);
    if (found !== null || path.dirname(dir) === dir) break;
  }
  for (const dir of walked) repositories.set(dir, found);
  return found;
}

/** What a repository's configuration names, remembered for the operation (see operation-memo.ts). */
const configurations = new OperationMemo<{ found: ConfiguredFiles; commonDir: string }>();

/** What `repository`'s configuration names; remembered for the operation only for tacit's own environment (what a test passes is asked afresh). */
function configurationFor(repository: Repository, env: NodeJS.ProcessEnv): { found: ConfiguredFiles; commonDir: string } {
  return env === process.env ? configurations.get(`${repository.worktree}\0${repository.gitDir}`, () => configurationOf(repository, env)) : configurationOf(repository, env);
}

function configurationOf(repository: Repository, env: NodeJS.ProcessEnv): { found: ConfiguredFiles; commonDir: string } {
  const found: ConfiguredFiles = { includes: [], hooks: [], programs: [], templates: [] };
  const commonDirText = readConfigText(path.join(repository.gitDir, "commondir"));
  const commonDir = commonDirText === null ? repository.gitDir : path.resolve(repository.gitDir, commonDirText.trim());
  for (const file of [...globalConfigFiles(env), path.join(commonDir, "config"), path.join(repository.gitDir, "config.worktree")]) {
    collectConfig(file, repository.worktree, found);
  }
  return { found, commonDir };
}

/**
 * The hooks directory or included configuration file, named by the configuration git reads
 * for the repository `changed` lies in, that `changed` is (or lies in), or null. husky 9 sets
 * core.hooksPath to `.husky/_`, whose hooks run the script of the same name one directory up
 * (`.husky/pre-commit`) with `sh -e`: a hooks directory named `_` that holds husky's runner
 * `h` protects its parent too (never the worktree's top, which would be every file).
 */
function configuredFileChange(changed: string, env: NodeJS.ProcessEnv): ProtectedPath | null {
  const repository = enclosingRepository(changed);
  if (repository === null) return null;
  const { found, commonDir } = configurationFor(repository, env);
  // What the configuration names, as named and where it leads: a script writing the file a named link leads to changes it as well.
  const inside = (place: string): boolean => isWithin(changed, place) || isWithin(changed, resolveRealOrSelf(place));
  const include = found.includes.find(({ file }) => inside(file));
  if (include) {
    return {
      path: include.file,
      what: `a file git reads as this repository's configuration (${include.by} includes it: include.path)`,
      readable: true,
      refusal: REFUSE_CONFIG,
    };
  }
  const program = found.programs.find(({ file }) => inside(file));
  if (program) {
    return {
      path: program.file,
      what: `a program this repository's git configuration runs (${program.setting}, in ${program.by})`,
      readable: true,
      refusal:
        "scripts may read it but not change it: git runs it with the user's full authority, outside the sandbox, at the command " +
        "that setting is for (a diff, a status, an alias, git archive, git send-email). Ask the user to change it",
    };
  }
  const template = found.templates.find(({ dir }) => inside(dir));
  if (template) {
    return {
      path: template.dir,
      what: `the template directory git copies into every repository it makes (init.templateDir = ${template.value}, in ${template.by})`,
      readable: true,
      refusal:
        "scripts may read it but not change it: git copies its hooks and config into each repository the user's next git init or " +
        "git clone makes, and runs those hooks (at git commit, checkout, merge, push) and the commands that config names with the " +
        "user's full authority, outside the sandbox. Ask the user to change it",
    };
  }
  for (const hooks of found.hooks) {
    const huskyLike = path.basename(hooks.dir) === "_" && present(path.join(hooks.dir, "h")) && path.dirname(hooks.dir) !== repository.worktree;
    const husky = huskyLike ? path.dirname(hooks.dir) : null;
    if (!inside(hooks.dir) && !(husky !== null && inside(husky))) continue;
    return {
      path: inside(hooks.dir) ? hooks.dir : husky!,
      what: `the hooks directory this repository's configuration names (core.hooksPath = ${hooks.value}, in ${hooks.by})${husky === null ? "" : ", or the hook scripts husky runs from it"}`,
      readable: true,
      refusal:
        "scripts may read it but not change it: git runs the hooks there (at git commit, checkout, merge, push) with the user's " +
        "full authority, outside the sandbox. Ask the user to change the hook",
    };
  }
  // The configuration a hook manager's runner installed there reads (hook-managers.ts): every hooks directory named, and the default one.
  return hookManagerChangeOf(changed, repository.worktree, [...found.hooks.map((hooks) => hooks.dir), path.join(commonDir, "hooks")], env);
}

/** What of the above `changed` (a path a script would change) is, as a protected path to refuse, or null. */
export function gitRepositoryChangeOf(changed: string, env: NodeJS.ProcessEnv = process.env): ProtectedPath | null {
  return repositoryDirectoryChange(changed) ?? configuredFileChange(changed, env);
}

/**
 * The hook of a husky 4 runner installed in the repository `manifest` (a package.json a script
 * would change, named or real) lies in that reads its `"husky"` key, or null.
 */
export function husky4RunnerFor(manifests: readonly string[], env: NodeJS.ProcessEnv = process.env): string | null {
  for (const manifest of new Set(manifests)) {
    // Only a package.json can be one: nothing of the repository is read for other files.
    if (path.basename(manifest) !== "package.json") continue;
    const repository = enclosingRepository(manifest);
    if (repository === null) continue;
    const { found, commonDir } = configurationFor(repository, env);
    const runner = husky4ManifestOf(manifest, repository.worktree, [...found.hooks.map((hooks) => hooks.dir), path.join(commonDir, "hooks")]);
    if (runner !== null) return runner;
  }
  return null;
}

/**
 * The places outside its `.git` that the configuration git reads for the repository whose worktree
 * top is `worktree` names as what git runs or reads as configuration: the hooks directories
 * (core.hooksPath, and for husky's `.husky/_` the directory of the scripts it runs), included
 * configuration files, programs command settings name, template directories. For
 * --confine-commands (exec/confinement.ts), which keeps them read-only as the file API keeps them
 * from scripts here.
 */
export function configuredPlacesOf(worktree: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const repository = repositoryIn(worktree);
  if (repository === null) return [];
  const { found, commonDir } = configurationOf(repository, env);
  const places = [
    // What a hook manager's runner installed as a hook reads (lefthook.yml, .pre-commit-config.yaml, and the scripts they name).
    ...hookManagerPlacesOf(repository.worktree, [...found.hooks.map(({ dir }) => dir), path.join(commonDir, "hooks")], env),
    ...found.includes.map(({ file }) => file),
    ...found.programs.map(({ file }) => file),
    ...found.templates.map(({ dir }) => dir),
  ];
  for (const { dir } of found.hooks) {
    places.push(dir);
    if (path.basename(dir) === "_" && present(path.join(dir, "h")) && path.dirname(dir) !== repository.worktree) places.push(path.dirname(dir));
  }
  return places;
}
