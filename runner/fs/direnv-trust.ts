// What direnv trusts other than an .envrc's allowed content (direnv.ts has what an .envrc loads).
//
// Its configuration's [whitelist] (direnv.toml, or config.toml where there is none, in
// $DIRENV_CONFIG or $XDG_CONFIG_HOME/direnv) trusts by path: every .envrc whose absolute path
// starts with a `prefix` entry (a string prefix, so "/code/a" also covers /code/a-b/.envrc), or
// is an `exact` entry (a directory stands for its .envrc), runs as it is, changed or new, and with
// `[global] load_dotenv = true` the .env beside it too. Shown with direnv 2.32.1 (Debian): under
// `prefix = ["…/code/proj"]` a never-allowed `touch PWNED` in proj/.envrc, and in proj-evil/.envrc,
// ran at the next `direnv export` (which direnv's shell hook runs at every prompt), and a .env
// there exported its PROMPT_COMMAND into the shell. So a script may not change nor create them.
//
// And direnv's records of what the user allowed ($XDG_DATA_HOME/direnv/allow: a file per allowed
// content, holding the .envrc's path): an allowed .envrc anywhere can load files above or beside
// its own directory (source_up, source_up_if_exists, `source_env ../..`), which direnv runs
// without asking (its manual: the other .envrc is not checked by the security framework). Shown
// with direnv 2.32.1: an allowed sub/.envrc holding `source_up` ran the never-allowed `touch
// PWNED` in the .envrc above it. direnv.ts protects what the .envrc files named here load,
// wherever they are, along with what the .envrc files above a changed path load. An .envrc once
// allowed counts whatever it holds now (the user may allow it again). Not covered: the loads
// from above of .envrc files below that are not recorded (never allowed yet, or trusted only by
// a prefix).
//
// A record names a content, not a version: direnv keeps the record of every content the user
// ever allowed at a path, and runs the .envrc without asking whenever it holds one of them again.
// What an earlier content loads is not protected while the .envrc holds another, so a script
// wrote the file it loads first, then the .envrc back: shown with direnv 2.32.1, `source_env_if_exists
// .envrc.local` allowed, then `export X=1` allowed, and a script that wrote `touch PWNED` into
// .envrc.local and then the first content back into .envrc had it run at the next `direnv export`.
// So a write may not leave an .envrc holding a content direnv has a record of (see envrcRecordChange).

import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ParsedFiles, readBoundedText, ReadDirectories } from "../bounded-file.js";
import { LAUNCH_MANIFEST_LIMIT_BYTES, TOO_LONG } from "../launch-files.js";
import { resolveRealOrSelf } from "./containment.js";
import { OperationMemo } from "./operation-memo.js";
import type { ProtectedPath } from "./protected-paths.js";
import { tomlAssignments, tomlStrings } from "./toml-lines.js";

/** direnv's configuration is a few lines; a larger one is judged by its first 64 KiB. */
const CONFIG_LIMIT_BYTES = 64 * 1024;
/** An allow record holds one path. */
const RECORD_LIMIT_BYTES = 4096;

interface DirenvSettings {
  /** `[whitelist] prefix`, each as written (~ expanded) and, where it differs, where it really leads ("" trusts every path, as in direnv). */
  prefixes: readonly string[];
  /** `[whitelist] exact`, as the files they trust. */
  exact: ReadonlySet<string>;
  loadDotenv: boolean;
  /** The file the whitelist was read from, for the refusal. */
  file: string;
}

const expandHome = (entry: string): string => entry.replace(/^~(?=\/|$)/, os.homedir());

function parseSettings(text: string, file: string): DirenvSettings {
  const prefixes: string[] = [];
  const exact = new Set<string>();
  let loadDotenv = false;
  for (const { key, value } of tomlAssignments(text)) {
    if (key === "global.load_dotenv") loadDotenv = /^true\b/.test(value);
    else if (key === "whitelist.prefix") {
      for (const entry of tomlStrings(value).map(expandHome)) {
        prefixes.push(entry);
        // A prefix through a link also covers where the link leads: the path the user cds by is not known here.
        const real = path.isAbsolute(entry) ? resolveRealOrSelf(entry) : entry;
        if (real !== entry) prefixes.push(real);
      }
    } else if (key === "whitelist.exact") {
      for (const entry of tomlStrings(value).map(expandHome)) {
        const files = /(?:^|\/)\.envrc?$/.test(entry) ? [entry] : [path.join(entry, ".envrc"), path.join(entry, ".env")];
        for (const one of files) {
          exact.add(path.resolve(one));
          exact.add(resolveRealOrSelf(path.resolve(one)));
        }
      }
    }
  }
  return { prefixes, exact, loadDotenv, file };
}

const settingsFiles = new ParsedFiles<DirenvSettings>(CONFIG_LIMIT_BYTES, parseSettings);

/** The configurations direnv may be reading: direnv.toml, or config.toml where there is none (both are read: either may be the one in use). */
function configFiles(env: NodeJS.ProcessEnv): string[] {
  const dir = env.DIRENV_CONFIG || path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config"), "direnv");
  return [path.join(dir, "direnv.toml"), path.join(dir, "config.toml")];
}

const settingsMemo = new OperationMemo<readonly DirenvSettings[]>();

function settings(env: NodeJS.ProcessEnv = process.env): readonly DirenvSettings[] {
  return settingsMemo.get("", () => configFiles(env).flatMap((file) => settingsFiles.get(file) ?? []));
}

/** The .envrc (or, with load_dotenv, .env) `changed` is (a path a script would change), where direnv's whitelist trusts it by path; or null. */
export function direnvTrustedChangeOf(changed: string): ProtectedPath | null {
  // In lower case: on a case-insensitive file system `.ENVRC` is direnv's .envrc.
  const name = path.basename(changed).toLowerCase();
  if (name !== ".envrc" && name !== ".env") return null;
  const trusting = settings().find(
    (config) => (name === ".envrc" || config.loadDotenv) && (config.exact.has(changed) || config.prefixes.some((prefix) => changed.startsWith(prefix))),
  );
  if (!trusting) return null;
  return {
    path: changed,
    what: `a file direnv runs without asking: its whitelist in ${trusting.file} trusts it by path`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor create it): direnv's shell hook loads it at the user's next prompt in that directory, " +
      "running its code or exporting its variables (PROMPT_COMMAND, PATH, …) into the user's shell, outside the sandbox, without " +
      "`direnv allow` (the whitelist trusts any content there). Ask the user to change it",
  };
}

/** The directory of direnv's allow records. */
const allowDir = (env: NodeJS.ProcessEnv): string => path.join(env.XDG_DATA_HOME || path.join(os.homedir(), ".local", "share"), "direnv", "allow");

/** The .envrc paths a records directory names, read again only when the directory changes. */
const records = new ReadDirectories<readonly string[]>((dir) => {
  const envrcs = new Set<string>();
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  for (const entry of entries) {
    const recorded = readBoundedText(path.join(dir, entry), RECORD_LIMIT_BYTES)?.split("\n")[0];
    // A record of a .env (load_dotenv) loads nothing further.
    if (recorded !== undefined && path.isAbsolute(recorded) && path.basename(recorded) === ".envrc") envrcs.add(recorded);
  }
  return [...envrcs];
});

/** The .envrc files direnv has records of, and a key that changes whenever the list may have. */
export interface RecordedEnvrcs {
  key: string;
  envrcs: readonly string[];
}

const recordedMemo = new OperationMemo<RecordedEnvrcs>();

/**
 * The .envrc files the user allowed at some time (direnv's records) and those an `exact` entry
 * trusts: what each loads is protected wherever it lies. Costs a stat of the records' directory
 * per operation; the records are read again only when it changed. direnv runs an .envrc only as
 * recorded: one changed since needs `direnv allow` again, which adds a record (so the key changes).
 */
export function recordedEnvrcs(env: NodeJS.ProcessEnv = process.env): RecordedEnvrcs {
  return recordedMemo.get("", () => {
    const exact = settings(env).flatMap((config) => [...config.exact].filter((file) => path.basename(file) === ".envrc"));
    const dir = allowDir(env);
    const read = records.get(dir);
    if (read === null) return { key: `none\0${exact.join("\0")}`, envrcs: exact };
    return {
      key: `${dir}\0${read.version}\0${exact.join("\0")}`,
      envrcs: exact.length === 0 ? read.value : [...new Set([...read.value, ...exact])],
    };
  });
}

/**
 * The paths direnv's records name that are the .envrc one of `files` is (a path as named and
 * where it leads): as recorded, or where a recorded path leads (the user's shell may stand in the
 * project through a link, and direnv records the path as the shell names it). Empty for any
 * other file, and for an .envrc the user never allowed.
 */
export function envrcRecordsAt(files: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  // In lower case: on a case-insensitive file system `.ENVRC` is direnv's .envrc.
  if (!files.some((file) => path.basename(file).toLowerCase() === ".envrc")) return [];
  const read = records.get(allowDir(env));
  if (read === null) return [];
  return read.value.filter((recorded) => files.includes(recorded) || files.includes(resolveRealOrSelf(recorded)));
}

/**
 * Why a write leaving `after` in an .envrc direnv has records of (`recorded`, from
 * envrcRecordsAt) is refused, or null: direnv names a record by the SHA-256 of the .envrc's
 * absolute path, a line break and its content, and runs an .envrc whose record is there without
 * asking. One that would leave more than LAUNCH_MANIFEST_LIMIT_BYTES is refused: it is hashed whole.
 */
export function envrcRecordChange(recorded: readonly string[], after: string | typeof TOO_LONG, env: NodeJS.ProcessEnv = process.env): string | null {
  if (recorded.length === 0) return null;
  if (after === TOO_LONG || Buffer.byteLength(after) > LAUNCH_MANIFEST_LIMIT_BYTES) {
    return `it would leave an .envrc the user allowed before larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, and tacit reads all of it to check that direnv has not allowed that content already`;
  }
  const dir = allowDir(env);
  const allowed = recorded.find((envrc) => existsSync(path.join(dir, createHash("sha256").update(`${envrc}\n`).update(after).digest("hex"))));
  if (allowed === undefined) return null;
  return (
    `it would leave this .envrc holding a content the user allowed before (direnv keeps a record of every content allowed at ${allowed}, ` +
    `in ${dir}): direnv's shell hook runs such an .envrc at the user's next prompt there without asking, with the user's full authority ` +
    "and outside the sandbox, and the files that content loads (source_env, dotenv, …) were not protected from this script while the " +
    ".envrc held something else. Write other content (direnv then blocks it until the user runs `direnv allow`), or ask the user to restore it"
  );
}
