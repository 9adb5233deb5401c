// Canonical JSON and digests: what the audit log hashes, and how code, policies and results
// are named in it. A digest must not depend on the order in which an object's keys happened
// to be inserted, or the same policy written twice would get two names, and a line read back
// from the log (parsed, so its keys in file order) must hash as it did when it was written.

import { createRequire } from "node:module";

/**
 * JSON with object keys sorted (recursively, by UTF-16 code units: JavaScript's default
 * sort) and no whitespace. Everything else is exactly JSON.stringify's: toJSON is honoured,
 * undefined, functions and symbols are left out of objects and become null in arrays,
 * non-finite numbers become null, a bigint throws. So canonicalJson(JSON.parse(
 * JSON.stringify(v))) === canonicalJson(v), which is what lets a verifier recompute a hash
 * from the line it reads. A top-level value with no JSON form (undefined) gives "null".
 */
export function canonicalJson(value: unknown): string {
  return encode(value) ?? "null";
}

/** Keys in sort order, values all strings, finite numbers, booleans or null. */
function isSortedFlat(value: Record<string, unknown>): boolean {
  let previous: string | null = null;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    if (previous !== null && !(previous < key)) return false;
    const item = value[key];
    const type = typeof item;
    if (!(item === null || type === "string" || type === "boolean" || (type === "number" && Number.isFinite(item)))) return false;
    previous = key;
  }
  return true;
}

/** undefined means "no JSON form" (left out of objects), as with JSON.stringify. */
function encode(value: unknown): string | undefined {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === null || typeof value !== "object") return JSON.stringify(value) as string | undefined;
  if (Array.isArray(value)) return `[${value.map((item) => encode(item) ?? "null").join(",")}]`;
  // Fast path: a flat object whose keys are already in order (the log's own events are built
  // that way) is exactly JSON.stringify's output, made natively.
  if (isSortedFlat(value as Record<string, unknown>)) return JSON.stringify(value);
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const encoded = encode((value as Record<string, unknown>)[key]);
    if (encoded !== undefined) parts.push(`${JSON.stringify(key)}:${encoded}`);
  }
  return `{${parts.join(",")}}`;
}

type Sha256 = (data: string | Uint8Array, encoding: "hex" | "base64") => string;
/** SHA-256 as node:crypto gives it: any encoding, and hex of a string, each a function of its own. */
interface Sha256Functions {
  digest: Sha256;
  /**
   * The log hashes two strings a line, and digests every result: each layer of calls between them
   * and node:crypto costs in code that stays cold (a 1,000-read run's 3,000 lines), so this one
   * calls it directly: the events of 1,000 reads took about 1.5 ms less CPU (of 35; interleaved A/Bs, noisy).
   */
  hex: (data: string) => string;
}
let sha256: Sha256Functions | null = null;

/**
 * node:crypto, loaded on the first digest: loading it costs a run without an audit log
 * several milliseconds of start-up. crypto.hash (Node >= 20.12) is a one-shot digest, about
 * 3x faster than createHash for the short inputs the log hashes several times per action.
 */
function loadSha256(): Sha256Functions {
  const crypto = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  const oneShot = (crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex" | "base64") => string }).hash;
  if (oneShot) return { digest: (data, encoding) => oneShot("sha256", data, encoding), hex: (data) => oneShot("sha256", data, "hex") };
  const digest: Sha256 = (data, encoding) => crypto.createHash("sha256").update(data).digest(encoding);
  return { digest, hex: (data) => digest(data, "hex") };
}

/** Lower-case hex SHA-256 of a string's UTF-8 bytes (or of bytes). */
export function sha256Hex(data: string | Uint8Array): string {
  return (sha256 ??= loadSha256()).digest(data, "hex");
}

/** sha256Hex of strings, as the function itself: for a caller that hashes by the thousand (see Sha256Functions.hex). */
export function sha256HexFunction(): (data: string) => string {
  return (sha256 ??= loadSha256()).hex;
}

/** Base64 SHA-256 of a string's UTF-8 bytes. */
export function sha256Base64(data: string): string {
  return (sha256 ??= loadSha256()).digest(data, "base64");
}

/**
 * "sha256:<hex>": a string is digested as its UTF-8 bytes (so the digest of a script is
 * the digest of its file), any other value as its canonical JSON.
 */
export function digestOf(value: unknown): string {
  return `sha256:${(sha256 ??= loadSha256()).hex(typeof value === "string" ? value : canonicalJson(value))}`;
}
