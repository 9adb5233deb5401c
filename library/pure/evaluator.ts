// The pure evaluator: a second zero-permission Deno process that runs map/flatMap functions
// on classified plaintext. It can compute but not communicate: its only output is a reply
// to the host, which keeps the result classified. Nothing it prints, throws or returns ever
// reaches agent code.
//
// Map functions run in a realm of their own, locked before the first job (see jobRealm): each
// sees the language's built-ins as they were, and nothing an earlier job left there.

import { constants, createContext, runInContext } from "node:vm";
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

function write(text: string): void {
  const bytes = encoder.encode(text);
  for (let offset = 0; offset < bytes.length; ) offset += stdout.writeSync(bytes.subarray(offset));
}

function reply(message: PureReply): void {
  write(JSON.stringify(message) + "\n");
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

/**
 * Why a job failed when what its function threw cannot be read: reading that runs the function's
 * code (a getter on `name` or `message`, a `toString`), and a thrown value may have no text at all
 * (a captured Classified value, an object without a prototype). Its throw escaped the loop below
 * and ended the evaluator, and every map after it waited for a fresh one to start.
 */
const UNREADABLE_THROW = "the function threw a value that could not be read as text (reading its name, its message or its text threw)";

/** A job, prepared in the jobs' realm: its id, and what runs it (the reply's fields after the id, as JSON text). */
type Prepared = [id: number, fields: () => string];
/** `seed`: four random 32-bit numbers, the job's own Math.random state (see jobRealm). */
type Prepare = (line: string, seed: readonly [number, number, number, number]) => Prepared;

/**
 * Sets up the realm map functions run in, locks it, and returns what prepares each job there.
 * Only its source crosses (see `prepare` below): it uses nothing but its parameters and that
 * realm's built-ins, and hands back only an id and a string per job.
 *
 * Locked because every job runs there, one after another: a map that replaced
 * String.prototype.toUpperCase, or kept its plaintext in a global (or RegExp.$1 kept it for it),
 * had the next job, another secret's, compute with both, through functions the checks pass. So
 * before any job, every object of the realm's built-ins is frozen (those reached from its global,
 * and those only its syntax reaches: iterators', generators' and async functions' prototypes, an
 * error's `stack` accessor), its global too (a job can add no name), and RegExp's legacy statics
 * (RegExp.$1, lastMatch, …), which carry a job's last match to the next, are deleted. Frozen, a prototype's property can no
 * longer be shadowed by assignment (`this.name = "ParseError"` in an Error subclass threw): the
 * few that code sets on its own objects (an error's name and message, an object's `toString` or
 * `valueOf`) become accessors that define the property on the object assigned to, as assignment
 * would have.
 * Math.random draws from a state each job is given afresh. What a job can still leave to the next:
 * the Symbol.for registry (which no job can list), and the time things take.
 */
function jobRealm(readAsText: string, unreadableThrow: string, capturesGlobal: string): Prepare {
  "use strict";
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const defineProperty = Object.defineProperty;
  const descriptorOf = Object.getOwnPropertyDescriptor;
  const descriptorsOf = Object.getOwnPropertyDescriptors;
  const prototypeOf = Object.getPrototypeOf;
  const freeze = Object.freeze;
  const keys = Object.keys;
  const values = Object.values;
  const ownKeys = Reflect.ownKeys;
  const NewFunction = Function;
  const PromiseClass = Promise;
  const ErrorClass = Error;
  const SyntaxErrorClass = SyntaxError;
  const TypeErrorClass = TypeError;
  const text = String;

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
      if (!(result instanceof PureClassified)) throw new TypeErrorClass("flatMap: the function must return a Classified value");
      return result;
    }
    toString(): string {
      throw new TypeErrorClass(readAsText);
    }
    toJSON(): string {
      throw new TypeErrorClass(readAsText);
    }
    [Symbol.toPrimitive](): string {
      throw new TypeErrorClass(readAsText);
    }
  }

  // classify() is pure: inside a map function it wraps a value directly. Nested map functions
  // arrive wrapped by the host's rewriter; here their captures are already in scope.
  defineProperty(globalThis, "classify", { value: (value: unknown) => new PureClassified(value), enumerable: false });
  defineProperty(globalThis, capturesGlobal, { value: <F>(fn: F) => fn, enumerable: false });

  // Math.random from a state each job is given afresh (xorshift128+, as V8's own): V8's state is
  // the realm's, and a job that drew from it a number of times that its plaintext decided moved
  // what the next job drew, a job that can read the state back from a few draws.
  let state0 = 0n;
  let state1 = 0n;
  const MASK = (1n << 64n) - 1n;
  defineProperty(Math, "random", {
    value: function random(): number {
      let s1 = state0;
      const s0 = state1;
      state0 = s0;
      s1 ^= (s1 << 23n) & MASK;
      s1 ^= s1 >> 17n;
      s1 ^= s0;
      s1 ^= s0 >> 26n;
      state1 = s1;
      // The top 53 bits of the sum, as a fraction of 2^53.
      return Number(((state0 + state1) & MASK) >> 11n) / 2 ** 53;
    },
    writable: true,
    enumerable: false,
    configurable: true,
  });

  // RegExp's legacy statics: the last match of any job, read by the next.
  for (const key of ownKeys(RegExp)) {
    if (typeof key === "string" && (key.startsWith("$") || ["input", "lastMatch", "lastParen", "leftContext", "rightContext"].includes(key))) {
      Reflect.deleteProperty(RegExp, key);
    }
  }

  /** A prototype's data property made an accessor whose setter defines it on the object assigned to (see above). */
  function assignable(home: object, key: string): void {
    const descriptor = descriptorOf(home, key);
    if (descriptor === undefined || !("value" in descriptor) || !descriptor.writable) return;
    const value: unknown = descriptor.value;
    defineProperty(home, key, {
      get: () => value,
      set(this: unknown, assigned: unknown) {
        if (this === home) throw new TypeErrorClass(`Cannot assign to read only property '${key}' of a built-in prototype`);
        defineProperty(this, key, { value: assigned, writable: true, enumerable: true, configurable: true });
      },
      enumerable: descriptor.enumerable ?? false,
      configurable: false,
    });
  }
  // Not `constructor`, nor Array's or Promise's: as accessors there they slow every array method
  // (V8 reads an array's constructor for each map, filter, slice: an array-heavy map took 2.5 times
  // the CPU), and code sets them on its own objects hardly ever.
  const errors = [Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError];
  for (const home of [Object.prototype, Function.prototype, ...errors.map((E) => E.prototype)]) {
    for (const key of ["name", "message", "toString", "valueOf", "toLocaleString"]) assignable(home, key);
  }

  /** Built-ins only the syntax reaches: none of them is a property of anything on the global. */
  const hidden: unknown[] = [];
  const reach = (make: () => unknown): void => {
    try {
      hidden.push(make());
    } catch {
      // Not in this V8: nothing to freeze.
    }
  };
  reach(() => function* () {});
  reach(() => (function* () {})());
  reach(() => async function () {});
  reach(() => async function* () {});
  reach(() => (async function* () {})());
  reach(() => [][Symbol.iterator]());
  reach(() => new Map()[Symbol.iterator]());
  reach(() => new Set()[Symbol.iterator]());
  reach(() => ""[Symbol.iterator]());
  reach(() => /a/[Symbol.matchAll](""));
  // Iterator helpers' and Iterator.from's (Iterator itself, a global, is reached from there).
  reach(() => ([].values() as unknown as { map(fn: (x: unknown) => unknown): unknown }).map((x) => x));
  reach(() => (globalThis as unknown as { Iterator: { from(it: object): unknown } }).Iterator.from({ next: () => ({ done: true, value: undefined }) }));
  reach(() => new Intl.Segmenter().segment(""));
  reach(() => new Intl.Segmenter().segment("")[Symbol.iterator]());
  reach(() => descriptorOf(Function.prototype, "caller")?.get);
  // The accessor of an error's `stack`: one pair of functions for every error of the realm.
  reach(() => new ErrorClass(""));

  /** Freezes `roots` and every object reachable from them through properties (not read through getters) and prototypes. */
  function freezeAll(roots: unknown[]): void {
    const seen = new Set<object>();
    const pending = [...roots];
    while (pending.length > 0) {
      const item = pending.pop();
      if ((typeof item !== "object" && typeof item !== "function") || item === null || seen.has(item)) continue;
      seen.add(item);
      freeze(item);
      pending.push(prototypeOf(item));
      for (const key of ownKeys(item)) {
        const descriptor = descriptorOf(item, key);
        if (descriptor === undefined) continue;
        pending.push(descriptor.value, descriptor.get, descriptor.set);
      }
    }
  }
  freezeAll([globalThis, PureClassified, ...hidden]);

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
      return new NewFunction(...names, `"use strict"; return (${source});`) as Maker;
    } catch (error) {
      if (!(error instanceof SyntaxErrorClass)) throw error;
      let holder: Maker;
      try {
        holder = new NewFunction(...names, `"use strict"; return ({ ${source.startsWith("#") ? source.slice(1) : source}\n});`) as Maker;
      } catch {
        throw error;
      }
      return (...captured) => {
        const members = values(descriptorsOf(holder(...captured)));
        if (members.length !== 1) throw error;
        return members[0]!.value ?? members[0]!.get ?? members[0]!.set;
      };
    }
  }

  /** The job's value as JSON text. */
  function run(job: PureJob): string {
    const names = keys(job.captures);
    const classified = job.classifiedValues.map((value) => new PureClassified(value));
    const captured = names.map((name) => {
      const capture = job.captures[name]!;
      return "plain" in capture ? capture.plain : "classified" in capture ? classified[capture.classified] : undefined;
    });
    const fn = functionOf(names, job.source)(...captured);
    if (typeof fn !== "function") throw new TypeErrorClass("map/flatMap: not a function");
    const result = fn(job.value);
    if (job.flat && !(result instanceof PureClassified)) throw new TypeErrorClass("flatMap: the function must return a Classified value");
    const value = PureClassified.unwrap(result);
    if (value instanceof PromiseClass) throw new TypeErrorClass("map/flatMap: the function must be synchronous (it returned a Promise)");
    // Only JSON data can be kept: made into it now, so a failure is recorded as this map's.
    const json: string | undefined = stringify(value);
    return json === undefined ? "null" : json;
  }

  /** Why the job failed, from what its function threw (see UNREADABLE_THROW). */
  function whyFailed(error: unknown): string {
    try {
      const why = error instanceof ErrorClass ? `${error.name}: ${error.message}` : text(error);
      return typeof why === "string" ? why : unreadableThrow;
    } catch {
      return unreadableThrow;
    }
  }

  return (line, seed) => {
    state0 = (BigInt(seed[0]) << 32n) | BigInt(seed[1]) || 1n;
    state1 = (BigInt(seed[2]) << 32n) | BigInt(seed[3]) || 1n;
    const job = parse(line) as PureJob;
    return [
      job.id,
      () => {
        try {
          return '"ok":true,"value":' + run(job);
        } catch (error) {
          return '"ok":false,"error":' + stringify(whyFailed(error));
        }
      },
    ];
  };
}

/**
 * The jobs' realm: a V8 context of its own, with an ordinary global (not one that looks its names
 * up on an object of this realm: through such an object's inherited `constructor`, code in the
 * context reached this realm's Function, and from there everything here), set up by jobRealm.
 * Nothing of this realm is handed in, and only primitives come back (checked in the loop below),
 * so a function can reach no object the evaluator itself uses: not the reader of the next job,
 * nor what writes the replies.
 */
const prepare = (runInContext(`(${jobRealm.toString()})`, createContext(constants.DONT_CONTEXTIFY)) as typeof jobRealm)(
  READ_AS_TEXT,
  UNREADABLE_THROW,
  PURE_CAPTURES_GLOBAL,
);

/** A random 32-bit number (a piece of a job's Math.random state). */
function randomWord(): number {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}

/** The reply to a job whose function broke even how its failure is told (its stack ran out there, say). */
function unreadable(id: number): void {
  reply({ id, ok: false, error: UNREADABLE_THROW });
}

reply({ id: PURE_READY_ID, ok: true, value: null });
for (let line = readLine(); line !== null; line = readLine()) {
  // The job as read by the realm's frozen built-ins, before its function runs: the host's job's id.
  const prepared = prepare(line, [randomWord(), randomWord(), randomWord(), randomWord()]);
  const id = prepared[0];
  const fields = prepared[1];
  if (typeof id !== "number" || typeof fields !== "function") throw new TypeError("the pure evaluator could not read a job");
  let answer: unknown = null;
  try {
    answer = fields();
  } catch {
    // Not read: what the function threw belongs to its realm, and reading it runs its code.
  }
  if (typeof answer === "string") write(`{"id":${id},${answer}}\n`);
  else unreadable(id);
}
