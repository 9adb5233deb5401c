// A program whose report ("done") is followed, in the same write, by 4 MiB more: a protocol
// violation the host must see before it calls the program a success (runner/sandbox.ts
// reportWritten). Agent code can replace TextEncoder's encode and encodeInto, which the stub calls
// for every frame it writes. Deno writes the report and what follows it in system calls of their
// own (its stdout is line-buffered: up to the last newline, then the rest).

/**
 * The report, padded with JSON's whitespace to 64 KiB: what a pipe holds, and what the host reads
 * at once. Written first into the empty pipe (the snippet prints nothing before), it fills it, so
 * the host reads the report whole and nothing after it; the 4 MiB after it (never ended by a
 * newline) are written only as the host reads, the sandbox blocked in its write meanwhile. So the
 * host always takes the report before the rest comes: the order in which the race went wrong.
 */
export const REPORT_WITH_TAIL = `
const PIPE_BYTES = 64 * 1024;
const report = '{"type":"done"' + " ".repeat(PIPE_BYTES - '{"type":"done"}\\n'.length) + '}\\n';
const tail = '{"type":"post","action":' + "x".repeat(4 * 1024 * 1024);
const encode = TextEncoder.prototype.encode;
TextEncoder.prototype.encode = function (this: TextEncoder, text?: string): Uint8Array<ArrayBuffer> {
  if (text !== undefined && text.startsWith('{"type":"done"}')) return encode.call(this, report + tail);
  return encode.call(this, text);
};
// The stub encodes a frame into a buffer of its own where it fits: the report does not, it is encoded anew.
const encodeInto = TextEncoder.prototype.encodeInto;
TextEncoder.prototype.encodeInto = function (this: TextEncoder, text: string, into: Uint8Array): TextEncoderEncodeIntoResult {
  if (text.startsWith('{"type":"done"}')) return { read: 0, written: 0 };
  return encodeInto.call(this, text, into);
};
void 0; // Nothing for the session to show (which it would print before the report).
`;
