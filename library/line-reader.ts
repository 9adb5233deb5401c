// Reading newline-ended lines from a synchronous byte source: the sandbox's channel reads the
// host's frames with it, and the pure evaluator its jobs. Shared by both, inside Deno: it must
// stay dependency-free, like protocol.ts.

/** Why no line came: the source ended, or the line ran past its limit. */
export type NoLine = "closed" | "too-long";

/**
 * A reader of lines from `read` (which fills the buffer it is given and returns how much, or
 * null at the end), each at most `maxChars` characters. A long line arrives in many reads: the
 * pieces are kept, and only each new one is searched for the newline. Appended to one string
 * and searched again from its start at each read, a line was copied over and over: the pure
 * evaluator took 3 s to read a job holding a 27 MB classified value, and a map of it failed at
 * its 5 s limit behind a few others.
 */
export function lineReader(read: (buffer: Uint8Array) => number | null, maxChars: number): () => string | NoLine {
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(64 * 1024);
  /** What the last read brought past the line it ended. */
  let pending = "";
  return () => {
    const newline = pending.indexOf("\n");
    if (newline >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      return line;
    }
    const pieces = [pending];
    let length = pending.length;
    for (;;) {
      const n = read(chunk);
      if (n === null) return "closed";
      const text = decoder.decode(chunk.subarray(0, n), { stream: true });
      const end = text.indexOf("\n");
      if (end >= 0) {
        pieces.push(text.slice(0, end));
        pending = text.slice(end + 1);
        return pieces.length === 2 && pieces[0] === "" ? pieces[1]! : pieces.join("");
      }
      pieces.push(text);
      length += text.length;
      if (length > maxChars) return "too-long";
    }
  };
}
