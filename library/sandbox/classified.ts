// Classified values inside the sandbox: opaque objects holding only a host handle. The
// plaintext never enters this process. Every way of looking at one — toString, JSON,
// inspection, template strings — shows "Classified(***)".

import { type Capture, CLASSIFIED_MASK } from "../protocol.js";
import type { Channel } from "./channel.js";

const INSPECT = Symbol.for("Deno.customInspect");
/** Marks a classified value's place in formatted output; the printer turns it into a part. */
const SENTINEL_OPEN = "\u0000tacit:classified:";
const SENTINEL_CLOSE = "\u0000";
export const SENTINEL_PATTERN = /\u0000tacit:classified:([A-Za-z0-9_-]+)\u0000/;

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

  function isPlainData(value: unknown, seen = new Set<unknown>()): boolean {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) return true;
    if (typeof value !== "object" || seen.has(value)) return false;
    seen.add(value);
    if (Array.isArray(value)) return value.every((item) => isPlainData(item, seen));
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return false;
    return Object.values(value).every((item) => isPlainData(item, seen));
  }

  function describeKind(value: unknown): string {
    if (typeof value === "function") return "a function";
    if (typeof value === "object" && value !== null) {
      const name = (value as { constructor?: { name?: string } }).constructor?.name;
      if (name === "FileSystem" || name === "FileEntry") return `a ${name} capability`;
      return name ? `a ${name}` : "an object that is not plain data";
    }
    return `a ${typeof value}`;
  }

  function captureOf(name: string, value: unknown): Capture {
    const handle = typeof value === "object" && value !== null ? handles.get(value) : undefined;
    if (handle) return { classified: handle };
    if (value === undefined || isPlainData(value)) return { plain: value === undefined ? null : value };
    throw new TypeError(
      `map/flatMap: the function uses \`${name}\`, which is ${describeKind(value)}; a map function runs in a pure ` +
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
    if (typeof fn !== "function") throw new TypeError(`${method}(fn): fn must be a function`);
    const listed = captureLists.get(fn);
    const captures: Record<string, Capture> = {};
    for (const [name, value] of Object.entries(listed ? listed() : {})) captures[name] = captureOf(name, value);
    return wrap(
      channel.request({ kind: "ClassifiedMap", handle: handleOf(source, method), source: String(fn), captures, flat }),
    );
  }

  function classify<T>(value: T): Classified<T> {
    if (!isPlainData(value)) throw new TypeError(`classify(value): value must be plain data (strings, numbers, arrays, objects), not ${describeKind(value)}`);
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
