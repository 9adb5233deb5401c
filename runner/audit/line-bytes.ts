// The writer's batch of lines: line.ts's lines, hashes and chains, collected as UTF-8 bytes in a
// buffer it reuses, which the writer writes to the file in one call (see log.ts).
//
// What it makes must be exactly what line.ts defines (verify compares each line with lineText):
//   hash  = SHA-256 of the UTF-8 of `{"event":${eventJson},"seq":${seq},"time":${JSON.stringify(time)}}`
//   chain = SHA-256 of the ASCII of prev + hash
//   line  = lineText(seq, time, eventJson, prev, hash, chain) and "\n"
// seq is a positive integer (its digits are its JSON), the hashes lower-case hex.
//
// Each of the three is made as one string and handed to native code whole: hashed by
// crypto.hash, the line copied into the buffer by one utf8Write. A line is made cold (a
// 1,000-read run's 3,000 lines never warm the code up), where every JavaScript call counts:
// made before as a dozen pieces copied one by one into the buffer and into a scratch buffer
// hashed in place (two subarrays a line), 3,000 lines cost about 30 ms of CPU in a fresh
// process, and 18 ms this way, the same bytes. DEL and the C1 controls, which lineText escapes,
// are looked for once per batch, in its bytes (see holdsRawControls), not in each line's text.

import { chainOf, RAW_CONTROLS } from "./line.js";
import { sha256HexFunction } from "./digest.js";
import { terminalSafe } from "../printable.js";

/**
 * Buffer's own native UTF-8 writer, which buf.write(text, at, encoding) reaches only through
 * argument checks and an encoding lookup. Undocumented, but on Buffer.prototype in every Node
 * tacit supports; buf.write where it is not.
 */
const nativeUtf8Write = (Buffer.prototype as Partial<{ utf8Write(text: string, offset: number): number }>).utf8Write;
/** Writes `text` at `at` as UTF-8 (lone surrogates as U+FFFD, as buf.write does); returns the bytes written. */
const utf8: (target: Buffer, text: string, at: number) => number =
  typeof nativeUtf8Write === "function" ? (target, text, at) => nativeUtf8Write.call(target, text, at) : (target, text, at) => target.write(text, at, "utf8");

/** What the lines in a LineBytes hold: lines and bytes, written to a file by the caller. */
export class LineBytes {
  private out: Buffer;
  private used = 0;
  private count = 0;
  private readonly sha256Hex = sha256HexFunction();

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
  add(seq: number, timeJson: string, eventJson: string, prev: string): { hash: string; chain: string } | false {
    const hash = this.sha256Hex(`{"event":${eventJson},"seq":${seq},"time":${timeJson}}`);
    const chain = chainOf(prev, hash);
    // DEL and the C1 controls in the event are escaped when the lines are taken (see take), found in their bytes at once.
    const line = `{"seq":${seq},"time":${timeJson},"event":${eventJson},"prev":"${prev}","hash":"${hash}","chain":"${chain}"}\n`;
    // At most 3 bytes of UTF-8 per UTF-16 code unit.
    const bound = line.length * 3;
    if (bound > this.out.length - this.used) {
      if (this.count > 0) return false;
      // A line longer than the buffer on its own: a buffer of its size, until it is taken.
      this.out = Buffer.allocUnsafe(bound);
    }
    this.used += utf8(this.out, line, this.used);
    this.count++;
    return { hash, chain };
  }

  /** The bytes of the lines held, which stay valid until the next add; the buffer is emptied. */
  take(): Buffer {
    const made = this.out.subarray(0, this.used);
    const bytes = holdsRawControls(made) ? withRawControlsEscaped(made) : made;
    if (this.out.length > this.capacity) this.out = Buffer.allocUnsafe(this.capacity);
    this.used = 0;
    this.count = 0;
    return bytes;
  }
}

/**
 * Whether UTF-8 `bytes` hold DEL (0x7f) or a C1 control (U+0080..U+009F: 0xc2 then 0x80..0x9f). In
 * UTF-8 neither byte stands for anything else (0x7f is only DEL, 0xc2 only a lead byte), so two native
 * searches over a batch replace a regular expression test of every line (0.5 µs each in a cold
 * 1,000-read run, where almost no line holds one).
 */
function holdsRawControls(bytes: Buffer): boolean {
  if (bytes.indexOf(0x7f) >= 0) return true;
  for (let at = bytes.indexOf(0xc2); at >= 0; at = bytes.indexOf(0xc2, at + 1)) {
    const next = bytes[at + 1];
    if (next !== undefined && next >= 0x80 && next <= 0x9f) return true;
  }
  return false;
}

/**
 * The lines in `bytes` with DEL and the C1 controls escaped, as lineText escapes its event's: they can
 * stand only inside the event's JSON strings (the rest of a line is digits, hex and JSON syntax, and
 * canonical JSON escapes the C0 controls terminalSafe would also touch), so escaping the whole line is
 * escaping its event. The bytes are utf8Write's (a lone surrogate already U+FFFD), read back unchanged.
 */
function withRawControlsEscaped(bytes: Buffer): Buffer {
  const lines = bytes.toString("utf8").split("\n");
  return Buffer.from(lines.map((line) => (RAW_CONTROLS.test(line) ? terminalSafe(line) : line)).join("\n"), "utf8");
}
