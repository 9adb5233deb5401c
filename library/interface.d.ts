// tacit's capability interface: the one source of truth for what agent code can call.
// Everything here is a global in agent code, and importable from "tacit":
//   import { println, readInput } from "tacit";
// Calls are synchronous (they block on the host's answer); `await` on them is harmless.
// Nothing else reaches the outside world: there is no `Deno`, `process`, `fetch`,
// `globalThis`, `eval` or `import()` in a tacit script.

/**
 * Prints the values separated by spaces, then a newline. Strings print as they are; a
 * Classified value prints as "Classified(***)" (its plaintext goes to --secure-output only).
 */
declare function println(...values: unknown[]): void;
/** Prints the values separated by spaces, without a newline. */
declare function print(...values: unknown[]): void;
/**
 * Prints a formatted string (no newline added). Directives: %s %d %i %f %.Nf %x %o %O %j %%.
 * Throws a TypeError if the format needs more arguments than given.
 */
declare function printf(format: string, ...args: unknown[]): void;
/**
 * Everything piped to `tacit run script.ts` on standard input, as one string ("" when
 * nothing was piped). Not available when the script itself came from standard input
 * (`tacit run -`). Throws a SecurityError when standard input is redirected from a
 * classified file (`< .env`): read a secret with `readClassified()` instead.
 */
declare function readInput(): string;

/**
 * Asks the host for access to the directory `root` (relative to the working directory, or
 * absolute) and runs `op` with it. The host checks `root` against the allowed roots
 * (--allowed-roots; default: the working directory). The FileSystem is revoked when `op`
 * returns — for an async `op`, when its promise settles; using it afterwards throws a
 * SecurityError. Paths given to it are relative to `root`, or absolute under it; symbolic
 * links that lead out of `root` are refused (and left out of listings).
 */
declare function requestFileSystem<T>(root: string, op: (fs: FileSystem) => T): T;

interface FileSystem {
  /** The scope's root, absolute. */
  readonly root: string;
  /** An entry for `path` (nothing is checked until it is used). */
  access(path: string): FileEntry;
  /** Lines of one file matching `pattern` (a RegExp source, no flags). Refused on a classified file; throws on a line over 16 Mi characters. */
  grep(path: string, pattern: string): GrepMatch[];
  /**
   * Lines matching `pattern` in every file under `dir` (whose name matches `glob`, if given:
   * *, **, ? and [...] only, no braces; a glob without "/" matches file names, with "/" the path below `dir`;
   * [!a] is any character but a; a leading ! matches what the rest does not, as `rg -g '!*.min.js'`
   * excludes: "!*.min.js" every file but those; "\!" is a name's own "!"). Classified files
   * are skipped, never read. Entries it cannot read (no permission, a link loop, a line over
   * 16 Mi characters) are skipped too, and the run's output warns of them (stderr, or the tool
   * result), naming the first few: the answer then is not the whole tree. Throws if `dir`
   * itself cannot be read.
   */
  grepRecursive(dir: string, pattern: string, glob?: string): GrepMatch[];
  /**
   * Absolute paths of the entries under `dir` that match `glob` (same rules as above). A
   * directory it cannot read is left out, with a warning, as grepRecursive does.
   */
  find(dir: string, glob: string): string[];
  /**
   * A classified file's content as a Classified value (refused on an ordinary path). The file
   * must be UTF-8 text (a leading BOM, NUL bytes and CRLF are kept as they are, so a copy
   * written with writeClassified is the same bytes): one that is not (a binary file such as a
   * .p12 key store or a DER key) throws an Error, and nothing is read, since a Classified value
   * is text and its bytes would have changed. Copy or move such a file outside tacit.
   */
  readClassified(path: string): Classified<string>;
  /** Writes a Classified value to a classified path (refused on an ordinary path). */
  writeClassified(path: string, content: Classified<string>): void;
}

interface FileEntry {
  /** Absolute. */
  readonly path: string;
  readonly name: string;
  readonly exists: boolean;
  readonly isDirectory: boolean;
  /** In bytes. Throws a SecurityError on a classified path. */
  readonly size: number;
  /** True if the path holds secrets (--classified-paths): its content cannot be read. */
  readonly isClassified: boolean;
  /** The whole file as UTF-8 text (up to 32 MiB; use forEachLine for more). */
  read(): string;
  readBytes(): Uint8Array;
  readLines(): string[];
  /** Streams the file line by line, whatever its size; lineNumber starts at 1. Throws on a line over 16 Mi characters. */
  forEachLine(op: (line: string, lineNumber: number) => void): void;
  /**
   * Replaces the file's content (creating it; its directory must exist). One call carries at
   * most 4 Mi characters as sent (JSON-escaped): write a larger content in parts, write() then append().
   */
  write(content: string): void;
  /** Adds to the end of the file (creating it); at most 4 Mi characters a call, as write(). */
  append(content: string): void;
  /** Deletes a file, a symbolic link (not its target) or an empty directory. */
  delete(): void;
  /** Creates the directory and any missing parents. */
  mkdir(): void;
  /** The entries of this directory, in name order; a link that loops is left out, with a warning. */
  children(): FileEntry[];
  /**
   * Every entry below this directory, depth first; symbolic links are not descended into. A
   * directory it cannot read (or a link that loops) is left out, with a warning, as find does.
   */
  walk(): FileEntry[];
  /** As FileSystem.readClassified: a classified file's UTF-8 text; a file that is not UTF-8 throws an Error. */
  readClassified(): Classified<string>;
  writeClassified(content: Classified<string>): void;
}

type GrepMatch = { file: string; lineNumber: number; line: string };

/**
 * Asks the host to let `op` run the named commands (names like "git", not paths: the host
 * finds the program on its own PATH). Each must also be permitted by the operator
 * (--command-permissions, or --strict); otherwise this throws a SecurityError. The
 * permission is revoked when `op` returns — for an async `op`, when its promise settles.
 */
declare function requestExecPermission<T>(commands: string[], op: (proc: ProcessPermission) => T): T;

interface ProcessPermission {
  /**
   * Runs `command` with `args` exactly as given (no shell). `cwd` must be inside the allowed
   * roots (default: the working directory); `timeoutMs` (default 30000) kills the command and
   * everything it started; `input` is its standard input. stdout and stderr are captured up
   * to 8 MiB each (less where the operator set so), read as UTF-8: a stream that is not UTF-8
   * shows what is not as U+FFFD and ends with a "[tacit: … was not valid UTF-8 …]" note. A
   * non-zero exit is a result, not an exception; a timeout gives exit 124.
   */
  exec(command: string, args?: string[], options?: { cwd?: string; timeoutMs?: number; input?: string }): ProcessResult;
  /** exec(command, args).stdout */
  execOutput(command: string, args?: string[]): string;
}

type ProcessResult = { exitCode: number; stdout: string; stderr: string };

/**
 * Asks the host to let `op` reach the named hosts ("api.example.com", "*.example.com",
 * "127.0.0.1:8080"; without a port, only the scheme's default port). Each request must match
 * these and the operator's --network-permissions; with none set, no host is reachable.
 * Loopback, private and link-local addresses are refused unless the operator named the host
 * or address literally. Revoked when `op` returns (or its promise settles).
 */
declare function requestNetwork<T>(hosts: string[], op: (net: Network) => T): T;

interface RequestOptions {
  headers?: Record<string, string>;
  /**
   * Sent with the request; their values never come back (they are redacted from answers). A
   * value under 4 characters (a piece of a secret) is refused: it could not be redacted.
   */
  secretHeaders?: Record<string, Classified<string>>;
}

interface Network {
  /**
   * The response body (up to 8 MiB, cut with a marker); redirects are followed if allowed. An
   * answer that is not 2xx throws an HttpStatusError, a 3xx that was not followed included (a 304
   * has no body); use httpRequest to read any status.
   */
  httpGet(url: string, options?: RequestOptions): string;
  /** As httpGet, with a body (a text/plain UTF-8 one unless contentType says otherwise). */
  httpPost(url: string, body: string, options?: RequestOptions & { contentType?: string }): string;
  /** Any method; returns every status with its body (redirects followed, as httpGet). */
  httpRequest(method: string, url: string, options?: RequestOptions & { body?: string }): HttpResponse;
  /**
   * Sends a classified body (refused under 4 characters, like a secret header); the answer stays
   * classified too, and so does its status (it could tell about the body): an answer that is not
   * 2xx, or one that fails once its connection is up, is returned as any other (empty if it failed),
   * and the secure output says so.
   */
  httpPostClassified(url: string, body: Classified<string>, options?: RequestOptions & { contentType?: string }): Classified<string>;
}

type HttpResponse = { status: number; body: string };

/**
 * Thrown by httpGet and httpPost for an answer that is not 2xx (after the redirects followed),
 * as curl --fail fails, and for a 3xx that was not followed (a 304, a 300, a redirect without a
 * Location), whose body curl --fail would return. The message names the status, says why it is
 * not the answer, and quotes the start of the body (secret headers redacted).
 */
declare class HttpStatusError extends Error {
  constructor(call: string, method: string, url: string, status: number, body: string);
  readonly status: number;
  /** The request's method and URL, as the script gave them. */
  readonly method: string;
  readonly url: string;
}
/** The class HttpStatusError, as "tacit" exports it (a class is no property of `typeof globalThis`). */
type HttpStatusErrorClass = typeof HttpStatusError;

/**
 * A value whose plaintext stays in the host. Agent code can transform it (map/flatMap run in
 * a separate pure evaluator), write it to a classified file, or print it — printing shows
 * "Classified(***)" here and writes the plaintext only to the secure output (--secure-output).
 * toString, JSON and inspection all show "Classified(***)". A function that fails inside
 * map gives a value that looks like any other (the failure goes to the secure output).
 */
interface Classified<T> {
  /**
   * `fn` must be pure: it may use its argument, literals, captured plain data and captured
   * Classified values, and built-ins like Math, JSON and String; not printing, capabilities,
   * or assignment to outer variables. Its source is what runs: a built-in or bound function
   * (`map(String)`) has none and throws a TypeError; write it out (`map((v) => String(v))`).
   * An async or generator function, or a class, gives no value and throws a TypeError too;
   * a method passed by reference (`map(parser.parse)`) runs as an array's map would run it.
   * A function made by a factory (`map(make(5))`), taken from an array or held by a `let`
   * assigned again is refused by the checks (the values it uses cannot be seen): write it in the
   * call. A condition written in the call (`map(cond ? f : g)`) is checked branch by branch.
   * A captured Classified value has no text inside fn: combine with flatMap
   * (`secret.flatMap((v) => key.map((k) => v + k))`), not `v + key`.
   */
  map<U>(fn: (value: T) => U): Classified<U>;
  flatMap<U>(fn: (value: T) => Classified<U>): Classified<U>;
  toString(): string;
}

/** Wraps plain data (acyclic, at most 990 levels deep, up to 4 Mi characters as JSON; no NaN or Infinity, which JSON cannot hold) as a Classified value. */
declare function classify<T>(value: T): Classified<T>;

/**
 * Asks the operator's model (--llm-base-url, --llm-api-key, --llm-model) one question.
 * With a Classified message, the question and the answer stay classified: the plaintext goes
 * to the model from the host, and the answer comes back as a Classified value.
 */
declare function chat(message: string): string;
declare function chat(message: Classified<string>): Classified<string>;

/** Thrown for every policy denial: a path outside the scope, a classified file, a revoked capability. */
declare class SecurityError extends Error {}
/** The class SecurityError, as "tacit" exports it (a class is no property of `typeof globalThis`). */
type SecurityErrorClass = typeof SecurityError;

/** console.* print to the same place as println. */
declare const console: {
  log(...values: unknown[]): void;
  info(...values: unknown[]): void;
  debug(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
  trace(...values: unknown[]): void;
  dir(value: unknown): void;
  table(value: unknown): void;
  assert(condition: unknown, ...values: unknown[]): void;
  count(label?: string): void;
  countReset(label?: string): void;
  group(...values: unknown[]): void;
  groupCollapsed(...values: unknown[]): void;
  groupEnd(): void;
  time(label?: string): void;
  timeLog(label?: string, ...values: unknown[]): void;
  timeEnd(label?: string): void;
};

/** Timers work as in any JavaScript runtime; the callback must be a function. */
declare function setTimeout(callback: (_: void) => void, delayMs?: number): number;
declare function setTimeout<A extends unknown[]>(callback: (...args: A) => void, delayMs?: number, ...args: A): number;
declare function clearTimeout(id: number | undefined): void;
declare function setInterval<A extends unknown[]>(callback: (...args: A) => void, delayMs?: number, ...args: A): number;
declare function clearInterval(id: number | undefined): void;
declare function queueMicrotask(callback: () => void): void;
declare function structuredClone<T>(value: T): T;

declare class TextEncoder {
  encode(input?: string): Uint8Array;
}
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  decode(input?: ArrayBufferView | ArrayBuffer, options?: { stream?: boolean }): string;
}
declare function atob(data: string): string;
declare function btoa(data: string): string;

declare module "tacit" {
  export const println: typeof globalThis.println;
  export const print: typeof globalThis.print;
  export const printf: typeof globalThis.printf;
  export const readInput: typeof globalThis.readInput;
  export const requestFileSystem: typeof globalThis.requestFileSystem;
  export const requestExecPermission: typeof globalThis.requestExecPermission;
  export const requestNetwork: typeof globalThis.requestNetwork;
  export type Network = globalThis.Network;
  export type RequestOptions = globalThis.RequestOptions;
  export type HttpResponse = globalThis.HttpResponse;
  export type ProcessPermission = globalThis.ProcessPermission;
  export type ProcessResult = globalThis.ProcessResult;
  export const SecurityError: SecurityErrorClass;
  export type SecurityError = globalThis.SecurityError;
  export const HttpStatusError: HttpStatusErrorClass;
  export type HttpStatusError = globalThis.HttpStatusError;
  export const classify: typeof globalThis.classify;
  export const chat: typeof globalThis.chat;
  export type Classified<T> = globalThis.Classified<T>;
  export type FileSystem = globalThis.FileSystem;
  export type FileEntry = globalThis.FileEntry;
  export type GrepMatch = globalThis.GrepMatch;
}
