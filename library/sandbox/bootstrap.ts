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
import { ECHO_GLOBAL, LIBRARY_GLOBAL, PURE_CAPTURES_GLOBAL, type ScriptFailure } from "../protocol.js";

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
// Warms the module loader and its TypeScript transpiler on a module of nothing, so the
// agent's module is the second one through them.
await import(URL.createObjectURL(new Blob(["export {};\n"], { type: "application/typescript" })));

const start = channel.readStart();
const agentUrl = URL.createObjectURL(new Blob([start.code], { type: "application/typescript" }));

function define(name: string, value: unknown): void {
  Object.defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });
}
for (const [name, fn] of Object.entries(api)) define(name, fn);
// The import rewriter turns `import { x } from "tacit"` into a read of this object.
define(LIBRARY_GLOBAL, api);
define(PURE_CAPTURES_GLOBAL, attachCaptures);
// A REPL snippet's final expression is shown the way Deno's REPL shows values.
define(ECHO_GLOBAL, (value: unknown) => {
  if (value !== undefined) api.print(inspect(value) + "\n");
  return value;
});
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

function describeFailure(error: unknown): ScriptFailure {
  if (error instanceof Error) {
    return {
      name: error.name,
      message: error.message,
      stack: agentStack(String(error.stack ?? `${error.name}: ${error.message}`)),
    };
  }
  const text = inspect(error);
  return { name: "Uncaught", message: text, stack: `Uncaught ${text}` };
}

/** Rewrites stack frames into the agent's terms: its file name, no runner internals. */
function agentStack(stack: string): string {
  return stack
    .split("\n")
    .filter((line) => !/^\s+at\s/.test(line) || line.includes(agentUrl))
    .map((line) => line.split(agentUrl).join(start.displayName))
    .join("\n");
}

function fail(error: unknown): never {
  finished = true;
  channel.send({ type: "failed", error: describeFailure(error) });
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
// "beforeunload" fires when the event loop has run dry, and not on an exit the script forces
// (Deno.exit, node:process exit): such an exit reports nothing, and the host calls it a
// protocol violation rather than a success. A top-level await that never settles ends the
// runtime without it too; Deno says so on stderr, and the host reports that.
addEventListener("beforeunload", () => {
  if (finished || !settled) return;
  finished = true;
  channel.send({ type: "done" });
});

import(agentUrl).then(
  () => {
    settled = true;
  },
  (error: unknown) => fail(error),
);
