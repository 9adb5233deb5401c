// tacit's own files as earlier runs on this machine were given them: the --config file (the
// policy, maybe the LLM key), the --secure-output file (plaintext secrets), the --record
// directory (every script run and what it printed) and the --audit-log file (the signed record of
// what each run did; its writer's lock is kept in tacit's home, see audit/log.ts), this last in a list of its own (own-audit-logs.json, see AUDIT_LOGS_FILE_NAME). A run refuses its scripts the files of
// its own flags and of the MCP clients' settings (fs/protected-paths.ts), but a file named only
// on a command line was an ordinary file to a run started without it: a security review's
// script, in a `tacit run` with the default root, rewrote the project's tacit.json to permit
// `touch`, and the person's next `tacit run --config tacit.json` ran it; the same script could
// have read the plaintext in the sink an earlier `--secure-output secure.log` filled.
//
// So each run remembers its files in tacit's home (own-files.json: path, kind, when last used),
// and every run refuses them to its scripts as it refuses its own. The file is read as the
// approvals are (audit/own-file.ts: a regular file of the user's, nobody else may write it, in
// directories nobody else may write), written whole and renamed, under a lock, and holds the
// MAX_FILES most recently used (a file whose directory is gone is dropped when the list is
// written). What it does not cover: a run with another tacit home (another machine, a container,
// TACIT_HOME set otherwise) and a run before the first that named the file.

import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ownFileProblemText, readOwnFile, replaceOwnFile } from "./audit/own-file.js";
import { RECORD_DIRECTORY_WHAT } from "./client-settings.js";
import type { RunnerConfig } from "./config.js";
import { FileLock } from "./file-lock.js";
import { namedAndReal } from "./fs/containment.js";
import { onFirstUse } from "./on-first-use.js";
import { PARSED_ONCE } from "./parse-once.js";
import { ensureTacitHome, tacitHome, tacitHomes } from "./tacit-home.js";

export type RememberedKind = "config" | "secure-output" | "record" | "audit-log";

export interface RememberedFile {
  path: string;
  kind: RememberedKind;
  usedAt: string;
}

const FILE_NAME = "own-files.json";
/**
 * The audit logs, in a list of their own: a tacit from before they were remembered reads
 * own-files.json with a schema that knows no "audit-log" kind, and would reject the whole list
 * (refusing none of the files it names) had they been added there.
 */
const AUDIT_LOGS_FILE_NAME = "own-audit-logs.json";
/** Each list, and the kinds it holds. */
const LISTS: ReadonlyArray<{ name: string; kinds: readonly RememberedKind[] }> = [
  { name: FILE_NAME, kinds: ["config", "secure-output", "record"] },
  { name: AUDIT_LOGS_FILE_NAME, kinds: ["audit-log"] },
];
/** The most files remembered: the least recently used beyond it are forgotten. */
export const MAX_FILES = 256;
/** A file used again is written again (its usedAt) at most this often, so most runs only read. */
const REFRESH_MS = 24 * 60 * 60 * 1000;
/** How long a change waits for another process's change to finish. */
const LOCK_WAIT_MS = 5000;

const KINDS = ["config", "secure-output", "record", "audit-log"] as const satisfies readonly RememberedKind[];

function buildSchema() {
  return z.strictObject({
    version: z.literal(1),
    files: z.array(z.strictObject({ path: z.string().min(1), kind: z.enum(KINDS), usedAt: z.string().datetime() })),
  });
}
const schema = onFirstUse(buildSchema);

/** What each kind is, and why no script may touch it, for the refusal. */
const DESCRIPTIONS: Record<RememberedKind, { what: string; why: string }> = {
  config: {
    what: "tacit's config file (--config), given to an earlier tacit run on this machine",
    why: "a run given it takes what scripts may do from it (and the LLM API key it may hold), so a script that changed it would widen the next such run",
  },
  "secure-output": {
    what: "the secure output file (--secure-output, which holds plaintext) of an earlier tacit run on this machine",
    why: "it holds the plaintext of classified values that run printed",
  },
  record: {
    what: `${RECORD_DIRECTORY_WHAT} of an earlier tacit run on this machine`,
    why: "it holds every script that run ran and what it printed",
  },
  "audit-log": {
    what: "the audit log (--audit-log) of an earlier tacit run on this machine",
    why:
      "it is the signed record of what that run's scripts did and were allowed, which a script that appended to it could make the next " +
      "writer refuse to continue (its writer's lock is kept in tacit's home; FILE.lock beside it, where older versions of tacit take theirs, is refused the same)",
  },
};

export class RememberedFilesError extends Error {
  override name = "RememberedFilesError";
}

export class RememberedFiles {
  readonly file: string;
  private readonly home: string;

  constructor(
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly now: () => number = Date.now,
    fileName: string = FILE_NAME,
  ) {
    this.home = tacitHome(env);
    this.file = path.join(this.home, fileName);
  }

  /** Every file remembered; none when there is no such file yet. Throws RememberedFilesError when it cannot be trusted. */
  all(): RememberedFile[] {
    return this.read(null).files;
  }

  /**
   * The list as its file holds it now, and that text. `before`: the list as read earlier, whose files are
   * taken again, unparsed, when the text is the same (the schema's first parse of a long list is most of
   * reading it: see remember).
   */
  private read(before: ListAsRead | null): ListAsRead {
    const text = readOwnFile(
      this.file,
      0o022,
      (problem) => new RememberedFilesError(ownFileProblemText(`the list of tacit's own files ${this.file}`, this.file, problem, "the files it names are not refused to scripts")),
      this.home,
    );
    if (text === null) return { text, files: [] };
    if (before !== null && before.text === text) return before;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new RememberedFilesError(`${this.file} is not valid JSON, so the files it names are not refused to scripts; remove it (the next run with --config, --secure-output, --record or --audit-log writes it anew)`);
    }
    const parsed = schema().safeParse(json, PARSED_ONCE);
    if (!parsed.success) throw new RememberedFilesError(`${this.file} is not tacit's list of its own files, so the files it names are not refused to scripts; remove it`);
    return { text, files: parsed.data.files };
  }

  /** Adds `files` (or notes that they were used now), keeping the MAX_FILES most recently used. */
  remember(files: ReadonlyArray<{ path: string; kind: RememberedKind }>): void {
    if (files.length === 0) return;
    const fresh = (known: readonly RememberedFile[]) =>
      files.every((f) => known.some((k) => k.path === f.path && k.kind === f.kind && this.now() - Date.parse(k.usedAt) < REFRESH_MS));
    // Read before the lock (most runs only read), and again under it, where the text is compared and parsed only if
    // another process changed it meanwhile: parsed twice, a list of 256 logs (one a day, rotated) cost each run that
    // added one a second pass of the schema over every entry.
    const seen = versionOf(this.file);
    const before = this.read(null);
    if (fresh(before.files)) {
      // And this run's protected paths take it from here (rememberedOwnFiles), as rememberedIn would have read it.
      if (seen !== null && before.text !== null) remembered(this.file, seen.version, before.files);
      return;
    }
    ensureTacitHome(this.env);
    const lockFile = `${this.file}.lock`;
    const attempt = FileLock.acquireWaiting(lockFile, LOCK_WAIT_MS);
    if (!attempt.ok) {
      throw new RememberedFilesError(`${this.file} is being changed by another process (lock file ${lockFile}); if no tacit is running, delete ${lockFile}`);
    }
    try {
      const known = this.read(before).files;
      if (fresh(known)) return;
      const usedAt = new Date(this.now()).toISOString();
      const same = (a: { path: string; kind: string }, b: { path: string; kind: string }) => a.path === b.path && a.kind === b.kind;
      // A file whose directory is gone too (a removed project, a temporary directory) is forgotten: nothing is there to refuse.
      const kept = known.filter((k) => !files.some((f) => same(f, k)) && (existsSync(k.path) || existsSync(path.dirname(k.path))));
      const added = files.filter((f, i) => files.findIndex((g) => same(f, g)) === i).map((f) => ({ path: f.path, kind: f.kind, usedAt }));
      const all = [...kept, ...added].sort((a, b) => Date.parse(b.usedAt) - Date.parse(a.usedAt)).slice(0, MAX_FILES);
      const saved = this.save(all);
      // This run's protected paths read the list next (rememberedOwnFiles): taken from here, rather than read and
      // parsed a third time. Under the lock every writer of the list takes, the file there is the one just written,
      // unless its size says otherwise; then rememberedIn reads it.
      const written = versionOf(this.file);
      if (written !== null && written.size === Buffer.byteLength(saved)) remembered(this.file, written.version, all);
    } finally {
      attempt.lock.release();
    }
  }

  /** Writes the list; returns its text. */
  private save(files: RememberedFile[]): string {
    const text = JSON.stringify({ version: 1, files }, null, 2) + "\n";
    replaceOwnFile(this.file, text);
    return text;
  }
}

/** A list as read from its file: its text (null: no file) and its files. */
interface ListAsRead {
  text: string | null;
  files: RememberedFile[];
}

/** The files of `config` to remember: each as named and where it really is. */
function filesOf(config: RunnerConfig): Array<{ path: string; kind: RememberedKind }> {
  const named: Array<[string | null, RememberedKind]> = [
    [config.configFile, "config"],
    [config.library.secureOutput, "secure-output"],
    [config.recordPath, "record"],
    [config.auditLog, "audit-log"],
  ];
  return named.flatMap(([file, kind]) => (file === null ? [] : namedAndReal([file]).map((p) => ({ path: p, kind }))));
}

/**
 * Remembers this run's own files for later runs. Returns a warning when that failed (the
 * run goes on: its own files are refused to its own scripts whatever happens here), or null.
 */
export function rememberRunFiles(config: RunnerConfig, env: NodeJS.ProcessEnv = process.env): string | null {
  const files = filesOf(config);
  const problems: string[] = [];
  for (const list of LISTS) {
    const listed = files.filter((file) => list.kinds.includes(file.kind));
    if (listed.length === 0) continue;
    const store = new RememberedFiles(env, Date.now, list.name);
    try {
      store.remember(listed);
    } catch (error) {
      problems.push(`in ${store.file} (${(error as Error).message})`);
    }
  }
  if (problems.length === 0) return null;
  return (
    `tacit could not remember this run's --config, --secure-output, --record or --audit-log file ${problems.join("; ")}, ` +
    "so scripts of a later run started without them are not refused them: keep them outside the allowed roots"
  );
}

export interface ProtectedFile {
  path: string;
  what: string;
  refusal: string;
}

/** Each list as last read, by its file: read again only when it changed. */
const cached = new Map<string, { version: string; files: ProtectedFile[] }>();

/**
 * The files earlier runs remembered, as fs/protected-paths.ts refuses them (neither read nor
 * written): in this run's home and in every other place a run of this user keeps one
 * (tacitHomes: a run with TACIT_HOME set elsewhere still refuses what runs without it were
 * given). An unusable list protects nothing here: the run that remembers its files says so
 * (rememberRunFiles).
 */
export function rememberedOwnFiles(env: NodeJS.ProcessEnv = process.env): ProtectedFile[] {
  return tacitHomes(env).flatMap((home) => LISTS.flatMap((list) => rememberedIn(new RememberedFiles({ ...env, TACIT_HOME: home }, Date.now, list.name))));
}

function rememberedIn(store: RememberedFiles): ProtectedFile[] {
  const file = store.file;
  const found = versionOf(file);
  if (found === null) return [];
  const { version } = found;
  const known = cached.get(file);
  if (known !== undefined && known.version === version) return known.files;
  let files: RememberedFile[];
  try {
    files = store.all();
  } catch {
    return [];
  }
  const described = describe(files, file);
  cached.set(file, { version, files: described });
  return described;
}

/** What tells one state of the list's file from another (rememberedIn reads it again when it changes), with its size; null for no file. */
function versionOf(file: string): { version: string; size: number } | null {
  try {
    const stat = statSync(file);
    return { version: `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`, size: stat.size };
  } catch {
    return null;
  }
}

/** Keeps `files`, read from (or written to) `file` when it was at `version`, for rememberedIn, as it would have read them. */
function remembered(file: string, version: string, files: readonly RememberedFile[]): void {
  cached.set(file, { version, files: describe(files, file) });
}

/** The files of the list `file` as protected paths. */
function describe(files: readonly RememberedFile[], file: string): ProtectedFile[] {
  // An audit log's lock with it: the writer takes it beside the log (audit/log.ts, lockLog).
  return files.flatMap(({ path: where, kind }) =>
    (kind === "audit-log" ? [where, `${where}.lock`] : [where]).map((named) => ({
      path: named,
      what: named === where ? DESCRIPTIONS[kind].what : `the lock of ${DESCRIPTIONS[kind].what}`,
      refusal:
        `scripts can neither read nor write it, in any run on this machine: ${DESCRIPTIONS[kind].why}. tacit remembers it in ${file}; ` +
        "work with other files, and keep tacit's files outside the allowed roots (a file no run uses any more can be taken off that list)",
    })),
  );
}
