// Bytes read from a stream, kept in one buffer that grows as they come, up to a limit.

/** What the buffer starts with: it doubles as it fills. */
const FIRST_CAPACITY = 64 * 1024;

/**
 * A stream's bytes, copied into one buffer (doubled as it fills, never past the limit) rather than
 * kept as the chunks they came in: a chunk kept costs an object of its own whatever its size, and
 * a server that sends its answer one byte at a time (chunked encoding, a chunk per byte) made
 * tacit keep 8 Mi one-byte chunks for an 8 MiB answer, some 400 bytes each: 3.3 GB of the host's
 * memory for one request. Here the bytes cost at most twice the limit, however they came.
 */
export class CollectedBytes {
  private buffer: Buffer;
  private kept = 0;

  constructor(private readonly limit: number) {
    // Not sized by a Content-Length: a server's word, it would have a few bytes cost the limit.
    this.buffer = Buffer.alloc(Math.min(FIRST_CAPACITY, limit));
  }

  /** Keeps as much of `chunk` as the limit leaves room for; false when some of it did not fit. */
  append(chunk: Uint8Array): boolean {
    const taken = Math.min(chunk.length, this.limit - this.kept);
    if (this.kept + taken > this.buffer.length) {
      const grown = Buffer.alloc(Math.min(this.limit, Math.max(this.kept + taken, this.buffer.length * 2)));
      this.buffer.copy(grown, 0, 0, this.kept);
      this.buffer = grown;
    }
    this.buffer.set(chunk.subarray(0, taken), this.kept);
    this.kept += taken;
    return taken === chunk.length;
  }

  /** How many bytes are kept. */
  get size(): number {
    return this.kept;
  }

  /** The bytes kept (a view of the buffer: not to be kept past the next append). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.kept);
  }
}
