// The pure evaluator: a second zero-permission Deno process that runs map/flatMap functions
// on classified plaintext. It can compute but not communicate: its only output is a reply
// to the host, which keeps the result classified. Nothing it prints, throws or returns ever
// reaches agent code.

import { lineReader } from "../line-reader.js";
import { MAX_HOST_FRAME_CHARS, PURE_CAPTURES_GLOBAL, PURE_READY_ID, type PureJob, type PureReply } from "../protocol.js";

const stdin = Deno.stdin;
const stdout = Deno.stdout;
Reflect.deleteProperty(globalThis, "Deno");
Reflect.deleteProperty(globalThis, "Worker");

const encoder = new TextEncoder();
const readJob = lineReader((buffer) => stdin.readSync(buffer), MAX_HOST_FRAME_CHARS);

/** The next job's line, or null once the host has closed the pipe (or sent a line past the limit). */
function readLine(): string | null {
  const line = readJob();
  return line === "closed" || line === "too-long" ? null : line;
}

function reply(message: PureReply): void {
  const bytes = encoder.encode(JSON.stringify(message) + "\n");
  for (let offset = 0; offset < bytes.length; ) offset += stdout.writeSync(bytes.subarray(offset));
}

/**
 * Why a Classified value inside a map function cannot be read as text or JSON. It showed as
 * "Classified(***)" there: `secret.map((v) => v + "?key=" + key)`, `key` a captured Classified
 * value, kept "…?key=Classified(***)" as the new secret, and `({ user: v, token: key })` kept
 * {"token":"Classified(***)"}, wrong values written and sent without a word. Thrown, the map
 * fails, and the secure output says why and what to write.
 */
const READ_AS_TEXT =
  "a Classified value was read as text or JSON inside a map function, where it has no text of its own; " +
  "read its plaintext with map or flatMap on it: secret.flatMap((v) => key.map((k) => v + k))";

/** Classified values inside a map function: they compute directly on the plaintext. */
class PureClassified {
  readonly #value: unknown;
  constructor(value: unknown) {
    this.#value = value;
  }
  static unwrap(value: unknown): unknown {
    return value instanceof PureClassified ? value.#value : value;
  }
  map(fn: (value: unknown) => unknown): PureClassified {
    return new PureClassified(PureClassified.unwrap(fn(this.#value)));
  }
  flatMap(fn: (value: unknown) => unknown): PureClassified {
    const result = fn(this.#value);
    if (!(result instanceof PureClassified)) throw new TypeError("flatMap: the function must return a Classified value");
    return result;
  }
  toString(): string {
    throw new TypeError(READ_AS_TEXT);
  }
  toJSON(): string {
    throw new TypeError(READ_AS_TEXT);
  }
  [Symbol.toPrimitive](): string {
    throw new TypeError(READ_AS_TEXT);
  }
}

// classify() is pure: inside a map function it wraps a value directly. Nested map functions
// arrive wrapped by the host's rewriter; here their captures are already in scope.
Object.defineProperty(globalThis, "classify", { value: (value: unknown) => new PureClassified(value), enumerable: false });
Object.defineProperty(globalThis, PURE_CAPTURES_GLOBAL, { value: <F>(fn: F) => fn, enumerable: false });

type Maker = (...captured: unknown[]) => unknown;

/**
 * What makes the job's function from its captured values. Capture names are identifiers (checked
 * by the host); the source is the agent's function as V8 shows it. A method's source is no
 * expression: `map(o.f)` with `const o = { f(v) { … } }`, a class's method, a getter, sent as
 * "f(v) { … }", "get g() { … }" or "#p(v) { … }", failed here every time (a SyntaxError, out of
 * the script's sight), where the same function passed to an array's map works. Such a source is
 * read as the one method of an object literal (a private method's `#` dropped: it is called
 * detached, as an array's map calls it, so its `this` is undefined either way).
 */
function functionOf(names: string[], source: string): Maker {
  try {
    return new Function(...names, `"use strict"; return (${source});`) as Maker;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    let holder: Maker;
    try {
      holder = new Function(...names, `"use strict"; return ({ ${source.startsWith("#") ? source.slice(1) : source}\n});`) as Maker;
    } catch {
      throw error;
    }
    return (...captured) => {
      const members = Object.values(Object.getOwnPropertyDescriptors(holder(...captured)));
      if (members.length !== 1) throw error;
      return members[0]!.value ?? members[0]!.get ?? members[0]!.set;
    };
  }
}

function run(job: PureJob): unknown {
  const names = Object.keys(job.captures);
  const classified = job.classifiedValues.map((value) => new PureClassified(value));
  const values = names.map((name) => {
    const capture = job.captures[name]!;
    return "plain" in capture ? capture.plain : classified[capture.classified];
  });
  const fn = functionOf(names, job.source)(...values);
  if (typeof fn !== "function") throw new TypeError("map/flatMap: not a function");
  const result = fn(job.value);
  if (job.flat && !(result instanceof PureClassified)) throw new TypeError("flatMap: the function must return a Classified value");
  const value = PureClassified.unwrap(result);
  if (value instanceof Promise) throw new TypeError("map/flatMap: the function must be synchronous (it returned a Promise)");
  // Only JSON data can be kept: check now, so the failure is recorded as this map's.
  const json = JSON.stringify(value);
  return json === undefined ? null : JSON.parse(json);
}

/**
 * Why a job failed, from what its function threw. Reading that runs the function's code (a getter
 * on `name` or `message`, a `toString`), and a thrown value may have no text at all (a captured
 * Classified value, an object without a prototype): its throw escaped the loop below and ended
 * the evaluator, and every map after it waited for a fresh one to start.
 */
function whyFailed(error: unknown): string {
  try {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    return "the function threw a value that could not be read as text (reading its name, its message or its text threw)";
  }
}

reply({ id: PURE_READY_ID, ok: true, value: null });
for (let line = readLine(); line !== null; line = readLine()) {
  const job = JSON.parse(line) as PureJob;
  try {
    reply({ id: job.id, ok: true, value: run(job) });
  } catch (error) {
    reply({ id: job.id, ok: false, error: whyFailed(error) });
  }
}
