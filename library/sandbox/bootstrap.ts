// The sandbox's main module. The host starts Deno on this file with no permissions, sends
// the agent's code over stdin, and answers every request the code makes.
//
// The agent's code is never the main module nor a file this module imports: Deno reads any
// file the main module statically imports, whatever the flags. It arrives over the pipe and
// is loaded as a blob: module, from where file reads are denied.

import { createApi, createConsole, SecurityError } from "./api.js";
import { createChannel } from "./channel.js";
import { attachCaptures, createClassifiedApi } from "./classified.js";
import { createExecApi } from "./exec.js";
import { createFileSystemApi } from "./fs.js";
import { createNetworkApi } from "./net.js";
import { ECHO_GLOBAL, FAILURE_UNREPORTED_EXIT_CODE, LIBRARY_GLOBAL, MAX_SANDBOX_FRAME_CHARS, PUBLISH_GLOBAL, PURE_CAPTURES_GLOBAL, type ScriptFailure, type StartFrame } from "../protocol.js";

// Captured before agent code runs; agent code may replace or delete the globals.
const stdin = Deno.stdin;
const stdout = Deno.stdout;
const exit = Deno.exit;
const denoInspect = Deno.inspect;
const inspect = (value: unknown): string => denoInspect(value, { colors: false, depth: 6 });

const channel = createChannel({
  readSync: (buffer) => stdin.readSync(buffer),
  writeSync: (bytes) => stdout.writeSync(bytes),
  refusal: (name, message) => (name === "SecurityError" ? new SecurityError(message) : new Error(message)),
});

// Everything that does not depend on the agent's code is built (and compiled) before its
// start frame is read: a spare sandbox does this while it waits, not while a call waits.
const classified = createClassifiedApi(channel);
const api = Object.freeze({
  ...createApi(channel, inspect, classified),
  ...createFileSystemApi(channel, classified),
  ...createExecApi(channel),
  ...createNetworkApi(channel, classified),
  classify: classified.classify,
  chat(message: unknown): unknown {
    if (classified.isClassified(message)) {
      return classified.wrap(channel.request({ kind: "ChatClassified", handle: classified.handleOf(message, "chat(message)") }));
    }
    return channel.request({ kind: "Chat", message: String(message) });
  },
  SecurityError,
});
const agentConsole = createConsole(api, inspect, classified);
// Warms the module loader and its TypeScript transpiler on a small typed module, so the
// agent's module is the second one through them.
await import(URL.createObjectURL(new Blob(["const warm: number = 1;\nexport default warm;\n"], { type: "application/typescript" })));
rehearsePrinting();

/**
 * Prints once through a channel that goes nowhere, so that V8 has compiled the formatting and
 * framing code before the agent's first println (measured: a one-shot call 14.3 -> 11.9 ms
 * median, with the typed warm-up module above). A print waits for no answer: nothing is read.
 */
function rehearsePrinting(): void {
  const nowhere = createChannel({
    readSync: () => null,
    writeSync: (bytes) => bytes.length,
    refusal: (_name, message) => new Error(message),
  });
  createApi(nowhere, inspect, createClassifiedApi(nowhere)).println(1, "warm", { a: [1] });
}

// Set by begin(), from the start frame the host sends once it has a program for this sandbox.
let start: StartFrame;

// Captured too: snippets of a session are loaded, and their bindings published, after agent
// code has had the chance to replace these.
const BlobCtor = Blob;
const createObjectURL = URL.createObjectURL;
const defineProperty = Object.defineProperty;
const entriesOf = Object.entries;
// A snippet may publish a binding named globalThis: later publishing still defines on the real one.
const realGlobal = globalThis;
const ITERATOR: typeof Symbol.iterator = Symbol.iterator;
type BlobParts = ConstructorParameters<typeof Blob>[0];
type BlobOptions = ConstructorParameters<typeof Blob>[1];

/**
 * A snippet's code as the one part of a Blob, given as an iterable of the library's own: Blob's
 * constructor iterates its parts with whatever Array.prototype[Symbol.iterator] is then, and a
 * snippet that replaced it had the next snippet's module made of code of its own, which the
 * validator had never seen (it used globalThis, process, import()). The options have no prototype
 * for the same reason (Blob reads the options it is not given, `endings`, through it).
 */
function blobPartsOf(code: string): Iterable<string> {
  return {
    [ITERATOR]: () => {
      let given = false;
      return { next: () => (given ? { done: true, value: undefined } : ((given = true), { done: false, value: code })) };
    },
  };
}
const moduleUrlOf = (code: string): string =>
  createObjectURL(new BlobCtor(blobPartsOf(code) as BlobParts, { __proto__: null, type: "application/typescript" } as BlobOptions));

/** The agent's modules (a session has one per snippet), by URL, with the names stack frames show. */
const moduleNames = new Map<string, string>();

function define(name: string, value: unknown, configurable = false): void {
  defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable });
}
/** Sets the stage for the program of `frame` (the library's globals, the runtime hidden) and loads it. */
function begin(frame: StartFrame): void {
  start = frame;
  // In a session, a snippet's top-level binding of the same name replaces one for later snippets.
  for (const [name, fn] of Object.entries(api)) define(name, fn, start.session);
  // The import rewriter turns `import { x } from "tacit"` into a read of this object.
  define(LIBRARY_GLOBAL, api);
  define(PURE_CAPTURES_GLOBAL, attachCaptures);
  // A REPL snippet's final expression is shown the way Deno's REPL shows values.
  define(ECHO_GLOBAL, (value: unknown) => {
    if (value !== undefined) api.print(inspect(value) + "\n");
    return value;
  });
  define(PUBLISH_GLOBAL, (bindings: Record<string, [() => unknown, ((value: unknown) => void) | null]>) => {
    for (const [name, [get, set]] of entriesOf(bindings)) {
      const assignToConstant = (): never => {
        throw new TypeError(`Assignment to constant variable \`${name}\` (declared with const in an earlier snippet).`);
      };
      try {
        defineProperty(realGlobal, name, { get, set: set ?? assignToConstant, enumerable: false, configurable: true });
      } catch {
        throw new TypeError(`the top-level binding \`${name}\` cannot be kept for later snippets: it would replace a built-in that cannot be replaced. Rename it.`);
      }
    }
  });
  for (const [name, timer] of [["setTimeout", setTimeout], ["setInterval", setInterval]] as const) {
    Object.defineProperty(globalThis, name, { value: withDelayTaken(timer), writable: true, enumerable: false, configurable: true });
  }
  Object.defineProperty(globalThis, "console", {
    value: agentConsole,
    writable: true,
    enumerable: false,
    configurable: true,
  });

  if (start.randomSeed !== null) {
    Object.defineProperty(Math, "random", { value: seededRandom(start.randomSeed), writable: true, enumerable: false, configurable: true });
  }

  if (start.hideRuntime) {
    // Defence in depth: the process has no permissions, but agent code that slips past the
    // validator should not even hold the runtime's handle.
    // Workers get a fresh global with Deno in it (still without permissions); scripts have no
    // use for them, so they go too.
    for (const name of ["Deno", "Worker"]) Reflect.deleteProperty(globalThis, name);
  }
  runAgentModule(start.code, start.displayName);
}

/** The longest delay Node's timers take, in ms (2^31 - 1). */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * `timer` (setTimeout or setInterval) with its delay made one it takes without a word: a delay
 * that is negative, not a number or longer than MAX_TIMER_DELAY_MS is 1 ms, as Node's timers make
 * it; but their warning of it reads the runtime's global, which the sandbox has removed, and
 * setTimeout(f, -5), which type-checks, failed with "ReferenceError: Deno is not defined". Any
 * other delay, none (undefined) and 0 included, is passed as given: made 1 ms, every zero-delay
 * timer of the library and of Deno's own code waited a millisecond more, about 9 ms of each
 * `tacit run` of hello.ts (interleaved runs, medians of 40).
 */
function withDelayTaken<T extends (callback: never, delay?: number, ...args: never[]) => unknown>(timer: T): T {
  const taken = (callback: never, delay?: unknown, ...args: never[]): unknown => {
    if (delay === undefined) return timer(callback, undefined, ...args);
    const ms = Number(delay);
    return timer(callback, ms >= 0 && ms <= MAX_TIMER_DELAY_MS ? ms : 1, ...args);
  };
  return taken as unknown as T;
}

/**
 * sfc32, state from splitmix32 of the seed: a small, well-mixed generator (not for secrets,
 * like Math.random itself). Doubles in [0, 1) from 32 bits, as V8's own uses 52; enough here.
 */
function seededRandom(seed: number): () => number {
  let x = seed >>> 0;
  const splitmix = (): number => {
    x = (x + 0x9e3779b9) | 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix(), b = splitmix(), c = splitmix(), d = splitmix();
  return function random(): number {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

let finished = false;

/**
 * The most characters of a failure's name, message and stack that are reported: the three go
 * in one frame, which JSON's escapes can make six times as long, and the host ends a sandbox
 * whose frame is longer than MAX_SANDBOX_FRAME_CHARS. An error with a 3 MB message was
 * reported as that protocol violation, with nothing of the error.
 */
const FAILURE_TEXT_LIMIT = Math.floor(MAX_SANDBOX_FRAME_CHARS / 24);

const cutFailureText = (text: string): string =>
  text.length <= FAILURE_TEXT_LIMIT ? text : `${text.slice(0, FAILURE_TEXT_LIMIT)}… (${text.length - FAILURE_TEXT_LIMIT} more characters not shown)`;

function describeFailure(error: unknown): ScriptFailure {
  if (error instanceof Error) {
    return {
      name: cutFailureText(String(error.name)),
      message: cutFailureText(String(error.message)),
      stack: cutFailureText(agentStack(String(error.stack ?? `${error.name}: ${error.message}`))),
    };
  }
  const text = cutFailureText(inspect(error));
  return { name: "Uncaught", message: text, stack: `Uncaught ${text}` };
}

/** Rewrites stack frames into the agent's terms: its file names, no runner internals. */
function agentStack(stack: string): string {
  const isAgentFrame = (line: string): boolean => [...moduleNames.keys()].some((url) => line.includes(url));
  return stack
    .split("\n")
    .filter((line) => !/^\s+at\s/.test(line) || isAgentFrame(line))
    .map((line) => [...moduleNames].reduce((text, [url, name]) => text.split(url).join(name), line))
    .join("\n");
}

/** What is reported of an error that describing threw on twice (see fail). */
const UNDESCRIBABLE: ScriptFailure = {
  name: "Error",
  message:
    "the script's error could not be described: reading its name, message or stack threw, and so did the error that threw, " +
    "or a built-in the library describes errors with (a method of Array or String) was replaced",
  stack: "",
};

/** `error` described; if its getters throw as it is described, the error they threw (as Deno reports such an error). */
function describeSafely(error: unknown): ScriptFailure {
  try {
    return describeFailure(error);
  } catch (describing) {
    try {
      return describeFailure(describing);
    } catch {
      return UNDESCRIBABLE;
    }
  }
}

function fail(error: unknown): never {
  finished = true;
  const failure = describeSafely(error);
  try {
    channel.send({ type: "failed", error: failure });
  } catch {
    // Nothing of it may reach Deno's report of an uncaught error (see FAILURE_UNREPORTED_EXIT_CODE).
    return exit(FAILURE_UNREPORTED_EXIT_CODE);
  }
  return exit(1);
}

addEventListener("error", (event) => {
  event.preventDefault();
  fail(event.error);
});
addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  fail(event.reason);
});

let settled = false;
let current: string | null = null;
let snippetsRun = 0;

/** Loads one module of agent code; a session's earlier snippets keep their modules under a numbered name. */
function runAgentModule(code: string, displayName: string): void {
  if (current) moduleNames.set(current, `snippet-${snippetsRun}.ts`);
  snippetsRun++;
  current = moduleUrlOf(code);
  moduleNames.set(current, displayName);
  settled = false;
  import(current).then(
    () => {
      settled = true;
    },
    (error: unknown) => fail(error),
  );
}

// "beforeunload" fires when the event loop has run dry, and not on an exit the script forces
// (Deno.exit, node:process exit): such an exit reports nothing, and the host calls it a
// protocol violation rather than a success. A top-level await that never settles ends the
// runtime without it too; Deno says so on stderr, and the host reports that.
// A session's sandbox then waits for the next snippet, blocked on stdin (nothing of the last
// one is left to run), and cancelling the unload keeps the runtime going with it.
// The start frame is read at the first unload, not at the end of this module: whatever this
// module's start-up left running has finished by then, so the program's own unload (and its
// "done") is not held up behind it. A one-shot program starts as a session's next snippet does.
let begun = false;
addEventListener("beforeunload", (event) => {
  if (!begun) {
    begun = true;
    event.preventDefault();
    begin(channel.readStart());
    return;
  }
  if (finished || !settled) return;
  channel.send({ type: "done" });
  if (!start.session) {
    finished = true;
    // Waits, blocked on stdin, for the host to end it, as a session's waits for its next snippet:
    // that is how the host knows the report's write is over (see runner/input-wait.ts).
    // Whatever arrives, or the host's end of the channel closing, lets it end as before.
    stdin.readSync(new Uint8Array(1));
    return;
  }
  const next = channel.readNext();
  event.preventDefault();
  runAgentModule(next.code, next.displayName);
});

