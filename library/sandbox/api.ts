// The agent-facing API as it exists inside the sandbox: every function turns into a request
// to the host through the channel (printing into a post, which waits for no answer).
// library/interface.d.ts declares exactly these.

import { MAX_PRINT_PARTS, PRINT_CHUNK_CHARS, type PrintPart } from "../protocol.js";
import type { Channel } from "./channel.js";
import { type ClassifiedApi, SENTINEL_PATTERN } from "./classified.js";
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

/** Splits formatted text into text and classified parts (found by their sentinels). */
function partsOf(text: string): PrintPart[] {
  const pieces = text.split(new RegExp(SENTINEL_PATTERN.source, "g"));
  // split() with one capture group alternates: text, handle, text, handle, …, text.
  const parts: PrintPart[] = [];
  pieces.forEach((piece, index) => {
    if (index % 2 === 1) parts.push({ classified: piece });
    else if (piece !== "") parts.push(piece);
  });
  return parts;
}

export function createApi(channel: Channel, inspect: Inspect, classified: ClassifiedApi): TacitApi {
  const sendParts = (parts: PrintPart[]): void => {
    if (parts.length > 0) channel.post({ kind: "Print", parts });
  };
  const emit = (text: string): void => {
    let batch: PrintPart[] = [];
    for (const part of partsOf(text)) {
      if (batch.length >= MAX_PRINT_PARTS) {
        sendParts(batch);
        batch = [];
      }
      if (typeof part !== "string") {
        batch.push(part);
        continue;
      }
      for (let start = 0; start < part.length; ) {
        let end = Math.min(start + PRINT_CHUNK_CHARS, part.length);
        // Never split a surrogate pair across two frames.
        if (end < part.length && /[\uD800-\uDBFF]/.test(part[end - 1] ?? "")) end--;
        batch.push(part.slice(start, end));
        if (end < part.length) {
          sendParts(batch);
          batch = [];
        }
        start = end;
      }
    }
    sendParts(batch);
  };
  const format = <R>(fn: () => R): R => classified.formatWithHandles(fn);
  return Object.freeze({
    println(...values: unknown[]): void {
      emit(format(() => formatValues(values, inspect)) + "\n");
    },
    print(...values: unknown[]): void {
      emit(format(() => formatValues(values, inspect)));
    },
    printf(format_: string, ...args: unknown[]): void {
      if (typeof format_ !== "string") throw new TypeError("printf: the first argument must be a format string");
      emit(format(() => formatPrintf(format_, args, inspect)));
    },
    readInput(): string {
      return channel.request({ kind: "ReadInput" });
    },
  });
}

/** console.* all print to the same place as println, one line per call. */
export function createConsole(api: TacitApi, inspect: Inspect, classified: ClassifiedApi): Record<string, (...args: unknown[]) => void> {
  const formatConsoleLine = (values: readonly unknown[]): string => classified.formatWithHandles(() => formatConsole(values, inspect));
  const line = (...values: unknown[]): void => {
    api.print(formatConsoleLine(values) + "\n");
  };
  const counts = new Map<string, number>();
  const timers = new Map<string, number>();
  let indent = "";
  const indented = (...values: unknown[]): void => {
    const text = formatConsoleLine(values);
    api.print(text.split("\n").map((l) => indent + l).join("\n") + "\n");
  };
  return Object.freeze({
    log: indented,
    info: indented,
    debug: indented,
    warn: indented,
    error: indented,
    trace: indented,
    dir: (value: unknown) => line(value),
    dirxml: indented,
    table: (value: unknown) => line(value),
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
