// The files that decide how tacit itself is started: npm's configuration, which `npx tacit`
// reads before it starts tacit (its `node-options` becomes NODE_OPTIONS, so a `--require` there
// runs a file of anyone's choosing inside tacit, with your authority, before tacit's first line;
// `script-shell`, `userconfig` and kin are as bad), and the MCP clients' settings this README
// tells you to register tacit in (the command that starts tacit, its policy flags, and the
// client's own tool denials). A script that could write them, with nothing but
// requestFileSystem("."), would run code of its own outside the sandbox, or widen its own policy,
// the next time tacit starts. fs/protected-paths.ts lets scripts read them but not change them.
// And every package.json (the project's, and any other: npx started in its directory reads it), which a script may change but not so that it declares a
// program named tacit: `npx tacit` runs the project's own bin of that name (from `bin`, or a
// file named tacit in `directories.bin`) before the installed tacit, so such a bin ran a
// script's file with your authority at the next start (fs/file-system.ts asks tacitBinChange).

import os from "node:os";
import path from "node:path";
import { readBoundedFile } from "./bounded-file.js";
import { namedAndReal, resolveRealOrSelf } from "./fs/containment.js";

/**
 * Relative to the directory tacit was started in: the project settings of the MCP clients the
 * README names, and of a few others (and OpenCode's .opencode, whose plugins it runs at start).
 */
const CLIENT_PROJECT_FILES = [
  ".mcp.json",
  ".vscode/mcp.json",
  // VS Code also reads MCP servers from the workspace settings' "mcp" key.
  ".vscode/settings.json",
  ".opencode",
  ".claude/settings.json",
  ".claude/settings.local.json",
  // Other clients that start MCP servers from a project's settings.
  ".cursor/mcp.json",
  ".gemini/settings.json",
  ".roo/mcp.json",
  ".kiro/settings/mcp.json",
  ".amazonq/mcp.json",
  ".zed/settings.json",
  ".codex/config.toml",
  ".junie/mcp/mcp.json",
  ".kilocode/mcp.json",
  ".qwen/settings.json",
  // Crush runs its crushrc as bash at start (MCP servers, language servers, hooks); .crush.json and crush.json are its older form.
  ".crushrc",
  "crushrc",
  ".crush.json",
  "crush.json",
  // Continue reads every file under .continue/mcpServers (a directory, as .opencode); Kilo Code its .kilo (agents, MCP servers, plugins).
  ".continue",
  ".kilo",
];

/** Entries of CLIENT_PROJECT_FILES that are directories, not one settings file. */
const CLIENT_PROJECT_DIRECTORIES: ReadonlySet<string> = new Set([".opencode", ".continue", ".kilo"]);

/**
 * In the start directory and each one above it: npm's and yarn's project configuration (npm's
 * project is the nearest directory with a package.json or node_modules; yarn's .yarnrc.yml can
 * name the yarn to run, `yarnPath`), and OpenCode's, which it merges from each directory up (and
 * Kilo Code's, built on OpenCode).
 */
const ALONG_THE_WAY_UP = [".npmrc", ".yarnrc", ".yarnrc.yml", "opencode.json", "opencode.jsonc", "kilo.json", "kilo.jsonc"];

/** Cursor's project hooks file: no launch file, but Cursor runs its commands around its agent's steps. */
const CURSOR_HOOKS = ".cursor/hooks.json";

/**
 * The launch files of CLIENT_PROJECT_FILES and ALONG_THE_WAY_UP that are judged by their name in
 * every directory, not only in (and above) the one tacit was started in: a client started in
 * another directory (a package of a monorepo, another project under the allowed roots), or an
 * `npx tacit` there, reads that directory's. Shown through the real CLI: a script of a tacit
 * started in a project wrote sub/.npmrc (`node-options=--require` a file of its own) and
 * sub/package.json, and the next `npx tacit` in sub/ ran that file inside tacit; it wrote
 * sub/.claude/settings.json with a SessionStart hook and sub/.mcp.json with a server, which the
 * client runs at its next start there. And Cursor's hooks file, which fs/agent-hooks.ts judges in
 * the start directory only. Not .vscode/settings.json, which holds much besides
 * (editor settings a script may well change): fs/editor-settings.ts judges it by what it makes VS Code run.
 */
const BY_NAME_ANYWHERE = [...CLIENT_PROJECT_FILES, ...ALONG_THE_WAY_UP, CURSOR_HOOKS].filter((file) => file !== ".vscode/settings.json").map((file) => file.split("/"));

/**
 * The launch file (as CLIENT_PROJECT_FILES and ALONG_THE_WAY_UP name it, with the directory it is
 * in) that `file` (absolute) is or lies in, in whatever directory; or null. In lower case: on a
 * case-insensitive file system `.Claude/Settings.json` is Claude Code's file.
 */
export function launchFileNamedAt(file: string): { name: string; dir: string } | null {
  const parts = path.resolve(file).split(path.sep);
  const lower = parts.map((part) => part.toLowerCase());
  for (const name of BY_NAME_ANYWHERE) {
    const directory = CLIENT_PROJECT_DIRECTORIES.has(name.join("/"));
    // A directory's entries are its files at any depth; a file is the last components only.
    const starts = directory ? lower.keys() : [lower.length - name.length];
    for (const start of starts) {
      if (start < 1 || start + name.length > lower.length) continue;
      if (name.every((part, i) => lower[start + i] === part.toLowerCase())) {
        return { name: name.join("/"), dir: parts.slice(0, start).join(path.sep) || path.sep };
      }
    }
  }
  return null;
}

/** Relative to the home directory: the same clients' user settings. */
const CLIENT_USER_FILES = [
  ".claude.json",
  ".claude/settings.json",
  ".config/opencode/opencode.json",
  ".config/opencode/opencode.jsonc",
  ".config/Code/User/settings.json",
  ".config/Code/User/mcp.json",
  ".config/Claude/claude_desktop_config.json",
  ".cursor/mcp.json",
  ".gemini/settings.json",
  ".codeium/windsurf/mcp_config.json",
  ".codex/config.toml",
  ".config/zed/settings.json",
  ".kiro/settings/mcp.json",
  ".aws/amazonq/mcp.json",
  ".config/goose/config.yaml",
  ".continue",
  ".kilocode/cli/global/settings/mcp_settings.json",
  ".config/kilo/kilo.json",
  ".config/kilo/kilo.jsonc",
  ".qwen/settings.json",
  ".config/crush/crushrc",
  ".config/crush/crush.json",
];

/** An npm setting from the environment (npm reads npm_config_x in any case). */
function npmSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const wanted = `npm_config_${name}`;
  const key = Object.keys(env).find((k) => k.toLowerCase() === wanted && env[k]);
  return key === undefined ? undefined : env[key];
}

/** The command the README registers tacit as, which npx looks up among the project's own bins first. */
const COMMAND = "tacit";

/** A package.json's fields as npm reads them, or null when it does not parse (npm then runs none of its bins). */
function manifestOf(text: string | null): { name?: unknown; bin?: unknown; directories?: unknown } | null {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** A manifest's `directories.bin`, every file in which npm makes a bin; null when it names none. */
function binDirectoryOf(manifest: { directories?: unknown }): unknown {
  const directories = manifest.directories;
  return typeof directories === "object" && directories !== null ? ((directories as { bin?: unknown }).bin ?? null) : null;
}

/** `dir` and each directory above it, up to the filesystem root. */
function thisAndAbove(dir: string): string[] {
  const dirs: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    dirs.push(at);
    if (path.dirname(at) === at) return dirs;
  }
}

/** The name npm gives a bin key (or a package name, for a single bin): its last path component. */
const binName = (key: string): string => path.basename(key.replace(/[\\:]/g, "/"));

/** What a package.json says npx would run as `tacit`: the bin of that name, and the directory every file of which is a bin. */
function tacitBinOf(text: string | null): string | null {
  const manifest = manifestOf(text);
  if (manifest === null) return null;
  let bin: unknown = null;
  if (typeof manifest.bin === "string") bin = typeof manifest.name === "string" && binName(manifest.name) === COMMAND ? manifest.bin : null;
  else if (typeof manifest.bin === "object" && manifest.bin !== null) {
    bin = Object.entries(manifest.bin as Record<string, unknown>).filter(([key]) => binName(key) === COMMAND);
    if ((bin as unknown[]).length === 0) bin = null;
  }
  const binDir = binDirectoryOf(manifest);
  return bin === null && binDir === null ? null : JSON.stringify([bin, binDir]);
}

/**
 * Whether one of `files` (a path as named and where it leads) is a package.json npx may take as
 * the project's: any, in whatever directory, since `npx tacit` started there (a package of a
 * monorepo, another project under the roots: an MCP client registered for the user starts it in
 * the directory it runs in) runs that package.json's own bin named tacit. Shown with npm 11: a
 * sub/package.json declaring `"bin": { "tacit": "payload.js" }` made `npx --offline tacit` in sub/
 * run payload.js, a file that was not even executable. What a write leaves there is judged
 * (tacitBinChange), and a classified write there is refused outright, since judging its content
 * would tell the script something about a secret. In lower case: on a case-insensitive file
 * system `Package.json` is npm's file.
 */
export function isLaunchManifestAt(files: readonly string[]): boolean {
  return files.some((file) => path.basename(file).toLowerCase() === "package.json");
}

/**
 * The largest project package.json a script's write may leave, in bytes: what a write leaves
 * there is read and parsed whole to judge it (tacitBinChange), on the host's main thread.
 * Unbounded, a security review appended "{}," a million times at a time to a package.json:
 * each append parsed the file before and after it (millions of objects, some 60 bytes of heap
 * for every 3 bytes of file), holding the host for seconds, and at 12 MB a tacit with a 250 MB
 * heap died of it (every session of a tacit serve with it; at the default heap, some 200 MB).
 * npm's own package.json files are a few KiB.
 */
export const LAUNCH_MANIFEST_LIMIT_BYTES = 1024 * 1024;

/** A package.json past LAUNCH_MANIFEST_LIMIT_BYTES, which is not read. */
export const TOO_LONG: unique symbol = Symbol("longer than tacit judges");

/** A package.json's text: null when there is none, TOO_LONG past the limit. */
export type ManifestText = string | null | typeof TOO_LONG;

/**
 * The text of the package.json at `file` (really there: symlinks resolved), read up to
 * LAUNCH_MANIFEST_LIMIT_BYTES; null when there is none or it is no regular file (a FIFO would
 * block the host's thread; a write there fails anyway).
 */
export function readManifest(file: string): ManifestText {
  // A new file (or none: a dead link, a directory on the way that is a file), or no regular one, is none.
  const read = readBoundedFile(file, LAUNCH_MANIFEST_LIMIT_BYTES);
  if (read === null || read.unchanged) return null;
  return read.complete ? read.text : TOO_LONG;
}

/** What a write leaves: `content`, or appended to what was there (TOO_LONG past what was read). */
export function textAfter(before: ManifestText, content: string, append: boolean): string | typeof TOO_LONG {
  if (!append) return content;
  return before === TOO_LONG ? TOO_LONG : (before ?? "") + content;
}

/**
 * Why writing `after` over `before` (null: no file) to a project package.json (see
 * isLaunchManifestAt) is refused, or null: it may change in every way but one, declaring what
 * npx would run as tacit (a bin named tacit, or a bin directory) differently than it did. A
 * declaration removed, or a file npm cannot parse, runs nothing. Past LAUNCH_MANIFEST_LIMIT_BYTES
 * nothing is parsed: a write that would leave more is refused, and over a file that long
 * (not the script's: its writes cannot make one), only a write that declares no such program goes through.
 */
export function tacitBinChange(before: ManifestText, after: string | typeof TOO_LONG): string | null {
  if (after === TOO_LONG || Buffer.byteLength(after) > LAUNCH_MANIFEST_LIMIT_BYTES) {
    return (
      `it would leave this project's package.json larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, and tacit reads all of it to check that it ` +
      "declares no program `npx tacit` would run. Keep package.json small, and put data in files of its own"
    );
  }
  const declared = tacitBinOf(after);
  if (declared === null) return null;
  if (before === TOO_LONG) {
    return (
      `this project's package.json is larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, more than tacit reads, so whether it already declares ` +
      "a program named tacit (in bin, or through directories.bin) is unknown, and the new content declares one. Write it without bin and directories.bin"
    );
  }
  if (declared === tacitBinOf(before)) return null;
  return (
    "it would make this project's package.json declare a program named tacit (in bin, or through directories.bin), which `npx tacit` " +
    "runs instead of the installed tacit, with the operator's authority. Change other fields, or leave bin and directories.bin as they are"
  );
}

/** Where a file becomes a program npx runs as tacit because a project package.json names its directory in directories.bin. */
function binDirectoryEntries(cwd: string): string[] {
  return binDirectoryDeclarations(cwd).map(({ entry }) => entry);
}

/** Each package.json there and above that names a bin directory, with the file named tacit there (see binDirectoryEntries). */
function binDirectoryDeclarations(cwd: string): Array<{ manifest: string; entry: string }> {
  const entries: Array<{ manifest: string; entry: string }> = [];
  for (const dir of thisAndAbove(cwd)) {
    // As a write reads it (readManifest): a regular file only, opened without blocking, at most
    // LAUNCH_MANIFEST_LIMIT_BYTES. readFileSync waited forever for a writer on a package.json
    // that a script had made a FIFO, and read a link to /dev/zero without end, on the host's
    // main thread (so the time limit never came), at the script's first write. One past the
    // limit is not parsed (a script's writes cannot make one: see tacitBinChange).
    const text = readManifest(path.join(dir, "package.json"));
    const manifest = manifestOf(text === TOO_LONG ? null : text);
    const binDir = manifest === null ? null : binDirectoryOf(manifest);
    if (typeof binDir === "string") entries.push({ manifest: path.join(dir, "package.json"), entry: path.join(path.resolve(dir, binDir), COMMAND) });
  }
  return entries;
}

/**
 * The package.json whose `directories.bin` makes `file` (absolute: a path a script would change)
 * the program `npx tacit` runs in that package's directory, in whatever directory; or null.
 * binDirectoryEntries covers the start directory and those above it only, but `npx tacit` started
 * in another one (a package of a monorepo) runs the file named tacit in the bin directory its own
 * package.json names. Shown with npm 11: with sub/package.json naming `"directories": { "bin":
 * "tools" }`, a script's sub/tools/tacit (not even executable) ran at `npx --offline tacit` in sub/.
 * In lower case: on a case-insensitive file system `TACIT` is that file.
 */
export function tacitBinDirectoryManifestOf(file: string): string | null {
  if (path.basename(file).toLowerCase() !== COMMAND) return null;
  const named = path.resolve(file).toLowerCase();
  return binDirectoryDeclarations(path.dirname(file)).find(({ entry }) => entry.toLowerCase() === named)?.manifest ?? null;
}

/**
 * Where `npx tacit` started in `cwd` finds the program it runs before any installed tacit:
 * node_modules/.bin/tacit in that directory and each one above it (npm's libnpmexec,
 * localFileExists, walks up to the file-system root), absolute, as named.
 */
export function npxTacitPrograms(cwd: string = process.cwd()): string[] {
  return thisAndAbove(cwd).map((dir) => path.join(dir, "node_modules", ".bin", COMMAND));
}

/**
 * Whether `file` (absolute) is node_modules/.bin/tacit of some directory: what `npx tacit` started
 * there (or below) runs. In lower case: on a case-insensitive file system `.BIN/Tacit` is that file.
 */
export function isNpxTacitProgram(file: string): boolean {
  const bin = path.dirname(file);
  return path.basename(file).toLowerCase() === COMMAND && path.basename(bin).toLowerCase() === ".bin" && path.basename(path.dirname(bin)).toLowerCase() === "node_modules";
}

/**
 * The MCP clients' settings files that may start tacit, absolute, each with the directory a
 * relative path in it is taken from: the project's (from `cwd`, and OpenCode's from each
 * directory up) and the user's (from the home directory). client-settings.ts reads them.
 */
export function clientSettingsFiles(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): Array<{ file: string; base: string }> {
  const home = env.HOME ? path.resolve(env.HOME) : os.homedir();
  const start = path.resolve(cwd);
  const files: Array<{ file: string; base: string }> = [];
  for (const file of CLIENT_PROJECT_FILES) if (!CLIENT_PROJECT_DIRECTORIES.has(file)) files.push({ file: path.join(start, file), base: start });
  for (const dir of thisAndAbove(start)) for (const file of ["opencode.json", "opencode.jsonc"]) files.push({ file: path.join(dir, file), base: dir });
  for (const file of CLIENT_USER_FILES) if (!CLIENT_PROJECT_DIRECTORIES.has(file)) files.push({ file: path.join(home, file), base: home });
  return files;
}

/**
 * Every place, absolute, as named and where it really leads: npm's, yarn's and OpenCode's
 * project configuration in the start directory and each directory above it, npm's user and
 * global configuration, npm's own package, the MCP clients' settings, and a file named tacit
 * in a bin directory a project package.json names (directories.bin).
 */
export function tacitLaunchFiles(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): string[] {
  const places: string[] = [];
  for (const dir of thisAndAbove(cwd)) for (const file of ALONG_THE_WAY_UP) places.push(path.join(dir, file));
  const localPrefix = npmSetting(env, "local_prefix");
  if (localPrefix) places.push(path.join(path.resolve(localPrefix), ".npmrc"));
  const home = env.HOME ? path.resolve(env.HOME) : os.homedir();
  const userConfig = npmSetting(env, "userconfig");
  places.push(userConfig ? path.resolve(userConfig) : path.join(home, ".npmrc"));
  // The global configuration is under npm's prefix (by default the Node install's).
  const nodePrefix = path.dirname(path.dirname(path.resolve(process.execPath)));
  const prefix = path.resolve(npmSetting(env, "prefix") ?? nodePrefix);
  const globalConfig = npmSetting(env, "globalconfig");
  places.push(globalConfig ? path.resolve(globalConfig) : path.join(prefix, "etc", "npmrc"));
  // And the npm installed with that Node, which runs `npx tacit` (its builtin npmrc included):
  // with a Node under your home (nvm) and the home a root, a script that rewrote it would run
  // at the next npx, as a replaced Node would (paths.ts).
  for (const node of [process.execPath, resolveRealOrSelf(path.resolve(process.execPath))]) {
    places.push(path.join(path.dirname(path.dirname(path.resolve(node))), "lib", "node_modules", "npm"));
  }
  for (const file of CLIENT_PROJECT_FILES) places.push(path.resolve(cwd, file));
  for (const file of CLIENT_USER_FILES) places.push(path.join(home, file));
  places.push(...binDirectoryEntries(cwd));
  return namedAndReal(places);
}
