// The agent-facing API as it exists inside the sandbox: every function turns into a request
// to the host through the channel. library/interface.d.ts declares exactly these.

import { PRINT_CHUNK_CHARS } from "../protocol.js";
import type { Channel } from "./channel.js";
import { formatConsole, formatPrintf, formatValues, type Inspect } from "./format.js";

export class SecurityError extends Error {
  override name = "SecurityError";
}

export interface TacitApi {
  println(...values: unknown[]): void;
  print(...values: unknown[]): void;
  printf(format: string, ...args: unknown[]): void;
  readInput(): string;
}

export function createApi(channel: Channel, inspect: Inspect): TacitApi {
  const emit = (text: string): void => {
    for (let start = 0; start < text.length; ) {
      let end = Math.min(start + PRINT_CHUNK_CHARS, text.length);
      // Never split a surrogate pair across two frames.
      if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1] ?? "")) end--;
      channel.request({ kind: "Print", text: text.slice(start, end) });
      start = end;
    }
  };
  return Object.freeze({
    println(...values: unknown[]): void {
      emit(formatValues(values, inspect) + "\n");
    },
    print(...values: unknown[]): void {
      emit(formatValues(values, inspect));
    },
    printf(format: string, ...args: unknown[]): void {
      if (typeof format !== "string") throw new TypeError("printf: the first argument must be a format string");
      emit(formatPrintf(format, args, inspect));
    },
    readInput(): string {
      return channel.request({ kind: "ReadInput" });
    },
  });
}

/** console.* all print to the same place as println, one line per call. */
export function createConsole(api: TacitApi, inspect: Inspect): Record<string, (...args: unknown[]) => void> {
  const line = (...values: unknown[]): void => {
    api.print(formatConsole(values, inspect) + "\n");
  };
  const counts = new Map<string, number>();
  const timers = new Map<string, number>();
  let indent = "";
  const indented = (...values: unknown[]): void => {
    const text = formatConsole(values, inspect);
    api.print(text.split("\n").map((l) => indent + l).join("\n") + "\n");
  };
  return Object.freeze({
    log: indented,
    info: indented,
    debug: indented,
    warn: indented,
    error: indented,
    trace: indented,
    dir: (value: unknown) => line(inspect(value)),
    dirxml: indented,
    table: (value: unknown) => line(inspect(value)),
    assert: (condition: unknown, ...values: unknown[]) => {
      if (!condition) indented("Assertion failed" + (values.length ? ":" : ""), ...values);
    },
    count: (label: unknown = "default") => {
      const key = String(label);
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      indented(`${key}: ${n}`);
    },
    countReset: (label: unknown = "default") => void counts.delete(String(label)),
    group: (...values: unknown[]) => {
      if (values.length) indented(...values);
      indent += "    ";
    },
    groupCollapsed: (...values: unknown[]) => {
      if (values.length) indented(...values);
      indent += "    ";
    },
    groupEnd: () => void (indent = indent.slice(4)),
    time: (label: unknown = "default") => void timers.set(String(label), Date.now()),
    timeLog: (label: unknown = "default", ...values: unknown[]) => {
      const start = timers.get(String(label));
      if (start !== undefined) indented(`${String(label)}: ${Date.now() - start}ms`, ...values);
    },
    timeEnd: (label: unknown = "default") => {
      const start = timers.get(String(label));
      if (start !== undefined) indented(`${String(label)}: ${Date.now() - start}ms`);
      timers.delete(String(label));
    },
    clear: () => undefined,
  });
}
