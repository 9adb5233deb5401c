// tacit's capability interface: the one source of truth for what agent code can call.
// Everything here is a global in agent code, and importable from "tacit":
//   import { println, readInput } from "tacit";
// Calls are synchronous (they block on the host's answer); `await` on them is harmless.
// Nothing else reaches the outside world: there is no `Deno`, `process`, `fetch`,
// `globalThis`, `eval` or `import()` in a tacit script.

/** Prints the values separated by spaces, then a newline. Strings print as they are. */
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
 * (`tacit run -`).
 */
declare function readInput(): string;

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
}
