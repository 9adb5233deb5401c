// The writer's form of line.ts: the same hash, chain and line text, made as UTF-8 bytes in
// buffers it reuses. Made as strings (lineText, eventHashOfJson, chainOf, then the batch
// joined), each line was built and copied four times over on the JavaScript heap, about 1.5 KB
// per line: at three lines a read, a third of what a run with --audit-log allocated beyond one
// without, paid back in scavenges. Here the pieces are written where they go and hashed there.
//
// What it makes must be exactly what line.ts defines (verify compares each line with lineText):
//   hash  = SHA-256 of the UTF-8 of `{"event":${eventJson},"seq":${seq},"time":${JSON.stringify(time)}}`
//   chain = SHA-256 of the ASCII of prev + hash
//   line  = lineText(seq, time, eventJson, prev, hash, chain) and "\n"
// seq is a positive integer (JSON.stringify gives its digits), the hashes lower-case hex.

import { sha256Hex } from "./digest.js";
import { RAW_CONTROLS } from "./line.js";
import { terminalSafe } from "../printable.js";

/**
 * Buffer's own native writers, which buf.write(text, at, encoding) reaches only through argument
 * checks and an encoding lookup. A line is about a dozen short pieces: made with buf.write, those
 * wrappers were over a third of a line's cost in a 1,000-read run (which never warms them up).
 * Undocumented, but on Buffer.prototype in every Node tacit supports; buf.write where they are not.
 */
interface NativeWrites {
  utf8Write(text: string, offset: number): number;
  latin1Write(text: string, offset: number): number;
}
const native = Buffer.prototype as Partial<NativeWrites>;
/** Writes `text` at `at` as UTF-8 (lone surrogates as U+FFFD, as buf.write does); returns the bytes written. */
const utf8: (target: Buffer, text: string, at: number) => number =
  typeof native.utf8Write === "function" ? (target, text, at) => (target as Buffer & NativeWrites).utf8Write(text, at) : (target, text, at) => target.write(text, at, "utf8");
/** Writes `text`, whose characters are all below U+0100 (digits, hex, ASCII), one byte each. */
const latin1: (target: Buffer, text: string, at: number) => number =
  typeof native.latin1Write === "function" ? (target, text, at) => (target as Buffer & NativeWrites).latin1Write(text, at) : (target, text, at) => target.write(text, at, "latin1");

const ascii = (text: string): Buffer => Buffer.from(text, "latin1");
const EVENT_OPEN = ascii('{"event":');
const SEQ_AFTER_EVENT = ascii(',"seq":');
const TIME_AFTER_SEQ = ascii(',"time":');
const CLOSE = ascii("}");
const SEQ_OPEN = ascii('{"seq":');
const EVENT_AFTER_TIME = ascii(',"event":');
const PREV = ascii(',"prev":"');
const HASH = ascii('","hash":"');
const CHAIN = ascii('","chain":"');
const LINE_END = ascii('"}\n');
/** Bytes of a line beyond its event's, time's and seq's: the keys, three hashes, quotes and newline. */
const LINE_FIXED = SEQ_OPEN.length + EVENT_AFTER_TIME.length + PREV.length + HASH.length + CHAIN.length + LINE_END.length + 3 * 64 + 32;

/** What the lines in a LineBytes hold: lines and bytes, written to a file by the caller. */
export class LineBytes {
  private out: Buffer;
  private used = 0;
  private count = 0;
  private scratch = Buffer.allocUnsafe(4096);

  constructor(private readonly capacity = 128 * 1024) {
    this.out = Buffer.allocUnsafe(capacity);
  }

  /** Lines held. */
  get lines(): number {
    return this.count;
  }

  /**
   * Adds the line of `eventJson` (canonical JSON) at `seq` and `time`, after the line whose chain is
   * `prev`; returns its hash and chain. `timeJson` is JSON.stringify(time). Returns false, adding
   * nothing, when the line may not fit in what is left: the caller writes the lines held (take),
   * and adds it again.
   */
  add(seq: number, time: string, timeJson: string, eventJson: string, prev: string): { hash: string; chain: string } | false {
    const seqText = String(seq);
    // At most 3 bytes of UTF-8 per UTF-16 code unit.
    const eventBound = eventJson.length * 3;
    const hashInput = EVENT_OPEN.length + eventBound + SEQ_AFTER_EVENT.length + seqText.length + TIME_AFTER_SEQ.length + timeJson.length * 3 + CLOSE.length;
    if (this.scratch.length < hashInput) this.scratch = Buffer.allocUnsafe(hashInput);
    const s = this.scratch;
    let n = put(s, 0, EVENT_OPEN);
    n += utf8(s, eventJson, n);
    n = put(s, n, SEQ_AFTER_EVENT);
    n += latin1(s, seqText, n);
    n = put(s, n, TIME_AFTER_SEQ);
    n += utf8(s, timeJson, n);
    n = put(s, n, CLOSE);
    const hash = sha256Hex(s.subarray(0, n));
    n = latin1(s, prev, 0);
    n += latin1(s, hash, n);
    const chain = sha256Hex(s.subarray(0, n));
    // The line: DEL and the C1 controls escaped as lineText escapes them (the hash is of the event as it is).
    const shown = RAW_CONTROLS.test(eventJson) ? terminalSafe(eventJson) : eventJson;
    const lineBound = LINE_FIXED + seqText.length + timeJson.length * 3 + shown.length * 3;
    if (lineBound > this.out.length - this.used) {
      if (this.count > 0) return false;
      // A line longer than the buffer on its own: a buffer of its size, until it is taken.
      this.out = Buffer.allocUnsafe(lineBound);
    }
    const o = this.out;
    let at = put(o, this.used, SEQ_OPEN);
    at += latin1(o, seqText, at);
    at = put(o, at, TIME_AFTER_SEQ);
    at += utf8(o, timeJson, at);
    at = put(o, at, EVENT_AFTER_TIME);
    at += utf8(o, shown, at);
    at = put(o, at, PREV);
    at += latin1(o, prev, at);
    at = put(o, at, HASH);
    at += latin1(o, hash, at);
    at = put(o, at, CHAIN);
    at += latin1(o, chain, at);
    this.used = put(o, at, LINE_END);
    this.count++;
    return { hash, chain };
  }

  /** The bytes of the lines held, which stay valid until the next add; the buffer is emptied. */
  take(): Buffer {
    const bytes = this.out.subarray(0, this.used);
    if (this.out.length > this.capacity) this.out = Buffer.allocUnsafe(this.capacity);
    this.used = 0;
    this.count = 0;
    return bytes;
  }
}

function put(target: Buffer, at: number, bytes: Buffer): number {
  target.set(bytes, at);
  return at + bytes.length;
}
