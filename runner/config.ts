// The policy and limits tacit runs under: a JSON file (--config) and flags, validated with
// zod. Unknown keys and bad values are errors that name the key; nothing is ignored.

import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { readNamedFile, UnreadableFileError } from "./bounded-file.js";
import { closestName } from "./closest-name.js";
import { cleanedPattern, DEFAULT_CLASSIFIED_PATHS } from "./fs/classified-paths.js";
import { isWithin, resolveRealOrSelf } from "./fs/containment.js";
import { DEFAULT_ANSWER_LIMIT_CHARS, type LlmConfig } from "./llm/chat-client.js";
import { hostPatternText } from "./net/host-policy.js";
import { absentRuleBases, type PolicyConfig, policySchema } from "./approval/policy.js";

import {
  DEFAULT_CLASSIFIED_STORE_LIMIT_BYTES,
  DEFAULT_CLASSIFIED_VALUES_LIMIT,
  DEFAULT_EXEC_OUTPUT_LIMIT_BYTES,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_EVALUATIONS,
  DEFAULT_SESSION_RECORDING_LIMIT_BYTES,
  DEFAULT_MEMORY_LIMIT_MB,
  DEFAULT_OUTPUT_LIMIT_BYTES,
  DEFAULT_RESPONSE_LIMIT_BYTES,
  DEFAULT_TIMEOUT_MS,
  defaultSessionsMemoryLimitMb,
  defaultEvaluatorsMemoryLimitMb,
  MAX_SESSIONS_MEMORY_LIMIT_MB,
  MAX_TIMER_MS,
  MIN_MEMORY_LIMIT_MB,
  PURE_IDLE_STOP_MS,
  PURE_JOB_TIMEOUT_MS,
} from "./limits.js";
import { onFirstUse } from "./on-first-use.js";
import { shellOnlyPart } from "./shell-only.js";
import { PARSED_ONCE } from "./parse-once.js";

// What a bad llm setting should be instead. None of them quotes the value given: an API key put
// in the wrong place (or a URL carrying one) would be printed to a log an agent may read.
const LLM_BASE_URL_FIX =
  "give an http(s) URL like https://api.example.com/v1, with no user name, password, query or fragment (the value is not shown: " +
  "it may hold a key; put the key in apiKey, --llm-api-key or TACIT_LLM_API_KEY)";
const LLM_API_KEY_FIX = "give the key as a non-empty string (the value is not shown), or leave it out and set TACIT_LLM_API_KEY";

/** An http(s) URL with no credentials, query or fragment: what chat() may name in an error. */
function isPlainHttpUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (url.protocol === "https:" || url.protocol === "http:") && url.username === "" && url.password === "" && url.search === "" && url.hash === "" && !text.includes("?") && !text.includes("#");
}

/** A key name as an error may show it: unusual names (a value typed as a key) are not repeated. */
const shownKey = (key: string): string => (/^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/.test(key) ? key : "(a key not shown: it is no identifier, and may be a value typed in the wrong place)");

/** What scanJson found wrong with a text: where it stops being JSON, or a key repeated in one object. */
type JsonFault = { kind: "not JSON"; at: number } | { kind: "repeated key"; key: string; at: number };

/** An offset in `text` as "line L, column C". */
function placeOf(text: string, at: number): string {
  const before = text.slice(0, at).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/**
 * Where `text` stops being JSON, or the first key an object holds twice (JSON.parse keeps the
 * last in silence: a second "policy" with no rules dropped the rules above it, and each action
 * they asked about ran unasked); null if neither is found. Its offsets name a place without
 * quoting the text (V8's own message quotes the text around the error, which may be an API key).
 */
function scanJson(text: string): JsonFault | null {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const space = (): void => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const literal = (word: string): void => {
    if (text.startsWith(word, i)) i += word.length;
    else fail();
  };
  /** Reads a string; returns where it began. */
  const string = (): number => {
    if (text[i] !== '"') fail();
    const start = i;
    for (i++; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return start;
      }
      if (c < 0x20) fail();
      if (c === 0x5c) {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? "x")) fail();
      }
    }
    return fail();
  };
  /** The first key found twice in one object: the fault, unless the text is no JSON at all. */
  let repeated: JsonFault | null = null;
  /** The keys of each object open, innermost last (its entry is null for an array). */
  const keys: Array<Set<string> | null> = [];
  /** Reads an object's key and its colon, noting the first key an object holds twice. */
  const key = (): void => {
    const start = string();
    const name = JSON.parse(text.slice(start, i)) as string;
    const seen = keys.at(-1)!;
    if (seen.has(name)) repeated ??= { kind: "repeated key", key: name, at: start };
    seen.add(name);
    space();
    literal(":");
  };
  const number = (): void => {
    const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (match === null || match[0] === "") fail();
    i += match![0].length;
  };
  // Iterative, with a stack of what is open, so a deep file cannot overflow the host's stack.
  const open: Array<"{" | "["> = [];
  const value = (): void => {
    for (;;) {
      space();
      const c = text[i];
      if (c === "{" || c === "[") {
        open.push(c);
        keys.push(c === "{" ? new Set() : null);
        i++;
        space();
        if (text[i] === (c === "{" ? "}" : "]")) {
          open.pop();
          keys.pop();
          i++;
          return;
        }
        if (c === "{") key();
        continue; // The first member's value.
      }
      if (c === '"') string();
      else if (c === "t") literal("true");
      else if (c === "f") literal("false");
      else if (c === "n") literal("null");
      else number();
      return;
    }
  };
  try {
    value();
    for (;;) {
      space();
      const top = open.at(-1);
      if (top === undefined) break;
      if (text[i] === ",") {
        i++;
        if (top === "{") {
          space();
          key();
        }
        value();
      } else if (text[i] === (top === "{" ? "}" : "]")) {
        open.pop();
        keys.pop();
        i++;
      } else fail();
    }
    if (i < text.length) fail();
    return repeated;
  } catch (at) {
    return typeof at === "number" ? { kind: "not JSON", at } : null;
  }
}

const TIMER_TOO_LONG = `at most ${MAX_TIMER_MS} ms (about 24.8 days: a longer timer fires at once)`;

/**
 * A limit that config may only lower: its default (`shown` in words) is also its most, which
 * bounds what one `what` holds of tacit's memory (or what a client reads of it).
 */
function lowerOnly(limit: number, shown: string, what: string) {
  return z
    .number()
    .int()
    .positive()
    .max(limit, `at most ${limit} (${shown}, the default): it can only lower how much of ${what} tacit keeps`)
    .optional();
}

/**
 * Each key of libraryConfig with the builder of its schema. Schemas are made on first use
 * (on-first-use.ts): zod's were some milliseconds at the start of every run, which parses
 * only the flags given (parseFlagConfig).
 */
const LIBRARY_FIELDS = {
  allowedRoots: () =>
    z
      .array(z.string().min(1))
      .min(1, "names no directory: give at least one (without the setting, scripts may open the working directory)")
      .optional(),
  classifiedPaths: () => z.array(z.string()).optional(),
  classifiedWrite: () => z.boolean().optional(),
  secureOutput: () => z.string().min(1).optional(),
  commandPermissions: () =>
    z
      .array(
        z
          .string()
          .min(1)
          .regex(/^[^/]*$/, "a command pattern is a name glob, without \"/\"")
          .superRefine((pattern, context) => {
            if (!/\s/.test(pattern)) return;
            const name = pattern.trim().split(/\s+/)[0] ?? "";
            context.addIssue({
              code: "custom",
              message:
                `"${pattern}" is a command line, and a command pattern is a command's name (a glob with *): give ${JSON.stringify(name)}; ` +
                "to be asked about some of its arguments, add a policy rule with \"args\" (see the README's approval tiers)",
            });
          }),
      )
      .optional(),
  strictMode: () => z.boolean().optional(),
  confineCommands: () => z.boolean().optional(),
  // Only lower: the host holds each stream whole until the command ends.
  execOutputLimitBytes: () => lowerOnly(DEFAULT_EXEC_OUTPUT_LIMIT_BYTES, "8 MiB", "a command's stdout and stderr"),
  networkPermissions: () => z.array(hostPatternText).optional(),
  llm: () =>
    z
      .object({
        baseUrl: z.string().refine(isPlainHttpUrl, LLM_BASE_URL_FIX).optional(),
        apiKey: z.string({ error: LLM_API_KEY_FIX }).min(1, LLM_API_KEY_FIX).optional(),
        model: z.string({ error: "give the model's name as a string, like \"gpt-4o-mini\"" }).min(1, "give the model's name, like \"gpt-4o-mini\"").optional(),
        // Only lower: the default bounds what one answer holds of the host's memory.
        answerLimitChars: lowerOnly(DEFAULT_ANSWER_LIMIT_CHARS, "8 MiB of characters", "one answer"),
      })
      .strict()
      .optional(),
  networkResponseLimitBytes: () => z.number().int().positive().optional(),
  networkTimeoutMs: () => z.number().int().positive().max(MAX_TIMER_MS, TIMER_TOO_LONG).optional(),
};

/** `fields`, each built: an object schema's shape. */
function builtShape<F extends Record<string, () => z.ZodType>>(fields: F): { [K in keyof F]: ReturnType<F[K]> } {
  return Object.fromEntries(Object.entries(fields).map(([key, build]) => [key, build()])) as { [K in keyof F]: ReturnType<F[K]> };
}

const libraryConfigSchema = onFirstUse(() => z.object(builtShape(LIBRARY_FIELDS)).strict());

/** Each top-level key of a config file with the builder of its schema (see LIBRARY_FIELDS). */
const CONFIG_FIELDS = {
  executionTimeoutMs: () => z.number().int().positive().max(MAX_TIMER_MS, TIMER_TOO_LONG).optional(),
  memoryLimitMb: () => z.number().int().min(MIN_MEMORY_LIMIT_MB).max(65_536).optional(),
  typeCheck: () => z.boolean().optional(),
  quiet: () => z.boolean().optional(),
  recordPath: () => z.string().min(1).optional(),
  sessionEnabled: () => z.boolean().optional(),
  maxSessions: () => z.number().int().positive().optional(),
  sessionsMemoryLimitMb: () => z.number().int().min(MIN_MEMORY_LIMIT_MB).max(MAX_SESSIONS_MEMORY_LIMIT_MB).optional(),
  evaluatorsMemoryLimitMb: () => z.number().int().min(MIN_MEMORY_LIMIT_MB).max(MAX_SESSIONS_MEMORY_LIMIT_MB).optional(),
  maxConcurrentEvaluations: () => z.number().int().positive().max(1024).optional(),
  sessionRecordingLimitBytes: () => z.number().int().positive().optional(),
  sessionIdleMs: () => z.number().int().positive().max(MAX_TIMER_MS, TIMER_TOO_LONG).optional(),
  pureIdleStopMs: () => z.number().int().positive().max(MAX_TIMER_MS, TIMER_TOO_LONG).optional(),
  pureJobTimeoutMs: () => z.number().int().positive().max(MAX_TIMER_MS, TIMER_TOO_LONG).optional(),
  classifiedStoreLimitBytes: () => z.number().int().positive().optional(),
  classifiedValuesLimit: () => z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  // Only lower: an MCP client reads at most 10 MiB of one message, and the host holds the output.
  outputLimitBytes: () => lowerOnly(DEFAULT_OUTPUT_LIMIT_BYTES, "10 MiB", "what a script prints"),
  auditLog: () => z.string().min(1).optional(),
  requireNetworkNamespace: () => z.boolean().optional(),
  networkNamespace: () => z.boolean().optional(),
  policy: () => policySchema().optional(),
  libraryConfig: () => libraryConfigSchema().optional(),
};

const configFileSchema = onFirstUse(() => z.object(builtShape(CONFIG_FIELDS)).strict());

const LIBRARY_KEYS = Object.keys(LIBRARY_FIELDS);
const CONFIG_KEYS = Object.keys(CONFIG_FIELDS);

export type ConfigFile = z.infer<ReturnType<typeof configFileSchema>>;
export type LibraryConfigFile = z.infer<ReturnType<typeof libraryConfigSchema>>;

/** What scripts may touch. Defaults fail closed. */
export interface LibraryConfig {
  /** Real paths of the directories file-system scopes may be opened in (default: the working directory). */
  allowedRoots: string[];
  /** Gitignore-like patterns of paths that hold secrets. */
  classifiedPaths: string[];
  /** Whether writes (and mkdir, delete) may touch classified paths. */
  classifiedWrite: boolean;
  /** The secure output sink (absolute), or null: classified plaintext printed goes only there. */
  secureOutput: string | null;
  /** Command name globs (`*` only) that may run; null when unset. */
  commandPermissions: string[] | null;
  /** With commandPermissions unset: anything but a denylist of risky commands may run. */
  strictMode: boolean;
  /** Each allowed command runs in a confined view of the file system (exec/confinement.ts): writable only in the roots, secrets covered. */
  confineCommands: boolean;
  /** How much of each of a command's streams its result keeps; past it, the rest is dropped with a marker. */
  execOutputLimitBytes: number;
  /** Host patterns scripts may reach; null when unset (nothing is reachable). */
  networkPermissions: string[] | null;
  networkResponseLimitBytes: number;
  networkTimeoutMs: number;
  /** The operator's model for chat(), when fully configured; see `warnings` otherwise. */
  llm: LlmConfig | null;
}

/** The settings an evaluation runs with, every default filled in. */
export interface RunnerConfig {
  /** Things the operator should know (printed unless quiet); never contain a secret. */
  warnings: string[];
  /** The --config file (absolute), or null: scripts are refused it (it may hold the LLM key). */
  configFile: string | null;
  /** Wall-clock limit for one evaluation; the sandbox is killed (SIGKILL) when it passes. */
  executionTimeoutMs: number;
  /** V8 heap limit; the resident-memory watchdog allows this plus a fixed allowance. */
  memoryLimitMb: number;
  typeCheck: boolean;
  quiet: boolean;
  /** --record: the directory executed code and results are appended to; null when off. */
  recordPath: string | null;
  /** tacit serve: whether the REPL session tools exist, how many may live, how long idle. */
  sessionEnabled: boolean;
  maxSessions: number;
  sessionIdleMs: number;
  /** How long a pure evaluator waits with no job before it is replaced by a fresh one (see PURE_IDLE_STOP_MS). */
  pureIdleStopMs: number;
  /** How long one map/flatMap function may run in the pure evaluator (see PURE_JOB_TIMEOUT_MS). */
  pureJobTimeoutMs: number;
  /**
   * The resident memory, in MiB, all sessions' sandboxes may hold together (see sessions-memory.ts);
   * default: a quarter of the machine's memory, at least one sandbox's limit (defaultSessionsMemoryLimitMb).
   */
  sessionsMemoryLimitMb: number;
  /**
   * The resident memory, in MiB, all pure evaluators of tacit serve (its sessions' and its one-shot calls') may hold together (see
   * EvaluatorsMemory in sessions-memory.ts); default: an eighth of the machine's memory, at
   * least one evaluator's limit (defaultEvaluatorsMemoryLimitMb).
   */
  evaluatorsMemoryLimitMb: number;
  /** tacit serve: execute_typescript calls running at once; more wait their turn. */
  maxConcurrentEvaluations: number;
  /** Replies a session keeps to rebuild its sandbox after a failed snippet (see session-recording.ts). */
  sessionRecordingLimitBytes: number;
  /** Classified plaintext one evaluation or session may hold in the host (see classified/budget.ts). */
  classifiedStoreLimitBytes: number;
  /** Classified values one evaluation or session may hold (see classified/store.ts). */
  classifiedValuesLimit: number;
  /** How much of what a script (or a snippet) prints is kept; past it, the rest is dropped with a marker. */
  outputLimitBytes: number;
  /** --audit-log: the signed, hash-chained log of evaluations and action decisions; null when off. */
  auditLog: string | null;
  /**
   * --require-network-namespace: run, serve and repl refuse to start where the sandbox cannot have a
   * network namespace of its own (network-namespace.ts), rather than warn and run in the host's.
   */
  requireNetworkNamespace: boolean;
  /**
   * false (--no-network-namespace): sandboxes, pure evaluators and type checkers run in the host's
   * network namespace, knowingly: no namespace is made, and nothing is said about it. Default true.
   */
  networkNamespace: boolean;
  /** Which actions need a person (approval tiers); null: the allowlists alone decide. */
  policy: PolicyConfig | null;
  /** --yes: every approval a policy asks for is answered yes, for this run (never remembered). */
  assumeYes: boolean;
  library: LibraryConfig;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * What an unknown key most likely stands for: a key of libraryConfig written at the top level
 * (or the other way round), or a misspelling of a key known where it stands; null if neither.
 */
function meantKey(key: string, at: readonly PropertyKey[], known: readonly string[]): string | null {
  const shown = shownKey(key);
  if (shown !== key) {
    // A known key with a space or an invisible character in it ("classifiedPaths\u200b", pasted):
    // the key is not shown, but the name it reads as is one tacit knows, so naming that shows nothing.
    const visible = key.replace(/[^\x21-\x7e]/g, "");
    if (visible === key || visible.length === 0) return null;
    const reads = known.includes(visible) ? visible : closestName(visible, known);
    return reads === null ? null : `it reads as "${reads}" but holds a space or an invisible character: retype it`;
  }
  const libraryKeys = LIBRARY_KEYS;
  const topKeys = CONFIG_KEYS;
  if (at.length === 0 && libraryKeys.includes(key)) return `it belongs in "libraryConfig": { "libraryConfig": { "${key}": … } }`;
  if (at.length === 1 && at[0] === "libraryConfig" && topKeys.includes(key)) return `it belongs at the top level, beside "libraryConfig"`;
  const spelt = closestName(key, known);
  if (spelt !== null) return `did you mean "${spelt}"?`;
  const elsewhere = at.length === 0 ? closestName(key, libraryKeys) : null;
  return elsewhere === null ? null : `did you mean "libraryConfig.${elsewhere}"?`;
}

function describeIssues(source: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code === "unrecognized_keys") {
        const where = issue.path.join(".");
        const known =
          issue.path[0] === "policy" && issue.path.length === 1 ? ["rules"]
          : issue.path[0] === "policy" ? ["action", "tier", "path", "command", "args", "host", "method", "beyondAllowlist"]
          : issue.path[0] === "libraryConfig" && issue.path[1] === "llm" ? ["baseUrl", "apiKey", "model", "answerLimitChars"]
          : issue.path[0] === "libraryConfig" ? LIBRARY_KEYS
          : CONFIG_KEYS;
        const keys = issue.keys.map((k) => {
          const meant = meantKey(k, issue.path, known);
          return `"${where ? `${where}.` : ""}${shownKey(k)}"${meant === null ? "" : ` (${meant})`}`;
        });
        return `${source}: unknown key${issue.keys.length > 1 ? "s" : ""} ${keys.join(", ")} (known keys${where ? ` in ${where}` : ""}: ${known.join(", ")})`;
      }
      const key = issue.path.join(".") || "(top level)";
      return `${source}: ${key}: ${issue.message}`;
    })
    .join("\n");
}

export function parseConfigFile(source: string, text: string): ConfigFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not V8's message: it quotes the text around the error, which may be the LLM API key.
    // An editor's byte order mark, which JSON does not allow: "fix the JSON at line 1, column 1" showed nothing wrong there.
    if (text.startsWith("\uFEFF")) {
      throw new ConfigError(`${source}: not valid JSON: it starts with a byte order mark (U+FEFF, invisible in most editors), which JSON does not allow; save the file as UTF-8 without a BOM`);
    }
    const fault = scanJson(text);
    const place = fault?.kind === "not JSON" ? placeOf(text, fault.at) : null;
    throw new ConfigError(
      `${source}: not valid JSON${place ? ` at ${place}` : ""} (the text there is not shown: the file may hold the LLM API key); ` +
        "fix the JSON there (strings in double quotes, no trailing commas, no comments)",
    );
  }
  // A key written twice in one object: JSON.parse kept the last and dropped the first, unseen.
  const repeated = scanJson(text);
  if (repeated?.kind === "repeated key") {
    throw new ConfigError(
      `${source}: the key "${shownKey(repeated.key)}" appears twice in one object (the second at ${placeOf(text, repeated.at)}); ` +
        "JSON keeps only the last, so what the first says would be ignored without a word. Keep one, with everything it should say",
    );
  }
  const parsed = configFileSchema().safeParse(json, PARSED_ONCE);
  if (!parsed.success) throw new ConfigError(describeIssues(source, parsed.error));
  return parsed.data;
}

/** A config file holds settings, a policy and perhaps a key: far less than this. */
const CONFIG_LIMIT_BYTES = 1024 * 1024;

export function loadConfigFile(file: string): ConfigFile {
  const cannot = (why: string): ConfigError => new ConfigError(`--config ${file}: cannot read it: ${why}`);
  let text: Buffer | null;
  try {
    text = readNamedFile(file, CONFIG_LIMIT_BYTES);
  } catch (error) {
    if (error instanceof UnreadableFileError) throw cannot(error.message);
    throw error;
  }
  if (text === null) throw cannot(`it is larger than ${CONFIG_LIMIT_BYTES / 1024} KiB, far more than any tacit config; is this the right file?`);
  return parseConfigFile(file, text.toString("utf8"));
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Refuses a path or pattern holding what only a shell expands (see shellOnlyPart), saying what to give instead. */
function refuseShellOnlyParts(values: readonly string[] | undefined, key: string, flag: string, kind: "path" | "pattern", cwd: string, env: NodeJS.ProcessEnv): void {
  for (const value of values ?? []) {
    const found = shellOnlyPart(value, env);
    if (found === null) continue;
    const meaning = kind === "path" ? `it would name ${path.resolve(cwd, value)}` : `it would match only a name holding "${found.part}" itself`;
    throw new ConfigError(
      `${key} (${flag}): "${value}" holds ${found.part}, which tacit does not expand (${found.why}), so ${meaning}. ` +
        `${kind === "path" ? "Give the absolute path" : "Write the path out"}${found.expanded === null ? "" : ` (${found.expanded})`}` +
        (kind === "path" ? `, or "./${value}" if you do mean that` : ""),
    );
  }
}

function resolveRoots(roots: readonly string[], cwd: string): string[] {
  return roots.map((root) => {
    const absolute = path.resolve(cwd, root);
    try {
      const real = realpathSync.native(absolute);
      if (!statSync(real).isDirectory()) throw new Error("not a directory");
      return real;
    } catch {
      throw new ConfigError(`allowedRoots: "${root}" (${absolute}) is not an existing directory`);
    }
  });
}

/**
 * The key as fetch sends it: a header's value loses the spaces, tabs and line breaks around it. Kept
 * as given (a paste with a trailing space or newline), the key the model's server got, and may
 * echo, and a file holding it, were none of what the scrubs look for, and reached a script whole.
 * A character no header can carry is refused here, where no script sees it: fetch's own error
 * named it and where it stands in the key.
 */
function sendableKey(given: string | undefined): string | undefined {
  const key = given?.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (key !== undefined && /[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u00ff]/.test(key)) {
    throw new ConfigError(
      "llm apiKey: the LLM API key holds a line break, another control character or a character beyond Latin-1, which no HTTP header can carry " +
        "(a stray character pasted with it?); the value is not shown: give the key as its provider shows it",
    );
  }
  return key;
}

/** Whether what is sent to `url` is out of sight on the way: https, or http to this machine (its loopback). */
function reachedUnseen(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol !== "http:") return true;
  return hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** process.env's key as first read (tacit then blanks it where /proc shows it: hidden-key.ts). */
let processEnvironmentKey: { value: string | undefined } | null = null;

export function environmentKey(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env !== process.env) return env.TACIT_LLM_API_KEY || undefined;
  processEnvironmentKey ??= { value: process.env.TACIT_LLM_API_KEY || undefined };
  return processEnvironmentKey.value;
}

/** Flags win over the file; the file wins over defaults. */
export function resolveConfig(
  file: ConfigFile,
  flags: ConfigFile,
  cwd: string = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
  configFile: string | null = null,
): RunnerConfig {
  const pick = <K extends keyof ConfigFile>(key: K): ConfigFile[K] => flags[key] ?? file[key];
  const pickLibrary = <K extends keyof LibraryConfigFile>(key: K): LibraryConfigFile[K] =>
    flags.libraryConfig?.[key] ?? file.libraryConfig?.[key];
  const warnings: string[] = [];
  // The key may also come from the environment, which no script can reach (the sandbox's is
  // empty) and which is not a file in the project.
  const givenLlmParts = {
    ...definedOnly({ apiKey: environmentKey(env) }),
    ...file.libraryConfig?.llm,
    ...definedOnly(flags.libraryConfig?.llm ?? {}),
  };
  const llmParts = { ...givenLlmParts, apiKey: sendableKey(givenLlmParts.apiKey) };
  let llm: LlmConfig | null = null;
  if (llmParts.baseUrl || llmParts.apiKey || llmParts.model) {
    const missing = (["baseUrl", "apiKey", "model"] as const).filter((key) => !llmParts[key]);
    if (missing.length === 0) {
      llm = {
        baseUrl: llmParts.baseUrl!,
        apiKey: llmParts.apiKey!,
        model: llmParts.model!,
        ...(llmParts.answerLimitChars !== undefined ? { answerLimitChars: llmParts.answerLimitChars } : {}),
      };
      if (!reachedUnseen(llm.baseUrl)) {
        warnings.push(
          "llm baseUrl is plain http:// to a host other than this machine: the API key and every question chat() asks, " +
            "classified ones too, cross the network unencrypted, for anyone on the way to read; use https://",
        );
      }
    } else {
      const how = { baseUrl: "--llm-base-url", apiKey: "--llm-api-key (or TACIT_LLM_API_KEY)", model: "--llm-model" };
      warnings.push(
        `llm config is incomplete (missing ${missing.join(", ")}), so it is ignored and chat() is unavailable; set ` +
          `${missing.map((key) => how[key]).join(" and ")} (config libraryConfig.llm.${missing.join(", libraryConfig.llm.")})`,
      );
    }
  }
  refuseShellOnlyParts(pickLibrary("allowedRoots"), "libraryConfig.allowedRoots", "--allowed-roots", "path", cwd, env);
  refuseShellOnlyParts(pickLibrary("classifiedPaths"), "libraryConfig.classifiedPaths", "--classified-paths", "pattern", cwd, env);
  refuseShellOnlyParts([pickLibrary("secureOutput") ?? ""], "libraryConfig.secureOutput", "--secure-output", "path", cwd, env);
  refuseShellOnlyParts([pick("auditLog") ?? ""], "auditLog", "--audit-log", "path", cwd, env);
  refuseShellOnlyParts([pick("recordPath") ?? ""], "recordPath", "--record", "path", cwd, env);
  const allowedRoots = resolveRoots(pickLibrary("allowedRoots") ?? [cwd], cwd);
  const secureOutput = ((file) => (file ? path.resolve(cwd, file) : null))(pickLibrary("secureOutput"));
  const auditLog = ((file) => (file ? path.resolve(cwd, file) : null))(pick("auditLog"));
  const recordPath = ((dir) => (dir ? path.resolve(cwd, dir) : null))(pick("recordPath"));
  // tacit refuses scripts its own files (fs/protected-paths.ts), but only while it knows them.
  const configPath = configFile ? path.resolve(cwd, configFile) : null;
  const keyInConfigFile = file.libraryConfig?.llm?.apiKey !== undefined;
  for (const [owned, what, flag] of [
    [keyInConfigFile ? configPath : null, "the config file holding the LLM API key", "--config"],
    [secureOutput, "the secure output file", "--secure-output"],
    [auditLog, "the audit log", "--audit-log"],
    [recordPath, "the record directory", "--record"],
  ] as const) {
    if (owned && allowedRoots.some((root) => isWithin(resolveRealOrSelf(owned), root))) {
      warnings.push(
        `${what} (${owned}) lies inside the allowed roots: scripts are refused it while ${flag} names it (and in later runs ` +
          `with this tacit home, which remember it), but a run without ${flag} elsewhere (another machine, a container, another ` +
          `TACIT_HOME) would let scripts read or change it; keep it outside the allowed roots` +
          (flag === "--config" ? " (or give the key in the environment, TACIT_LLM_API_KEY)" : ""),
      );
    }
  }
  // --strict only decides when no command list is given; beside one it did nothing, in silence.
  const commandPermissions = pickLibrary("commandPermissions") ?? null;
  const strictMode = pickLibrary("strictMode") ?? false;
  if (strictMode && commandPermissions !== null) {
    warnings.push(
      `--strict (config libraryConfig.strictMode) has no effect beside --command-permissions (config libraryConfig.commandPermissions): ` +
        `the command list wins, and only the commands it names may run (${commandPermissions.join(", ") || "none"}). Drop --strict to ` +
        `silence this, or drop the command list to use the strict denylist instead`,
    );
  }
  const givenClassified = pickLibrary("classifiedPaths");
  const classifiedPaths = givenClassified ?? [...DEFAULT_CLASSIFIED_PATHS];
  // A list of patterns replaces the defaults; one given to add a pattern took them all away in
  // silence (.env read as plain text). Said, with what to do; the list stays as given.
  if (givenClassified) {
    const given = new Set(givenClassified.map(cleanedPattern));
    const dropped = DEFAULT_CLASSIFIED_PATHS.filter((pattern) => !given.has(pattern));
    if (dropped.length > 0) {
      warnings.push(
        `classifiedPaths replaces the default patterns, so these are not classified in this run (scripts can read them as ` +
          `plain text): ${dropped.join(", ")}; add them to the list to keep them classified`,
      );
    }
  }
  // The flag's list replaces the file's too (flags win over the file): a pattern the config file
  // classified and the flag does not name was read as plain text, and the warning above named only
  // the defaults. Said, with what to do; the list stays as given.
  const fileClassified = file.libraryConfig?.classifiedPaths;
  const flagClassified = flags.libraryConfig?.classifiedPaths;
  if (fileClassified && flagClassified) {
    const given = new Set(flagClassified.map(cleanedPattern));
    const dropped = [...new Set(fileClassified.map(cleanedPattern))].filter((pattern) => pattern !== "" && !given.has(pattern));
    if (dropped.length > 0) {
      warnings.push(
        `--classified-paths replaces the config file's libraryConfig.classifiedPaths, so these patterns of the file are not classified in ` +
          `this run (scripts can read them as plain text): ${dropped.join(", ")}; add them to the flag's list to keep them, or leave the flag out`,
      );
    }
  }
  // Gitignore-like, but a relative pattern with "/" is anchored at the filesystem root (the
  // design's rule): "config/credentials.json" does not match ./config/credentials.json.
  for (const pattern of classifiedPaths) {
    const trimmed = cleanedPattern(pattern);
    // gitignore's "!" takes a path back out of a list; here a pattern is a glob of its own, and
    // "!.env.example" beside ".env*" classified every path but .env.example, the script included.
    if (trimmed.startsWith("!")) {
      warnings.push(
        `classified path "${pattern}" classifies every path but what "${trimmed.slice(1)}" matches: each pattern classifies on its own, and a ` +
          `"!" does not take a path back out of the others as in .gitignore. To leave a name out, write a pattern that does not match it ` +
          `(".env.[!e]*" classifies every .env.* but .env.example), or "\\!" for a name that begins with "!"`,
      );
      continue;
    }
    if (trimmed.includes("/") && !trimmed.startsWith("/") && !trimmed.startsWith("**/")) {
      warnings.push(
        `classified path "${pattern}" is anchored at the filesystem root (it matches /${trimmed}, not a path under the ` +
          `working directory); write "**/${trimmed}" to match it under any directory, or give the absolute path`,
      );
    }
  }
  const requireNetworkNamespace = pick("requireNetworkNamespace") ?? false;
  const networkNamespace = pick("networkNamespace") ?? true;
  if (requireNetworkNamespace && !networkNamespace) {
    const said = (key: "requireNetworkNamespace" | "networkNamespace", flag: string, value: boolean): string =>
      flags[key] !== undefined ? flag : `config ${key}: ${value}`;
    throw new ConfigError(
      `${said("networkNamespace", "--no-network-namespace", false)} and ${said("requireNetworkNamespace", "--require-network-namespace", true)} ` +
        "contradict each other: the first runs the sandbox in the host's network namespace, the second refuses to run unless it has one " +
        "of its own. Give one of them: --require-network-namespace where the host can make network namespaces, " +
        "--no-network-namespace where it cannot and you accept Deno's permission checks alone keeping scripts off the network",
    );
  }
  const policy = pick("policy") ?? null;
  warnings.push(...absentRuleBases(policy, cwd));
  return {
    warnings,
    configFile: configPath,
    executionTimeoutMs: pick("executionTimeoutMs") ?? DEFAULT_TIMEOUT_MS,
    memoryLimitMb: pick("memoryLimitMb") ?? DEFAULT_MEMORY_LIMIT_MB,
    typeCheck: pick("typeCheck") ?? true,
    quiet: pick("quiet") ?? false,
    recordPath,
    sessionEnabled: pick("sessionEnabled") ?? true,
    maxSessions: pick("maxSessions") ?? 100,
    sessionIdleMs: pick("sessionIdleMs") ?? 30 * 60_000,
    pureIdleStopMs: pick("pureIdleStopMs") ?? PURE_IDLE_STOP_MS,
    pureJobTimeoutMs: pick("pureJobTimeoutMs") ?? PURE_JOB_TIMEOUT_MS,
    sessionsMemoryLimitMb: pick("sessionsMemoryLimitMb") ?? defaultSessionsMemoryLimitMb(pick("memoryLimitMb") ?? DEFAULT_MEMORY_LIMIT_MB),
    evaluatorsMemoryLimitMb: pick("evaluatorsMemoryLimitMb") ?? defaultEvaluatorsMemoryLimitMb(),
    maxConcurrentEvaluations: pick("maxConcurrentEvaluations") ?? DEFAULT_MAX_CONCURRENT_EVALUATIONS,
    sessionRecordingLimitBytes: pick("sessionRecordingLimitBytes") ?? DEFAULT_SESSION_RECORDING_LIMIT_BYTES,
    classifiedStoreLimitBytes: pick("classifiedStoreLimitBytes") ?? DEFAULT_CLASSIFIED_STORE_LIMIT_BYTES,
    classifiedValuesLimit: pick("classifiedValuesLimit") ?? DEFAULT_CLASSIFIED_VALUES_LIMIT,
    outputLimitBytes: pick("outputLimitBytes") ?? DEFAULT_OUTPUT_LIMIT_BYTES,
    auditLog,
    requireNetworkNamespace,
    networkNamespace,
    policy,
    assumeYes: false,
    library: {
      allowedRoots,
      classifiedPaths,
      classifiedWrite: pickLibrary("classifiedWrite") ?? true,
      secureOutput,
      commandPermissions,
      strictMode,
      confineCommands: pickLibrary("confineCommands") ?? false,
      execOutputLimitBytes: pickLibrary("execOutputLimitBytes") ?? DEFAULT_EXEC_OUTPUT_LIMIT_BYTES,
      networkPermissions: pickLibrary("networkPermissions") ?? null,
      networkResponseLimitBytes: pickLibrary("networkResponseLimitBytes") ?? DEFAULT_RESPONSE_LIMIT_BYTES,
      networkTimeoutMs: pickLibrary("networkTimeoutMs") ?? DEFAULT_HTTP_TIMEOUT_MS,
      llm,
    },
  };
}

/**
 * Validates flag values with the file's schema for each key given, so the messages match. Only
 * the keys given are built: a `tacit run --no-check` makes one boolean's schema, not the whole
 * file's. A key the file does not know is refused as the file's would be.
 */
export function parseFlagConfig(flags: Record<string, unknown>): ConfigFile {
  const defined = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const given = (Object.keys(CONFIG_FIELDS) as Array<keyof typeof CONFIG_FIELDS>).filter((key) => key in defined);
  const schema = z.object(Object.fromEntries(given.map((key) => [key, CONFIG_FIELDS[key]()]))).strict();
  const parsed = schema.safeParse(defined, PARSED_ONCE);
  if (!parsed.success) throw new ConfigError(describeIssues("flags", parsed.error));
  // Each key present was parsed by the file's own schema for it, and no other key was allowed.
  return parsed.data as ConfigFile;
}

export const defaultConfig: RunnerConfig = resolveConfig({}, {});
