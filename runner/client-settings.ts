// The files an MCP client's settings name for tacit: the settings that start tacit (.mcp.json,
// .vscode/mcp.json, opencode.json, ~/.claude.json, …; launch-files.ts lists them) give its
// arguments and environment, so they name tacit's own files for the runs they start: the
// --config file (which may hold the LLM key, and names a sink, an audit log and a record
// directory of its own), the --secure-output file (plaintext secrets), the --audit-log file,
// the --record directory, and TACIT_HOME (remembered approvals, the audit signing key). A
// script of another run, started without those flags (`tacit run` in the same project), was
// refused only the files of its own run's config, so it could read the sink's secrets or the
// config's key, plant approvals in that home, or forge that audit log. fs/protected-paths.ts
// refuses scripts the files found here as it refuses the current run's.
//
// Reading is bounded (SETTINGS_LIMIT_BYTES parsed per file, WALK_LIMIT objects, NAMED_LIMIT
// names), comments and trailing commas (VS Code's and OpenCode's JSONC) are tolerated, and a file
// that still does not parse, has more objects, or is longer than the limit fails safe: every flag
// and variable of tacit's found anywhere in its strings (in a longer file, a chunk at a time, up
// to OVERSIZED_LIMIT_BYTES) is taken as naming a file, whichever server it is for.

import { closeSync, constants, openSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import os from "node:os";
import path from "node:path";
import { type FileVersion, readBoundedFile } from "./bounded-file.js";
import { clientSettingsFiles } from "./launch-files.js";
import { shellWords } from "./shell-word.js";

/** What a settings file names, and what to call it in a refusal. */
export interface NamedFile {
  path: string;
  what: string;
}

/** The most of one settings file read (~/.claude.json keeps a history and can be megabytes). */
export const SETTINGS_LIMIT_BYTES = 8 * 1024 * 1024;
/** The most of a --config file named there read, to find the files it names in turn. */
const CONFIG_LIMIT_BYTES = 1024 * 1024;
/** The most objects and arrays looked at in one file; past it, the file is judged as one that does not parse. */
const WALK_LIMIT = 500_000;
/** The most strings looked at in a file that does not parse. */
const STRINGS_LIMIT = 1_000_000;
/** The most files taken from one settings file. */
const NAMED_LIMIT = 1000;

/**
 * What a record directory is called in refusals, each kind of protected path it is one of beginning
 * so (see cli/script-refusal.ts, which runs scripts that lie in one).
 */
export const RECORD_DIRECTORY_WHAT = "the record directory (--record)";

/** tacit's flags that name one of its own files, and what each file is. */
const FILE_FLAGS: Record<string, string> = {
  "--config": "tacit's config file (--config, which may hold the LLM API key)",
  "--secure-output": "the secure output file (--secure-output, which holds plaintext)",
  "--audit-log": "the audit log (--audit-log)",
  "--record": RECORD_DIRECTORY_WHAT,
};
/** Keys in a config file that name tacit's files, with the flag each stands for. */
const CONFIG_KEYS: Record<string, string> = { secureOutput: "--secure-output", auditLog: "--audit-log", recordPath: "--record" };
const HOME_WHAT = "tacit's home (remembered approvals, the audit signing key and the audit logs' anchors)";

/** Whether a command-line word runs tacit: tacit, tacit@1.2, @scope/tacit, …/bin/tacit.js, an image …/tacit:tag. */
export function isTacitWord(word: string): boolean {
  return /(?:^|[/@\\])tacit(?:\.[cm]?js)?(?:@[^/\\]*)?(?::[\w.-]+)?$/i.test(word);
}

/** A JSON string literal as a pattern (linear: its alternatives never overlap). */
const STRING = String.raw`"(?:[^"\\\n]|\\.)*"`;

/** The text parsed as JSON, or as JSONC (comments and trailing commas, as VS Code and OpenCode allow); undefined when neither. */
export function parseJsonc(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Try it as JSONC.
  }
  const stripped = text
    .replace(new RegExp(String.raw`(${STRING})|//[^\n]*|/\*[\s\S]*?(?:\*/|$)`, "g"), (_, literal?: string) => literal ?? " ")
    .replace(new RegExp(String.raw`(${STRING})|,(\s*[}\]])`, "g"), (_, literal?: string, close?: string) => literal ?? close!);
  try {
    return JSON.parse(stripped);
  } catch {
    return undefined;
  }
}

/** The string literals in `text`, in order and decoded, at most STRINGS_LIMIT: what a file that does not parse is judged by. */
export function stringsIn(text: string): string[] {
  const strings: string[] = [];
  for (const match of text.matchAll(new RegExp(STRING, "g"))) {
    if (strings.length >= STRINGS_LIMIT) break;
    try {
      strings.push(JSON.parse(match[0]) as string);
    } catch {
      strings.push(match[0].slice(1, -1));
    }
  }
  return strings;
}

/** How much of a settings file longer than SETTINGS_LIMIT_BYTES is searched, and how far after each name found. */
const OVERSIZED_LIMIT_BYTES = 512 * 1024 * 1024;
const AFTER_NAME_CHARS = 16 * 1024;
/** The strings in a settings file that name tacit's files or key, as a flag or variable of tacit's names them. */
const TACIT_NAME = /"(?:--config|--secure-output|--audit-log|--record|--llm-api-key)(?:=(?:[^"\\\n]|\\.)*)?"|"(?:TACIT_HOME|XDG_CONFIG_HOME|HOME|TACIT_LLM_API_KEY)"/g;

/**
 * In a settings file longer than SETTINGS_LIMIT_BYTES (~/.claude.json keeps a history), which is
 * not parsed: each of tacit's flags and variables found in its strings and the string after it,
 * read a chunk at a time (up to OVERSIZED_LIMIT_BYTES), so that a tacit server named past the
 * first megabytes still counts.
 */
function oversizedStrings(file: string): string[] {
  const found: string[] = [];
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return found;
  }
  try {
    const decoder = new StringDecoder("utf8");
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    let carry = "";
    for (let total = 0; total < OVERSIZED_LIMIT_BYTES && found.length < STRINGS_LIMIT; ) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      const atEnd = n === 0;
      total += n;
      const text = carry + (atEnd ? decoder.end() : decoder.write(chunk.subarray(0, n)));
      // A name whose next string may lie in the next chunk waits for it (the tail is carried over).
      const settled = atEnd ? text.length : Math.max(0, text.length - AFTER_NAME_CHARS);
      for (const match of text.matchAll(TACIT_NAME)) {
        if (match.index >= settled) break;
        found.push(...stringsIn(text.slice(match.index, match.index + AFTER_NAME_CHARS)).slice(0, 2));
      }
      if (atEnd) break;
      carry = text.slice(settled);
    }
  } catch {
    // What was found so far counts.
  } finally {
    closeSync(fd);
  }
  return found;
}

/** A server entry of tacit's: its command-line words, environment and working directory. */
interface TacitEntry {
  words: string[];
  env: Record<string, string>;
  cwd: string | null;
}

const stringsOf = (value: unknown): string[] =>
  typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/**
 * Every object in `json` that starts a server running tacit (a `command` with `args`, or an
 * OpenCode command array, in which a word runs tacit, or one under a key naming tacit), found
 * whatever the file's layout (mcpServers, servers, mcp, mcp.servers, projects.<dir>.mcpServers).
 */
function tacitEntries(json: unknown): TacitEntry[] | null {
  const entries: TacitEntry[] = [];
  const stack: Array<{ value: unknown; key: string }> = [{ value: json, key: "" }];
  for (let seen = 0; stack.length > 0; seen++) {
    if (seen >= WALK_LIMIT) return null;
    const { value, key } = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === "object" && item !== null) stack.push({ value: item, key: "" });
      continue;
    }
    const record = value as Record<string, unknown>;
    // A command given as one string ("npx tacit serve --config 'my dir/x.json'") is read word by word too, as a shell would.
    const words = [...stringsOf(record.command), ...stringsOf(record.args)].flatMap((word) => (/\s/.test(word.trim()) ? [word, ...shellWords(word).map(({ text }) => text)] : [word]));
    if (words.length > 0 && (words.some(isTacitWord) || /tacit/i.test(key))) {
      entries.push({ words, env: { ...stringRecord(record.environment), ...stringRecord(record.env) }, cwd: typeof record.cwd === "string" ? record.cwd : null });
    }
    for (const [childKey, child] of Object.entries(record)) if (typeof child === "object" && child !== null) stack.push({ value: child, key: childKey });
  }
  return entries;
}

/** `value` with the variables clients expand (${workspaceFolder}, ${userHome}, ${env:X}, ${X}, ${X:-d}, $X, ~) expanded. */
function expand(value: string, base: string, home: string, env: NodeJS.ProcessEnv): string {
  const variable = (name: string, fallback?: string): string => {
    if (name === "workspaceFolder" || name === "workspaceRoot" || name === "cwd") return base;
    if (name === "userHome") return home;
    const fromEnv = env[name.startsWith("env:") ? name.slice(4) : name];
    return fromEnv ?? fallback ?? "";
  };
  const expanded = value
    .replace(/\$\{([^}:]+(?::[^}-][^}]*)?)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => variable(name, fallback))
    .replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => variable(name));
  return expanded === "~" ? home : expanded.startsWith("~/") ? path.join(home, expanded.slice(2)) : expanded;
}

/** The files tacit's flags and variables among `words` (and `env`) name; relative ones against each of `bases`. */
function filesOf(words: readonly string[], env: Record<string, string>, bases: readonly string[], home: string, processEnv: NodeJS.ProcessEnv, source: string): NamedFile[] {
  const named: NamedFile[] = [];
  const add = (value: string | undefined, what: string): void => {
    if (!value) return;
    const expanded = expand(value, bases[0]!, home, processEnv);
    if (!expanded) return;
    for (const base of bases) named.push({ path: path.resolve(base, expanded), what: `${what}, named for tacit in ${source}` });
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    for (const [flag, what] of Object.entries(FILE_FLAGS)) {
      if (word === flag) add(words[i + 1], what);
      else if (word.startsWith(`${flag}=`)) add(word.slice(flag.length + 1), what);
    }
  }
  for (const [name, value] of Object.entries(env)) {
    // tacit's home: TACIT_HOME, else XDG_CONFIG_HOME/tacit, else HOME/.config/tacit (tacit-home.ts).
    if (name === "TACIT_HOME") add(value, HOME_WHAT);
    else if (name === "XDG_CONFIG_HOME" && !env.TACIT_HOME) add(path.join(value, "tacit"), HOME_WHAT);
    else if (name === "HOME" && !env.TACIT_HOME && !env.XDG_CONFIG_HOME) add(path.join(value, ".config", "tacit"), HOME_WHAT);
  }
  // The audit log's lock is tacit's too, and a --config names files of its own.
  for (const file of [...named]) {
    if (file.what.startsWith(FILE_FLAGS["--audit-log"]!)) named.push({ path: `${file.path}.lock`, what: `the audit log's lock, named for tacit in ${source}` });
    if (file.what.startsWith(FILE_FLAGS["--config"]!)) for (const inConfig of filesOfConfig(file.path, bases, home, processEnv)) named.push(inConfig);
  }
  return named;
}

/** The files a config file names (secureOutput, auditLog, recordPath), relative to where tacit is started. */
function filesOfConfig(configFile: string, bases: readonly string[], home: string, processEnv: NodeJS.ProcessEnv): NamedFile[] {
  const read = readBoundedFile(configFile, CONFIG_LIMIT_BYTES);
  if (read === null || read.unchanged) return [];
  const words: string[] = [];
  const parsed = read.complete ? parseJsonc(read.text) : undefined;
  if (typeof parsed === "object" && parsed !== null) {
    const top = parsed as Record<string, unknown>;
    const library = (typeof top.libraryConfig === "object" && top.libraryConfig !== null ? top.libraryConfig : {}) as Record<string, unknown>;
    for (const [key, flag] of Object.entries(CONFIG_KEYS)) {
      const value = key === "secureOutput" ? library[key] : top[key];
      if (typeof value === "string") words.push(flag, value);
    }
  } else {
    // Fail safe: any of those keys followed by a string.
    const strings = stringsIn(read.text);
    for (let i = 0; i + 1 < strings.length; i++) if (Object.hasOwn(CONFIG_KEYS, strings[i]!)) words.push(CONFIG_KEYS[strings[i]!]!, strings[i + 1]!);
  }
  return filesOf(words, {}, bases, home, processEnv, `the config file ${configFile}`).filter((file) => !file.what.startsWith(FILE_FLAGS["--config"]!));
}

interface Cached {
  /** Where it was read from and for: the same file means other things from another place. */
  context: string;
  version: FileVersion;
  files: NamedFile[];
}
const cache = new Map<string, Cached>();

/**
 * What one settings file names for tacit, cached while the file (its device, inode, size and
 * times) and the config files it names stay as they are: scripts cannot change these files
 * (launch-files.ts), so a change is the user's or a client's, and it changes the times.
 */
function namedIn(file: string, base: string, cwd: string, home: string, env: NodeJS.ProcessEnv): NamedFile[] {
  const context = `${base}\0${cwd}\0${home}`;
  const cached = cache.get(file);
  // Settings are read for every evaluation, and ~/.claude.json keeps a history of megabytes: one judged already is not read again.
  const read = readBoundedFile(file, SETTINGS_LIMIT_BYTES, (version) => cached !== undefined && cached.context === context && cached.version === version);
  if (read === null) return [];
  if (read.unchanged) return cached!.files;
  const bases = [...new Set([base, cwd])];
  const parsed = read.complete ? parseJsonc(read.text) : undefined;
  const entries = parsed === undefined ? null : tacitEntries(parsed);
  const named: NamedFile[] = [];
  if (entries !== null) {
    for (const entry of entries) {
      const entryBases = entry.cwd === null ? bases : bases.map((b) => path.resolve(b, expand(entry.cwd!, b, home, env)));
      for (const found of filesOf(entry.words, entry.env, [...new Set([...entryBases, ...bases])], home, env, file)) named.push(found);
      // The settings themselves, when they hold tacit's LLM key: another run's script could read it there.
      if (entry.env.TACIT_LLM_API_KEY || entry.words.some((w) => w === "--llm-api-key" || w.startsWith("--llm-api-key="))) {
        named.push({ path: file, what: `an MCP client's settings holding tacit's LLM API key (${file})` });
      }
    }
  } else {
    // Fail safe: a file that does not parse (or is longer than tacit parses) is judged by its
    // strings alone: every flag of tacit's followed by a value, every TACIT_HOME and key.
    const strings = read.complete ? stringsIn(read.text) : oversizedStrings(file);
    const found: Record<string, string> = {};
    for (let i = 0; i + 1 < strings.length; i++) if (strings[i] === "TACIT_HOME" || strings[i] === "XDG_CONFIG_HOME" || strings[i] === "HOME") found[strings[i]!] = strings[i + 1]!;
    for (const flagged of filesOf(strings, found, bases, home, env, `${file} (which tacit could not parse, so every flag in it counts)`)) named.push(flagged);
    if (strings.some((s) => s === "TACIT_LLM_API_KEY" || s.startsWith("--llm-api-key"))) named.push({ path: file, what: `an MCP client's settings that may hold tacit's LLM API key (${file})` });
  }
  const files = named.slice(0, NAMED_LIMIT);
  // Not cached: what the config files it names say may change without the settings changing.
  if (!files.some((f) => f.what.startsWith(FILE_FLAGS["--config"]!))) cache.set(file, { context, version: read.version, files });
  return files;
}

/**
 * The files that the MCP clients' settings tacit knows (the project's, from `cwd` up, and the
 * user's) name for tacit's servers, absolute, with what each is.
 */
export function filesNamedByClientSettings(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): NamedFile[] {
  const home = env.HOME ? path.resolve(env.HOME) : os.homedir();
  const named: NamedFile[] = [];
  for (const { file, base } of clientSettingsFiles(cwd, env)) for (const one of namedIn(file, base, path.resolve(cwd), home, env)) named.push(one);
  return named;
}
