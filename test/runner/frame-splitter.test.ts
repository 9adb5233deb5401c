// The host's splitting of the sandbox's stdout into lines (runner/frames.ts FrameSplitter): its
// shortcuts for a chunk that is one whole line must give what decoding every chunk with the
// stream's fatal TextDecoder and splitting at line breaks gives, refusals included.

import { describe, expect, it } from "vitest";
import { FrameSplitter } from "../../runner/frames.js";

/** The splitting without shortcuts: each chunk through the decoder, the text split at every line break. */
class PlainSplitter {
  private pending = "";
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });
  constructor(private readonly limitChars: number) {}
  push(chunk: Uint8Array): string[] {
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      throw new Error("not UTF-8");
    }
    const lines = (this.pending + text).split("\n");
    this.pending = lines.pop() ?? "";
    if (this.pending.length > this.limitChars || lines.some((line) => line.length > this.limitChars)) throw new Error("too long");
    return lines;
  }
}

/** What a splitter makes of `chunks`, in order: lines, then "not UTF-8" or "too long" where it refused. */
function outcome(push: (chunk: Uint8Array) => string[], chunks: readonly Uint8Array[]): string[] {
  const seen: string[] = [];
  for (const chunk of chunks) {
    try {
      seen.push(...push(chunk));
    } catch (error) {
      const message = String((error as Error).message);
      seen.push(message.includes("UTF-8") ? "refused: not UTF-8" : "refused: too long");
      break;
    }
  }
  return seen;
}

/** A small seeded generator, so that a failure can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const PIECES = ["a", "{\"type\":\"request\",\"id\":1}", "\n", "\n", "é", "漢", "🙂", "\ufeff", "\u2028", " ", "x".repeat(40)];
const BAD = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe6, 0xbc]];

describe("FrameSplitter", () => {
  it("gives the lines and refusals the plain splitting gives, however the bytes are cut into chunks", () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = random(seed);
      const parts: number[] = [];
      const count = 1 + Math.floor(next() * 12);
      for (let i = 0; i < count; i++) {
        if (next() < 0.04) parts.push(...BAD[Math.floor(next() * BAD.length)]!);
        else parts.push(...Buffer.from(PIECES[Math.floor(next() * PIECES.length)]!, "utf8"));
      }
      if (next() < 0.7) parts.push(0x0a);
      const bytes = Buffer.from(parts);
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; ) {
        // Mostly whole lines, as the stub writes them; sometimes cut anywhere, sometimes empty.
        const lineEnd = bytes.indexOf(0x0a, at);
        const cut = next() < 0.6 && lineEnd >= 0 ? lineEnd + 1 : Math.min(bytes.length, at + Math.floor(next() * 8));
        chunks.push(bytes.subarray(at, cut));
        at = cut;
      }
      const limit = next() < 0.3 ? 30 : 1000;
      const splitter = new FrameSplitter(limit);
      const plain = new PlainSplitter(limit);
      expect(outcome((chunk) => splitter.push(chunk), chunks), `seed ${seed}`).toEqual(outcome((chunk) => plain.push(chunk), chunks));
    }
  });

  it("strips a byte order mark at the stream's start only, as the decoder does", () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const splitter = new FrameSplitter();
    expect(splitter.push(Buffer.concat([bom, Buffer.from("a\n")]))).toEqual(["a"]);
    expect(splitter.push(Buffer.concat([bom, Buffer.from("b\n")]))).toEqual(["\ufeffb"]);
  });

  it("refuses a whole line that is not UTF-8, or too long, after lines that were", () => {
    const splitter = new FrameSplitter(10);
    expect(splitter.push(Buffer.from("ok\n"))).toEqual(["ok"]);
    expect(() => splitter.push(Buffer.from([0x61, 0xff, 0x0a]))).toThrow(/not UTF-8/);
    const other = new FrameSplitter(10);
    expect(other.push(Buffer.from("ok\n"))).toEqual(["ok"]);
    expect(() => other.push(Buffer.from("x".repeat(11) + "\n"))).toThrow(/longer than 10/);
  });
});
