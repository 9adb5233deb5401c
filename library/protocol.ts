// The host–sandbox protocol, defined once and imported by both sides: the host (runner/,
// Node) and the library stub (library/sandbox/, Deno). It must stay dependency-free, since
// the sandbox can load nothing but its own bootstrap files.
//
// Framing: one JSON value per line ("\n"-terminated). JSON.stringify never emits a raw
// newline, so a line is always a whole frame. The host treats anything else on the
// sandbox's stdout as hostile and ends the evaluation.

export const PROTOCOL_VERSION = 2;

/**
 * The longest line the host reads from the sandbox, in UTF-16 code units. Anything longer is
 * hostile: the stub never sends one, because it splits large output into chunks.
 */
export const MAX_SANDBOX_FRAME_CHARS = 4 * 1024 * 1024;

/** The longest line the sandbox reads from the host (piped input arrives in one reply). */
export const MAX_HOST_FRAME_CHARS = 256 * 1024 * 1024;

/** How a classified value shows to agent code, anywhere. */
export const CLASSIFIED_MASK = "Classified(***)";

/**
 * The pure evaluator's protocol: the host sends a job, the evaluator answers it. Before its
 * first job, once started, the evaluator answers PURE_READY_ID: a job's time limit is the
 * function's, and starts there, not with the process's start (a Deno boot, slow on a loaded machine).
 */
export const PURE_READY_ID = 0;

export interface PureJob {
  id: number;
  /** A function's source text, as the sandbox's fn.toString() gave it. */
  source: string;
  /** The classified value's plaintext (JSON data). */
  value: unknown;
  /** Captured values by name: plain data, or the index in `classifiedValues` of a Classified one's plaintext. */
  captures: Record<string, { plain: unknown } | { classified: number } | { undefined: true }>;
  /**
   * The plaintexts of the Classified values the function captures, each once however many
   * names capture it: written once per name, one value captured under 100 names made a job a
   * hundred times its size in the host's heap (see store.ts).
   */
  classifiedValues: unknown[];
  flat: boolean;
}
export type PureReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/**
 * The most text one Print action carries. JSON escaping can grow text at most sixfold
 * (a control character becomes \u00XX), so a chunk always fits in a sandbox frame.
 */
export const PRINT_CHUNK_CHARS = 512 * 1024;

/**
 * How long an action's strings may be, and how many items its lists and records may hold: the
 * host's frame schemas (runner/frames.ts) take no more, and end a sandbox that sends more (a
 * protocol violation, which its script cannot catch). The library refuses a call past them
 * first, catchably, naming the argument (library/sandbox/call-limits.ts). Characters are
 * UTF-16 code units, as zod and String.length count them.
 */
export const ACTION_LIMITS = {
  scopeChars: 256,
  pathChars: 4096,
  handleChars: 64,
  globChars: 4096,
  patternChars: 65_536,
  methodChars: 64,
  urlChars: 4 * 1024 * 1024,
  headers: 1000,
  headerNameChars: 1024,
  headerValueChars: 65_536,
  mapSourceChars: 1024 * 1024,
  captures: 10_000,
  hosts: 1000,
  hostChars: 1024,
  // Each command named is looked for on PATH (a stat a PATH entry) and matched against --strict's
  // families before the scope opens, on the host's main thread: 1,000 names of 250 characters held
  // it ~100 ms a scope, every other session of a tacit serve waiting. No block runs 100 programs.
  commands: 100,
  commandChars: 4096,
  args: 100_000,
} as const;

/**
 * How deep a value from the sandbox or the pure evaluator may nest. JSON.parse takes any depth
 * but the host's JSON.stringify recurses and throws past some thousands (measured here: 4,000
 * deep stringify, 8,000 do not), and the host stringifies these values again (a value's size,
 * a job for the pure evaluator, a classified value's text). Thrown there, out of any request,
 * it was an unhandled rejection that ended the host: a security review crashed `tacit run`
 * (and so `tacit serve`, every session with it) with a map function that sent back a value
 * nested 200,000 deep only for some plaintexts, reading a bit of the secret from the exit code.
 */
export const MAX_VALUE_DEPTH = 1000;

/**
 * The most parts one Print action carries: the host checks each part on its main thread, so
 * it counts them first (a frame of more is malformed), and the library sends a print of more
 * in several actions.
 */
export const MAX_PRINT_PARTS = 10_000;

/**
 * The longest line, in characters, that grep(), grepRecursive() and forEachLine() hold: each
 * reads a file a line at a time and holds the line whole, so a file of one line with no
 * newline was held whole (a 2 GB sparse file grew the host by 2.1 GB in one grep). Past it,
 * grep() and forEachLine() throw an error naming the file; grepRecursive() skips the file.
 */
export const LINE_LIMIT_CHARS = 16 * 1024 * 1024;

/** What to say when a line is longer than LINE_LIMIT_CHARS (after the file's name). */
export const LINE_TOO_LONG =
  `has a line longer than ${LINE_LIMIT_CHARS} characters, more than grep() and forEachLine() hold at once (they read a line at a time, ` +
  "holding each whole); read it whole with readBytes() if it is at most 32 MiB, or process it with a command (requestExecPermission)";

/**
 * The exit code of a sandbox whose script failed and whose failure could not be reported: the
 * library's describing or sending of it threw, since the script had replaced something it uses
 * (JSON.stringify, TextEncoder's encodeInto, a method of the built-ins' prototypes). Thrown on out
 * of the library's error listener, that error reached Deno, which printed it on stderr, where the
 * host looks for Deno's own reports: a script made tacit say, of a message it chose, that Deno had
 * panicked ("a bug in Deno, not a refusal by tacit"), or that its top-level await never settled.
 */
export const FAILURE_UNREPORTED_EXIT_CODE = 70;

/** The sandbox global that rewritten `import … from "tacit"` statements read. */
export const LIBRARY_GLOBAL = "__tacit";

/** What FileEntry's properties report, fetched fresh from the host. */
export interface FileInfo {
  path: string;
  name: string;
  exists: boolean;
  isDirectory: boolean;
  isClassified: boolean;
}

export interface GrepMatch {
  file: string;
  lineNumber: number;
  line: string;
}

/** Printed output: text, and classified values the host shows masked (plaintext: sink only). */
export type PrintPart = string | { classified: string };

/** A value captured by a map/flatMap function, as the sandbox sends it. */
/**
 * A captured value as the sandbox sends it: plain data, a Classified value's handle, or
 * `undefined`, which JSON cannot hold (sent as null, the function read null for it: `typeof`,
 * `=== undefined` and `String()` of it were other than in the script).
 */
export type Capture = { plain: unknown } | { classified: string } | { undefined: true };

/** The sandbox global a REPL snippet's final expression is passed to, to be shown. */
export const ECHO_GLOBAL = "__tacitEcho";

/**
 * The sandbox global a REPL snippet ends with: it publishes the snippet's top-level bindings as
 * accessors on the global object, so later snippets (separate modules) read and assign them
 * live. Takes name → [getter, setter or null for a constant].
 */
export const PUBLISH_GLOBAL = "__tacitPublish";

/** The sandbox global that rewritten map/flatMap calls use to attach their captured values. */
export const PURE_CAPTURES_GLOBAL = "__tacitPure";

/** An HTTP request as the sandbox asks for it. Secret values travel as classified handles. */
export interface HttpRequestFields {
  scope: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Header name → classified handle; the host sends the plaintext. */
  secretHeaders: Record<string, string>;
  body: string | null;
  /** A classified body's handle (httpPostClassified). */
  classifiedBody: string | null;
}

export interface HttpResponse {
  status: number;
  body: string;
}

/**
 * What httpGet, httpPost and httpPostClassified return an answer for (any other throws an
 * HttpStatusError): a 2xx status, as curl --fail and fetch's `ok` judge it.
 */
export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status <= 299;
}

/** Every effect agent code can ask for. The host decides each one. */
export type Action =
  | { kind: "Print"; parts: PrintPart[] }
  | { kind: "Classify"; value: unknown }
  | { kind: "ClassifiedMap"; handle: string; source: string; captures: Record<string, Capture>; flat: boolean }
  | { kind: "FsReadClassified"; scope: string; path: string }
  | { kind: "FsWriteClassified"; scope: string; path: string; handle: string }
  | { kind: "ReadInput" }
  | { kind: "FsOpenScope"; root: string }
  | { kind: "CloseScope"; scope: string }
  | { kind: "FsStat"; scope: string; path: string }
  | { kind: "FsSize"; scope: string; path: string }
  | { kind: "FsRead"; scope: string; path: string; as: "text" | "bytes" }
  | { kind: "FsReadChunk"; scope: string; path: string; offset: number }
  | { kind: "FsWrite"; scope: string; path: string; content: string; append: boolean }
  | { kind: "FsDelete"; scope: string; path: string }
  | { kind: "FsMkdir"; scope: string; path: string }
  | { kind: "FsList"; scope: string; path: string; recursive: boolean }
  | { kind: "FsFind"; scope: string; path: string; glob: string }
  | { kind: "FsGrep"; scope: string; path: string; pattern: string }
  | { kind: "FsGrepRecursive"; scope: string; path: string; pattern: string; glob: string | null }
  | { kind: "Chat"; message: string }
  | { kind: "ChatClassified"; handle: string }
  | { kind: "NetOpenScope"; hosts: string[] }
  // A classified body's answer is classified: only HttpRequestClassified may carry one.
  | ({ kind: "HttpRequest" } & HttpRequestFields & { classifiedBody: null })
  | ({ kind: "HttpRequestClassified" } & HttpRequestFields)
  | { kind: "ExecOpenScope"; commands: string[] }
  | { kind: "Exec"; scope: string; command: string; args: string[]; cwd: string | null; timeoutMs: number | null; input: string | null };

export type ActionKind = Action["kind"];

/** What a granted action returns to the sandbox, per kind. */
export interface ActionResults {
  Print: null;
  Classify: string;
  ClassifiedMap: string;
  FsReadClassified: string;
  FsWriteClassified: null;
  ReadInput: string;
  FsOpenScope: { scope: string; root: string };
  CloseScope: null;
  FsStat: FileInfo;
  FsSize: number;
  /** Text, or base64 for bytes. */
  FsRead: string;
  FsReadChunk: { base64: string; eof: boolean };
  FsWrite: null;
  FsDelete: null;
  FsMkdir: null;
  /** Absolute paths. */
  FsList: string[];
  FsFind: string[];
  FsGrep: GrepMatch[];
  FsGrepRecursive: GrepMatch[];
  Chat: string;
  /** A classified handle: the question and the answer stay in the host. */
  ChatClassified: string;
  NetOpenScope: { scope: string };
  HttpRequest: HttpResponse;
  /** A classified handle: the answer stays in the host, and so does its status (see monitor.ts). */
  HttpRequestClassified: string;
  ExecOpenScope: { scope: string };
  Exec: ProcessResult;
}

export interface ProcessResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** An error the agent's code sees, as thrown by the stub. */
export interface RefusalError {
  /** "SecurityError" for policy denials; "Error" for anything else. */
  name: "SecurityError" | "Error";
  message: string;
}

/** How agent code failed, as the sandbox reports it (stack already in the agent's terms). */
export interface ScriptFailure {
  name: string;
  message: string;
  stack: string;
}

/**
 * An action the stub sends without waiting for an answer: printing, which needs none (output
 * is cut at its limit, never refused) and is the commonest call by far; a round trip for each
 * line made printing many lines tens of times slower than printing them at once. The host
 * carries it out in order with the requests around it; one it cannot carry out (a classified
 * handle that was never issued, which the library never sends) ends the evaluation.
 */
export type PostedAction = Extract<Action, { kind: "Print" }>;

export type SandboxFrame =
  | { type: "request"; id: number; action: Action }
  | { type: "post"; action: PostedAction }
  | { type: "done" }
  | { type: "failed"; error: ScriptFailure };

export interface StartFrame {
  type: "start";
  protocol: typeof PROTOCOL_VERSION;
  /** The agent's TypeScript, imports from "tacit" already rewritten; line numbers kept. */
  code: string;
  /** The name stack frames use for the agent's code, e.g. "script.ts". */
  displayName: string;
  /**
   * Remove `Deno` and other runtime handles from the global scope before agent code runs.
   * Always true in production; tests turn it off to prove that the process permissions alone
   * hold the boundary.
   */
  hideRuntime: boolean;
  /**
   * REPL sessions: Math.random is seeded with this (the same for every run of the session's
   * snippets), so replaying earlier snippets draws the numbers they drew the first time.
   * null: the runtime's own Math.random.
   */
  randomSeed: number | null;
  /**
   * A REPL session's sandbox: after reporting "done" it stays alive and waits for the next
   * snippet (a NextFrame) instead of exiting.
   */
  session: boolean;
}

/** The next snippet for a session's live sandbox (after it reported "done"). */
export interface NextFrame {
  type: "next";
  code: string;
  displayName: string;
}

export type ReplyFrame =
  | { type: "reply"; id: number; ok: true; value: unknown }
  | { type: "reply"; id: number; ok: false; error: RefusalError };

export type HostFrame = StartFrame | NextFrame | ReplyFrame;

export function encodeFrame(frame: SandboxFrame | HostFrame): string {
  return JSON.stringify(frame) + "\n";
}
