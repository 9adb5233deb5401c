// Reading newline-ended lines from a synchronous byte source: the sandbox's channel reads the
// host's frames with it, and the pure evaluator its jobs. Shared by both, inside Deno: it must
// stay dependency-free, like protocol.ts.

/** Why no line came: the source ended, or the line ran past its limit. */
export type NoLine = "closed" | "too-long";

/** A TextDecoder, as far as a reader uses one. */
interface Decoder {
  decode(bytes: Uint8Array, options: { stream: boolean }): string;
}

/** The decoding and string operations a reader uses. */
interface LineOps {
  /** `bytes` decoded, a multi-byte character cut at their end kept for the next call. */
  decode(decoder: Decoder, bytes: Uint8Array): string;
  indexOf(text: string, search: string): number;
  slice(text: string, start: number, end?: number): string;
  /** The first `end` bytes of `bytes`, not copied. */
  subarray(bytes: Uint8Array, end: number): Uint8Array;
}

/** Through the prototypes as they are at each call. */
const OPS_AS_CALLED: LineOps = {
  decode: (decoder, bytes) => decoder.decode(bytes, { stream: true }),
  indexOf: (text, search) => text.indexOf(search),
  slice: (text, start, end) => text.slice(start, end),
  subarray: (bytes, end) => bytes.subarray(0, end),
};

/**
 * Taken as this module loads, before any agent code runs. Agent code can replace the methods on
 * the prototypes (TextDecoder's decode, String's indexOf and slice), and the sandbox reads a
 * session's next snippet from the host after earlier snippets have run: through the prototypes,
 * a snippet's replacement decode() or slice() turned the next snippet, as read, into code of its
 * own that the validator had never seen. No array is used either: a piece pushed onto one goes
 * through a setter a script defines on Array.prototype for its index.
 */
const OPS_AT_LOAD: LineOps = (() => {
  const apply = Reflect.apply;
  const decode = TextDecoder.prototype.decode;
  const subarrayOf = Uint8Array.prototype.subarray;
  const indexOf = String.prototype.indexOf;
  const slice = String.prototype.slice;
  const stream = Object.freeze({ __proto__: null, stream: true });
  return {
    decode: (decoder, bytes) => apply(decode, decoder, [bytes, stream]),
    indexOf: (text, search) => apply(indexOf, text, [search]),
    slice: (text, start, end) => apply(slice, text, end === undefined ? [start] : [start, end]),
    subarray: (bytes, end) => apply(subarrayOf, bytes, [0, end]),
  };
})();

/**
 * A reader of lines from `read` (which fills the buffer it is given and returns how much, or
 * null at the end), each at most `maxChars` characters, through the prototypes' methods as they
 * are at each call (the pure evaluator's; see protectedLineReader for the sandbox's channel).
 */
export function lineReader(read: (buffer: Uint8Array) => number | null, maxChars: number): () => string | NoLine {
  return readerWith(OPS_AS_CALLED, read, maxChars);
}

/** A reader as lineReader's, with the built-ins taken as this module loaded (see OPS_AT_LOAD): the sandbox's channel's. */
export function protectedLineReader(read: (buffer: Uint8Array) => number | null, maxChars: number): () => string | NoLine {
  return readerWith(OPS_AT_LOAD, read, maxChars);
}

/**
 * A long line arrives in many reads: the pieces are appended (V8 joins them once the line is
 * used), and only each new one is searched for the newline. Searched again from its start at
 * each read, a line was copied over and over: the pure evaluator took 3 s to read a job holding a
 * 27 MB classified value, and a map of it failed at its 5 s limit behind a few others.
 */
function readerWith(ops: LineOps, read: (buffer: Uint8Array) => number | null, maxChars: number): () => string | NoLine {
  const decoder: Decoder = new TextDecoder();
  const chunk = new Uint8Array(64 * 1024);
  /** What the last read brought past the line it ended. */
  let pending = "";
  return () => {
    const newline = ops.indexOf(pending, "\n");
    if (newline >= 0) {
      const line = ops.slice(pending, 0, newline);
      pending = ops.slice(pending, newline + 1);
      return line;
    }
    let line = pending;
    for (;;) {
      const n = read(chunk);
      if (n === null) return "closed";
      const text = ops.decode(decoder, ops.subarray(chunk, n));
      const end = ops.indexOf(text, "\n");
      if (end >= 0) {
        pending = ops.slice(text, end + 1);
        return line + ops.slice(text, 0, end);
      }
      line += text;
      if (line.length > maxChars) return "too-long";
    }
  };
}
