// Reading an audit log a line at a time, from its start to its end, in memory bounded by its
// longest line: `tacit audit verify` and `show` read logs of any size this way (a log read
// whole as one string could not pass 512 MiB, and took several times its size in memory).

import { createHash } from "node:crypto";
import { fstatSync, readSync } from "node:fs";

/** Longer lines are not tacit's (its longest, a command's words, hold at most 2 Mi characters: 12 MiB escaped): reported, not held. */
export const LOG_LINE_LIMIT_BYTES = 64 * 1024 * 1024;
const READ_CHUNK_BYTES = 1024 * 1024;

export interface LogLine {
  /** 1-based. */
  line: number;
  /** The line's bytes without its newline; null for a line past LOG_LINE_LIMIT_BYTES. */
  bytes: Buffer | null;
  /** Whether a newline ended it (only the file's last line may lack one). */
  ended: boolean;
}

/**
 * What one reading of the log went through: a digest of its first `upTo` bytes, and how many it
 * read. show checks the log, then reads it again to show it: a log changed between the two (by
 * whoever can write it, or a file of /proc that differs at each read) was shown under the first
 * reading's "verified". Comparing the readings tells it.
 */
export class ReadingDigest {
  private readonly hash = createHash("sha256");
  /** Bytes read, all of them (hashed: up to `upTo`). */
  bytes = 0;

  constructor(private readonly upTo = Infinity) {}

  update(chunk: Buffer): void {
    const take = Math.min(chunk.length, this.upTo - this.bytes);
    if (take > 0) this.hash.update(take === chunk.length ? chunk : chunk.subarray(0, take));
    this.bytes += chunk.length;
  }

  /** Whether this reading saw the same first bytes as `first` (a reading made with `upTo` = first's bytes): lines appended after them, as by a tacit still writing the log, do not count. */
  sameStartAs(first: ReadingDigest): boolean {
    return this.bytes >= first.bytes && this.hash.copy().digest("hex") === first.hash.copy().digest("hex");
  }
}

/** Each line of the file open at `fd`, read from its start to its end a chunk at a time; each chunk read also goes to `digest`. */
export function* logLines(fd: number, digest?: ReadingDigest): Generator<LogLine, void, undefined> {
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  let carried: Buffer[] = [];
  let carriedBytes = 0;
  let tooLong = false;
  let line = 0;
  let position = 0;
  for (;;) {
    const n = readSync(fd, chunk, 0, READ_CHUNK_BYTES, position);
    if (n === 0) break;
    digest?.update(chunk.subarray(0, n));
    position += n;
    let start = 0;
    for (let newline = chunk.indexOf(0x0a, start); newline !== -1 && newline < n; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      if (!tooLong && carriedBytes + piece.length > LOG_LINE_LIMIT_BYTES) tooLong = true;
      // Copied: the chunk is read into again.
      yield { line: ++line, bytes: tooLong ? null : carried.length === 0 ? Buffer.from(piece) : Buffer.concat([...carried, piece]), ended: true };
      carried = [];
      carriedBytes = 0;
      tooLong = false;
      start = newline + 1;
    }
    if (start < n) {
      const rest = chunk.subarray(start, n);
      if (!tooLong && carriedBytes + rest.length > LOG_LINE_LIMIT_BYTES) {
        tooLong = true;
        carried = [];
      }
      if (!tooLong) carried.push(Buffer.from(rest));
      carriedBytes += rest.length;
    }
  }
  if (carriedBytes > 0) yield { line: ++line, bytes: tooLong ? null : Buffer.concat(carried), ended: false };
}

/**
 * The whole file open at `fd`, read to its end, or null when it holds more than `limitBytes`.
 * Not in as many bytes as fstat says: a file whose size reads as 0 but that has content
 * (/proc/self/status, /proc/PID/cmdline) was read as empty, and a log with problems there was
 * verified as "0 lines … the log is empty", whatever it held.
 */
export function readWhole(fd: number, limitBytes: number): Buffer | null {
  const pieces: Buffer[] = [];
  let read = 0;
  // As large as the file says it is (plus one byte to find its end), if that is within the limit.
  let piece = Buffer.allocUnsafe(Math.min(fstatSync(fd).size, limitBytes) + 1);
  for (;;) {
    const n = readSync(fd, piece, 0, piece.length, read);
    if (n === 0) break;
    pieces.push(piece.subarray(0, n));
    read += n;
    if (read > limitBytes) return null;
    if (n === piece.length) piece = Buffer.allocUnsafe(Math.min(Math.max(READ_CHUNK_BYTES, read), limitBytes + 1 - read));
    else piece = piece.subarray(n);
  }
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, read);
}
