// The few Deno runtime APIs the bootstrap uses. Declared here rather than pulling in Deno's
// full lib so the sandbox code is type-checked against exactly what it touches.
declare namespace Deno {
  interface SyncReader { readSync(p: Uint8Array): number | null }
  interface SyncWriter { writeSync(p: Uint8Array): number }
  const stdin: SyncReader;
  const stdout: SyncWriter;
  function exit(code?: number): never;
  function inspect(value: unknown, options?: { colors?: boolean; depth?: number; strAbbreviateSize?: number }): string;
}
declare function addEventListener(type: "error" | "unhandledrejection" | "beforeunload", listener: (event: Event & { error?: unknown; reason?: unknown; preventDefault(): void }) => void): void;
declare class Event { readonly type: string; }
declare class TextEncoder { encode(input: string): Uint8Array; encodeInto(source: string, destination: Uint8Array): { read: number; written: number } }
declare class TextDecoder { constructor(label?: string, options?: { fatal?: boolean }); decode(input?: Uint8Array, options?: { stream?: boolean }): string }
declare function atob(data: string): string;
declare class Blob { constructor(parts: string[], options?: { type?: string }) }
declare const URL: { createObjectURL(blob: Blob): string; revokeObjectURL(url: string): void };
declare function setTimeout(cb: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): number;
declare function clearTimeout(id?: number): void;
declare function setInterval(cb: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): number;
declare function clearInterval(id?: number): void;
declare var console: Record<string, (...args: unknown[]) => void>;
declare const crypto: { getRandomValues<T extends Uint8Array>(array: T): T };
