// Unguessable tokens for capabilities, classified handles and ids. The bytes come from the
// OS's CSPRNG, /dev/urandom, read a block at a time: reading it costs microseconds, where
// loading node:crypto (the fallback, for a system without /dev/urandom) costs milliseconds
// of every run's start-up. Each byte of a block is handed out once.

import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";

const BLOCK_BYTES = 4096;
let block: Buffer = Buffer.alloc(0);
let used = 0;

function fromUrandom(size: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync("/dev/urandom", "r");
  } catch {
    return null;
  }
  try {
    const bytes = Buffer.allocUnsafe(size);
    for (let filled = 0; filled < size; ) {
      const n = readSync(fd, bytes, filled, size - filled, null);
      if (n <= 0) return null;
      filled += n;
    }
    return bytes;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function fromNodeCrypto(size: number): Buffer {
  return (createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto")).randomBytes(size);
}

/** `size` bytes from the OS's CSPRNG, never handed out before. */
export function randomBytes(size: number): Buffer {
  if (used + size > block.length) {
    const wanted = Math.max(size, BLOCK_BYTES);
    block = fromUrandom(wanted) ?? fromNodeCrypto(wanted);
    used = 0;
  }
  const bytes = Buffer.from(block.subarray(used, used + size));
  // Handed-out bytes are wiped from the block: nothing keeps a second copy of a token.
  block.fill(0, used, used + size);
  used += size;
  return bytes;
}

/** `bytes` random bytes, base64url-encoded. */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString("base64url");
}

/** A random unsigned 32-bit integer. */
export function randomUint32(): number {
  return randomBytes(4).readUInt32LE(0);
}
