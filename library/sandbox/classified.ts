// Classified values inside the sandbox: opaque objects holding only a host handle. The
// plaintext never enters this process. Every way of looking at one — toString, JSON,
// inspection, template strings — shows "Classified(***)".

import { type Capture, CLASSIFIED_MASK, MAX_VALUE_DEPTH } from "../protocol.js";
import type { Channel } from "./channel.js";

const INSPECT = Symbol.for("Deno.customInspect");
/**
 * A word drawn anew in each sandbox (64 random bits) that every marker below starts with: text
 * that came from outside (a file, an HTTP answer, a command's output, piped input) cannot hold
 * one by chance or design. The markers were a fixed "\u0000tacit:classified:<handle>\u0000", so a
 * file holding one, printed as read, was taken for a classified value's place: its text vanished
 * from the output and the host ended the run as a protocol violation (a hostile page could stop
 * any script that printed it). A marker is as long as before (44 characters): Deno's inspect lays
 * an object out on one line or several by the length of what it holds.
 */
const SENTINEL_WORD = Array.from(crypto.getRandomValues(new Uint8Array(8)), (byte) => byte.toString(16).padStart(2, "0")).join("");
/** Marks a classified value's place in formatted output; the printer turns it into a part. */
const SENTINEL_OPEN = `\u0000${SENTINEL_WORD}:`;
const SENTINEL_CLOSE = "\u0000";
export const SENTINEL_PATTERN = new RegExp(`\u0000${SENTINEL_WORD}:([A-Za-z0-9_-]+)\u0000`);

/**
 * The deepest plain data classify() and a map function's captures take: the frame it travels
 * in must not nest past MAX_VALUE_DEPTH (the host ends a sandbox that sends a deeper one), and
 * the frame and action around a value take a few levels of that.
 */
const PLAIN_DEPTH_LIMIT = MAX_VALUE_DEPTH - 10;

/** "a Map", "an Array", "a bigint", "an object". */
const withArticle = (word: string): string => `${/^[aeiou]/i.test(word) ? "an" : "a"} ${word}`;

/** How V8 shows the source of a built-in or bound function. */
const NATIVE_SOURCE = /\{\s*\[native code\]\s*\}$/;

/** Taken before any script runs: a function's kind as V8 tags it ("[object AsyncFunction]"). */
const objectTag = Object.prototype.toString;

/**
 * Why `fn`, by its kind, cannot give map/flatMap a value, or null. The evaluator calls it once and
 * keeps what it returns: an async function's Promise is no value (the map failed, out of the
 * script's sight), a generator's iterator became {} (a wrong value kept without a word), and a
 * class cannot be called. Its kind depends on no plaintext, so the script is told at the call.
 */
function unfitKind(fn: object, source: string, flat: boolean): string | null {
  const example = flat ? "flatMap((value) => classify(value.trim()))" : "map((value) => value.trim())";
  const kind = objectTag.call(fn);
  if (kind === "[object AsyncFunction]") {
    return (
      "fn is an async function: the pure evaluator calls it once and keeps what it returns, " +
      `and a Promise is no value (nothing there needs awaiting: it has no I/O). Drop \`async\` and return the value itself, such as ${example}.`
    );
  }
  if (kind === "[object GeneratorFunction]" || kind === "[object AsyncGeneratorFunction]") {
    return (
      `fn is ${kind === "[object GeneratorFunction]" ? "a" : "an async"} generator function: called, it returns an iterator, not the values it yields, and an iterator is no value the evaluator can keep. ` +
      `Return the value itself (collect what it would yield in an array), such as ${example}.`
    );
  }
  // A class's `prototype` cannot be written (a function's can; a method, such as one named
  // "class" whose source begins `class(value) {`, has none).
  if (/^class\b/.test(source) && Object.getOwnPropertyDescriptor(fn, "prototype")?.writable === false) return `fn is a class, which cannot be called without \`new\`. Pass a function that computes the value, such as ${example}.`;
  return null;
}

/** The capture list the import rewriter attaches to a function passed to map/flatMap. */
const captureLists = new WeakMap<object, () => Record<string, unknown>>();

/** Called by rewritten code: `x.map(fn)` becomes `x.map(__tacitPure(fn, () => ({ a, b })))`. */
export function attachCaptures<F extends object>(fn: F, captures: () => Record<string, unknown>): F {
  if ((typeof fn === "function" || typeof fn === "object") && fn !== null) captureLists.set(fn, captures);
  return fn;
}

export function createClassifiedApi(channel: Channel) {
  const handles = new WeakMap<object, string>();
  let formatting = 0;

  /**
   * Why `value` is not plain data (strings, finite numbers, booleans, null, and arrays and plain objects
   * of them, acyclic, at most PLAIN_DEPTH_LIMIT deep), or null when it is. Walked with a stack of
   * its own: recursion overflowed Deno's stack at 5,000 levels, and the script got a bare
   * RangeError. An object met twice on different branches is plain data (JSON repeats it), not
   * only one met inside itself: [a, a] was refused as "not a Array".
   */
  function notPlainData(value: unknown): string | null {
    const finished = new Set<object>();
    const onPath = new Set<object>();
    const stack: Array<{ value: unknown; depth: number } | { leave: object }> = [{ value, depth: 0 }];
    while (stack.length > 0) {
      const next = stack.pop()!;
      if ("leave" in next) {
        onPath.delete(next.leave);
        finished.add(next.leave);
        continue;
      }
      const item = next.value;
      // NaN and ±Infinity are numbers JSON has no place for: they reached the evaluator and the
      // store as null, and a value computed with one was another than the script's, without a word.
      if (typeof item === "number" && !Number.isFinite(item)) return `${String(item)}, a number JSON cannot hold (pass it as a string, String(x), or as null)`;
      if (item === null || typeof item === "string" || typeof item === "number" || typeof item === "boolean") continue;
      if (typeof item !== "object") return describeKind(item);
      if (finished.has(item)) continue;
      if (onPath.has(item)) return "a value that contains itself (JSON cannot hold a cycle)";
      if (next.depth >= PLAIN_DEPTH_LIMIT) return `a value nested more than ${PLAIN_DEPTH_LIMIT} levels deep (the most the host takes: flatten it, or classify its parts)`;
      let items: unknown[];
      if (Array.isArray(item)) items = item;
      else {
        const proto = Object.getPrototypeOf(item);
        if (proto !== Object.prototype && proto !== null) return describeKind(item);
        items = Object.values(item);
      }
      onPath.add(item);
      stack.push({ leave: item });
      for (let i = items.length - 1; i >= 0; i--) stack.push({ value: items[i], depth: next.depth + 1 });
    }
    return null;
  }

  /** What describeKind says of a Classified value: plain data may not hold one (its callers say what to do instead). */
  const A_CLASSIFIED = "a Classified value";

  function describeKind(value: unknown): string {
    if (typeof value === "object" && value !== null && handles.has(value)) return A_CLASSIFIED;
    if (typeof value === "function") return "a function";
    if (typeof value === "object" && value !== null) {
      const name = (value as { constructor?: { name?: string } }).constructor?.name;
      if (name === "FileSystem" || name === "FileEntry") return `a ${name} capability`;
      return name ? withArticle(name) : "an object that is not plain data";
    }
    if (value === undefined) return "undefined (JSON has no undefined: use null)";
    return withArticle(typeof value);
  }

  function captureOf(name: string, value: unknown): Capture {
    const handle = typeof value === "object" && value !== null ? handles.get(value) : undefined;
    if (handle) return { classified: handle };
    // As itself: sent as null (JSON has no undefined), the function read null where the script reads undefined.
    if (value === undefined) return { undefined: true };
    const not = notPlainData(value);
    if (not === null) return { plain: value };
    // A Classified value crosses by a name of its own; one inside an array or object did not,
    // and the message said only that the evaluator takes "plain data … and Classified values".
    if (not === A_CLASSIFIED) {
      throw new TypeError(
        `map/flatMap: the function uses \`${name}\`, which holds a Classified value inside an array or object; a Classified value ` +
          "reaches the pure evaluator only when the function uses it by a name of its own. Name it before the call " +
          `(\`const inner = ${name}.key;\`, or one name for each of a list's values) and use that name in the function.`,
      );
    }
    throw new TypeError(
      `map/flatMap: the function uses \`${name}\`, which is or holds ${not}; a map function runs in a pure ` +
        "evaluator that can only receive plain data (strings, numbers, arrays, objects) and Classified values. " +
        "Compute what it needs before calling map, or define helpers inside the function.",
    );
  }

  class Classified<T = unknown> {
    private constructor() {
      throw new TypeError("Classified values come from classify(), readClassified() or map()/flatMap()");
    }

    map<U>(fn: (value: T) => U): Classified<U> {
      return transform(this, fn, false) as Classified<U>;
    }

    flatMap<U>(fn: (value: T) => Classified<U>): Classified<U> {
      return transform(this, fn, true) as Classified<U>;
    }

    toString(): string {
      return CLASSIFIED_MASK;
    }

    toJSON(): string {
      return CLASSIFIED_MASK;
    }

    [INSPECT](): string {
      const handle = handles.get(this);
      return formatting > 0 && handle ? SENTINEL_OPEN + handle + SENTINEL_CLOSE : CLASSIFIED_MASK;
    }

    [Symbol.toPrimitive](): string {
      return CLASSIFIED_MASK;
    }
  }
  Object.freeze(Classified.prototype);

  function wrap(handle: string): Classified {
    const value = Object.create(Classified.prototype) as Classified;
    handles.set(value, handle);
    return Object.freeze(value);
  }

  function handleOf(value: unknown, what: string): string {
    const handle = typeof value === "object" && value !== null ? handles.get(value) : undefined;
    if (!handle) throw new TypeError(`${what} expects a Classified value (from classify(), readClassified() or map())`);
    return handle;
  }

  function transform(source: Classified, fn: unknown, flat: boolean): Classified {
    const method = flat ? "flatMap" : "map";
    // A getter passed as `map(o.g)` gives its value, not the function: say what came instead.
    if (typeof fn !== "function") {
      throw new TypeError(
        `${method}(fn): fn must be a function, and it is ${fn === undefined || fn === null ? String(fn) : describeKind(fn)}. ` +
          `Pass the function itself, such as ${flat ? "flatMap((value) => classify(value.trim()))" : "map((value) => value.trim())"}; ` +
          "a getter (`map(o.g)`) gives its value, not the function.",
      );
    }
    const text = String(fn);
    // Only the function's source reaches the pure evaluator, and a built-in or bound function
    // has none: map(String) failed there every time, out of the script's sight. It depends on
    // no plaintext, so the script is told here.
    if (NATIVE_SOURCE.test(text)) {
      throw new TypeError(
        `${method}(fn): fn is a built-in or bound function, whose source ("${text.length > 60 ? text.slice(0, 60) + "…" : text}") cannot be sent to the pure evaluator ` +
          `that runs it on the plaintext. Pass a function written out instead, such as ${flat ? "flatMap((value) => other.map((o) => String(value) + o))" : "map((value) => String(value))"}.`,
      );
    }
    const unfit = unfitKind(fn, text, flat);
    if (unfit !== null) throw new TypeError(`${method}(fn): ${unfit}`);
    const listed = captureLists.get(fn);
    const captures: Record<string, Capture> = {};
    for (const [name, value] of Object.entries(listed ? listed() : {})) {
      // As a key of the object the captures travel in, `__proto__` sets its prototype: the value
      // was dropped on the way, and the function read `undefined` for it where an array's map
      // reads the variable (a wrong value written without a word). It depends on no plaintext.
      if (name === "__proto__") {
        throw new TypeError(
          `${method}(fn): the function uses a variable named \`__proto__\`, which cannot be handed to the pure evaluator ` +
            "(as a property name it sets an object's prototype instead). Rename the variable, such as `const proto = __proto__;`, and use that name in the function.",
        );
      }
      // The `arguments` of the function around the call: the evaluator's would be those of what
      // makes the function, and strict mode refuses the name as a parameter (the map failed every
      // time, out of sight). It depends on no plaintext.
      if (name === "arguments") {
        throw new TypeError(
          `${method}(fn): the function uses \`arguments\` of the function around the call, which cannot be handed to the pure evaluator. ` +
            "Copy the values it needs into consts first, such as `const suffix = arguments[1];`, and use those names in the function.",
        );
      }
      captures[name] = captureOf(name, value);
    }
    return wrap(channel.request({ kind: "ClassifiedMap", handle: handleOf(source, method), source: text, captures, flat }));
  }

  function classify<T>(value: T): Classified<T> {
    const not = notPlainData(value);
    if (not === A_CLASSIFIED) {
      throw new TypeError(
        isClassified(value)
          ? "classify(value): value is a Classified value already; use it as it is (classify() takes plain data)."
          : "classify(value): value holds a Classified value inside it, and classify() takes plain data only. Build the value " +
              "from the Classified ones with map and flatMap instead: secret.map((s) => ({ key: s })), or for two, " +
              "a.flatMap((x) => b.map((y) => ({ x, y }))).",
      );
    }
    if (not !== null) throw new TypeError(`classify(value): value must be plain data (strings, numbers, arrays, objects), not ${not}`);
    return wrap(channel.request({ kind: "Classify", value })) as Classified<T>;
  }

  /** Runs a formatter with classified values rendered as sentinels the printer can find. */
  function formatWithHandles<R>(format: () => R): R {
    formatting++;
    try {
      return format();
    } finally {
      formatting--;
    }
  }

  function isClassified(value: unknown): boolean {
    return typeof value === "object" && value !== null && handles.has(value);
  }

  return { Classified, classify, wrap, handleOf, isClassified, formatWithHandles };
}

export type ClassifiedApi = ReturnType<typeof createClassifiedApi>;
