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
 * What one reading of the log went through: the SHA-256 of each block of READ_CHUNK_BYTES it read
 * (the last one shorter), and how many bytes. show checks the log, then reads it again to show it:
 * a log changed between the two (by whoever can write it, or a file of /proc that differs at each
 * read) was shown under the first reading's "verified". A reading made to compare with `first`
 * checks each block as it is read, before any line of it is given: where it differs, the reading
 * stops there (`changed`), so no line shown is one the check did not read.
 */
export class ReadingDigest {
  private readonly blocks: Buffer[] = [];
  private lastBlockBytes = 0;
  private blockCount = 0;
  /** Bytes read. */
  bytes = 0;
  /** A reading compared with `first` met other bytes than it (or fewer): it stopped there. */
  changed = false;

  constructor(private readonly first: ReadingDigest | null = null) {}

  /** Takes the reading's next block; false (and `changed`) where it differs from the first reading's. */
  block(data: Buffer): boolean {
    const index = this.blockCount++;
    this.bytes += data.length;
    const first = this.first;
    if (first === null) {
      this.blocks.push(createHash("sha256").update(data).digest());
      this.lastBlockBytes = data.length;
      return true;
    }
    // Past what the first reading read: lines appended since, as by a tacit still writing the log.
    if (index >= first.blocks.length) return true;
    const expected = index === first.blocks.length - 1 ? first.lastBlockBytes : READ_CHUNK_BYTES;
    if (data.length < expected || !createHash("sha256").update(data.subarray(0, expected)).digest().equals(first.blocks[index]!)) {
      this.changed = true;
      return false;
    }
    return true;
  }

  /** The reading ended: one that read fewer bytes than the first changed too. */
  end(): void {
    if (this.first !== null && this.bytes < this.first.bytes) this.changed = true;
  }

  /** Whether `bytes` (a whole reading) begins with the bytes the `first` reading read. */
  static sameStart(first: ReadingDigest, bytes: Buffer): boolean {
    const again = new ReadingDigest(first);
    for (let at = 0; at < bytes.length && again.block(bytes.subarray(at, at + READ_CHUNK_BYTES)); at += READ_CHUNK_BYTES);
    again.end();
    return !again.changed;
  }
}

/**
 * Each line of the file open at `fd`, read from its start to its end a block of READ_CHUNK_BYTES at a
 * time (a read that gives fewer is continued: the blocks are the same whatever the reads give).
 * Each block goes to `digest`; one that differs from the reading it is compared with ends the lines.
 *
 * The reading ends where it first finds the file's end (a block cut short by it): what a writer
 * appends after that is left to a later reading. Read on, a live log's appended bytes became a
 * block of their own after a short one, and the whole reading that compares with this one (cut
 * into full blocks) said the log had changed while it was read, of a log that had only grown.
 */
export function* logLines(fd: number, digest?: ReadingDigest): Generator<LogLine, void, undefined> {
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  let carried: Buffer[] = [];
  let carriedBytes = 0;
  let tooLong = false;
  let line = 0;
  let position = 0;
  for (;;) {
    let n = 0;
    for (let got = -1; n < READ_CHUNK_BYTES && got !== 0; n += got) got = readSync(fd, chunk, n, READ_CHUNK_BYTES - n, position + n);
    if (n === 0) break;
    const reachedEnd = n < READ_CHUNK_BYTES;
    if (digest !== undefined && !digest.block(chunk.subarray(0, n))) return;
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
    if (reachedEnd) break;
  }
  digest?.end();
  if (digest?.changed === true) return;
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
