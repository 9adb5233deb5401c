// Unguessable tokens for capabilities and classified handles. node:crypto is loaded on first
// use: most short runs never need a token, and loading it costs start-up time.

import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let randomBytes: ((size: number) => Buffer) | undefined;

/** `bytes` random bytes from the OS's CSPRNG, base64url-encoded. */
export function randomToken(bytes: number): string {
  randomBytes ??= (require("node:crypto") as typeof import("node:crypto")).randomBytes;
  return randomBytes(bytes).toString("base64url");
}

/** A random unsigned 32-bit integer from the OS's CSPRNG. */
export function randomUint32(): number {
  randomBytes ??= (require("node:crypto") as typeof import("node:crypto")).randomBytes;
  return randomBytes(4).readUInt32LE(0);
}
