// What `tacit serve` reads from stdin before the MCP SDK does. The SDK's stdio transport
// buffers at most 10 MiB of a line; one longer message makes it throw and close, and the
// server then stopped, silently, taking every session with it. Here each line (one JSON-RPC
// message) is passed on whole if it fits MAX_MESSAGE_BYTES; a longer one is skipped to its
// end without being kept (only its first and last few KiB, to find its id), and reported, so
// that it can be answered with an error and the server reads on.

import { PassThrough, type Readable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, JSONRPCRequestSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { CollectedBytes } from "./collected-bytes.js";
import { quotedName } from "./mcp-arguments.js";
import { answerToUnseen } from "./mcp-request-ids.js";
import { UNREAD_ANSWERS_LIMIT_BYTES, UNREAD_MESSAGES_LIMIT } from "./unread-answers.js";

/** The longest message passed to the SDK: its own default buffer, so every message it took before still goes through. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** How much of each end of a skipped line is kept to find its id (ids are short, and sit first or last). */
const EDGE_BYTES = 4096;

const NEWLINE = 0x0a;

export type RequestId = string | number;

export interface OversizedMessage {
  bytes: number;
  /** The request's id, if it could be read from either end of the line; null for a notification or when it could not. */
  id: RequestId | null;
}

/**
 * Splits a byte stream into lines: `onLine` gets each line that fits (without its newline),
 * `onOversized` is told of each that does not.
 */
export class MessageLines {
  /**
   * The line so far, in one growing buffer rather than as the chunks it came in: a client that
   * wrote a message a byte at a time had each byte kept as an object of its own (an 8 MB message
   * took `tacit serve` from 84 MB to 405 MB; see CollectedBytes).
   */
  private pending: CollectedBytes;
  /** While skipping an oversized line: its first and (rolling) last bytes, and its length so far. */
  private skipping: { head: Buffer; tail: LastBytes; bytes: number } | null = null;

  constructor(
    private readonly limitBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onOversized: (message: OversizedMessage) => void,
  ) {
    this.pending = new CollectedBytes(limitBytes);
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      this.take(piece);
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      this.skipping.tail.add(piece);
      this.skipping.bytes += piece.length;
      return;
    }
    const before = this.pending.size;
    if (this.pending.append(piece)) return;
    // Past the limit: from here on the line is only counted, holding it would be what the limit is against.
    const kept = this.pending.bytes();
    const tail = new LastBytes();
    tail.add(kept);
    tail.add(piece.subarray(this.limitBytes - before));
    this.skipping = { head: Buffer.from(kept.subarray(0, EDGE_BYTES)), tail, bytes: before + piece.length };
    this.pending = new CollectedBytes(this.limitBytes);
  }

  private endLine(): void {
    if (this.skipping) {
      const { head, tail, bytes } = this.skipping;
      this.skipping = null;
      this.onOversized({ bytes, id: requestIdOf(head.toString("utf8"), tail.bytes().toString("utf8")) });
      return;
    }
    // Copied: the buffer is the next line's.
    const line = Buffer.from(this.pending.bytes());
    this.pending = new CollectedBytes(this.limitBytes);
    this.onLine(line);
  }
}

/**
 * The last EDGE_BYTES of a line being skipped, kept in a buffer of twice that, moved down when
 * full: a copy of the last bytes on each piece cost 4 KiB of copying per byte of a line sent a
 * byte at a time.
 */
class LastBytes {
  private readonly buffer = Buffer.alloc(2 * EDGE_BYTES);
  private size = 0;

  add(piece: Uint8Array): void {
    if (piece.length >= EDGE_BYTES) {
      this.buffer.set(piece.subarray(piece.length - EDGE_BYTES), 0);
      this.size = EDGE_BYTES;
      return;
    }
    if (this.size + piece.length > this.buffer.length) {
      // More than EDGE_BYTES are held here (the piece is shorter): the last EDGE_BYTES move down.
      this.buffer.copy(this.buffer, 0, this.size - EDGE_BYTES, this.size);
      this.size = EDGE_BYTES;
    }
    this.buffer.set(piece, this.size);
    this.size += piece.length;
  }

  bytes(): Buffer {
    return this.buffer.subarray(Math.max(0, this.size - EDGE_BYTES), this.size);
  }
}

/**
 * The id of a JSON-RPC message from the ends of its line alone: a top-level `"id"` that is
 * the first members' (`{"jsonrpc":"2.0","id":7,…`, as most clients write it) or the last
 * (`…,"jsonrpc":"2.0","id":7}`, as the MCP SDK writes it). Anything else, or an id that is
 * not a string or number, gives null: the message is then only logged.
 */
export function requestIdOf(head: string, tail: string): RequestId | null {
  return idFromStart(head) ?? idFromEnd(tail);
}

/** A JSON string token at `at` (the index of its opening quote): its end (after the closing quote), or -1. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return -1;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at]!)) at++;
  return at;
}

/** A string or number id token starting at `at`, parsed; null if it is not one or runs past the text. */
function idToken(text: string, at: number): RequestId | null {
  if (text[at] === '"') {
    const end = stringEnd(text, at);
    return end === -1 ? null : (JSON.parse(text.slice(at, end)) as string);
  }
  const number = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?=\s*[,}])/.exec(text.slice(at, at + 40));
  return number ? Number(number[0]) : null;
}

/** Walks the top-level members from the start of the line, skipping other values, until "id" or the text runs out. */
function idFromStart(text: string): RequestId | null {
  let at = skipSpace(text, 0);
  if (text[at] !== "{") return null;
  at++;
  for (;;) {
    at = skipSpace(text, at);
    if (text[at] !== '"') return null;
    const keyEnd = stringEnd(text, at);
    if (keyEnd === -1) return null;
    const key = text.slice(at, keyEnd);
    at = skipSpace(text, keyEnd);
    if (text[at] !== ":") return null;
    at = skipSpace(text, at + 1);
    if (key === '"id"') return idToken(text, at);
    // Skip the value: strings whole, brackets counted, up to the comma that ends it.
    let depth = 0;
    for (;;) {
      if (at >= text.length) return null;
      const c = text[at]!;
      if (c === '"') {
        const end = stringEnd(text, at);
        if (end === -1) return null;
        at = end;
        continue;
      }
      if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        if (depth === 0) return null; // the object ended without an id
        depth--;
      } else if (c === "," && depth === 0) break;
      at++;
    }
    at++;
  }
}

/**
 * Reads the last member backwards: the line ends `"id": <value> }`. Inside a JSON string every
 * quote is escaped, so the quotes found going backwards are the real ones.
 */
function idFromEnd(text: string): RequestId | null {
  let at = text.length - 1;
  const back = (): void => {
    while (at >= 0 && /\s/.test(text[at]!)) at--;
  };
  back();
  if (text[at] !== "}") return null;
  at--;
  back();
  const valueEnd = at + 1;
  if (text[at] === '"') {
    at--;
    while (at >= 0 && !(text[at] === '"' && !escaped(text, at))) at--;
    if (at < 0) return null;
  } else {
    while (at >= 0 && /[-+.eE0-9]/.test(text[at]!)) at--;
    at++;
    if (at === valueEnd) return null;
  }
  const valueStart = at;
  at--;
  back();
  if (text[at] !== ":") return null;
  at--;
  back();
  if (text.slice(at - 3, at + 1) !== '"id"' || escaped(text, at - 3)) return null;
  at -= 4;
  back();
  if (text[at] !== "," && text[at] !== "{") return null;
  try {
    const id: unknown = JSON.parse(text.slice(valueStart, valueEnd));
    return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
  } catch {
    return null;
  }
}

/** Whether the character at `at` is escaped (an odd number of backslashes before it). */
function escaped(text: string, at: number): boolean {
  let slashes = 0;
  for (let i = at - 1; i >= 0 && text[i] === "\\"; i--) slashes++;
  return slashes % 2 === 1;
}

/**
 * How much of the client's requests tacit serve keeps, unread by the transport, while it holds them
 * (the client has left too many answers unread: see unread-answers.ts, which pauses the transport's
 * stream): bytes, and lines. It stopped reading stdin at once, and a client that writes all its
 * requests before it reads any answer (a script's blocking writes: Python's `stdin.write` of 2,000
 * show_interface calls, 200 KB) blocked in its write while the server waited for it to read: each
 * waited for the other, for ever. Such a batch is now read and kept, as raw lines (not yet requests
 * the SDK holds, some 9 KB each), passed on in order once the client reads.
 */
export const QUEUED_REQUESTS_LIMIT_BYTES = 512 * 1024;
export const QUEUED_REQUESTS_LIMIT = 4000;

/**
 * How many requests past that bound are answered with an error while the client reads nothing, and
 * what their answers may take together. Past the bound the server stopped reading, and a client that
 * wrote more than 4,000 requests before it read any answer blocked in its write for ever. Each request
 * past it is now read, answered at once with an error (some 400 bytes, none of the SDK's state: the
 * request itself is dropped) and forgotten: 200,000 pings written unread left the server at 161 MB
 * resident once it stopped reading, against 191 MB before (it held the same 5,000, and refused none).
 * Past this bound too, stdin is not read until the client reads: a client that
 * never reads cannot have every request answered in bounded memory.
 */
export const REFUSED_REQUESTS_LIMIT = 10_000;
export const REFUSED_ANSWERS_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * The lines that are no request, kept past the bound all the same (a notification, such as a
 * cancellation of a request kept, or a response to the server's own request, such as a person's answer
 * to an approval: none can be answered with an error, and dropping one would lose it): at most as many
 * again as the bound. Past that, stdin is not read until the client reads.
 */
const KEPT_PAST_BOUND_FACTOR = 2;

/** A request read past the bound, to be answered with an error by its id: what the server says. */
export interface RefusedRequest {
  id: RequestId | null;
  code: number;
  problem: string;
}

/** What limitedStdin does with requests read while the transport holds as many as it may (see REFUSED_ANSWERS_LIMIT_BYTES). */
export interface PastTheBound {
  /** Answers one request with an error; returns the bytes the answer took. */
  refuse: (refused: RefusedRequest) => number;
  /** Told each time stdin is paused (the refusals, or the lines kept, past their bounds), with how many requests were refused. */
  onFull: (refusedCount: number) => void;
}

/** The JSON-RPC error code of a request refused past the bound: a server error (-32000 to -32099), the client's to retry. */
export const NOT_TAKEN_WHILE_UNREAD = -32003;

/** The lines passed on to the transport and not yet read by it, in order, and their bytes. */
export class PassedOn {
  private readonly lines: Buffer[] = [];
  private held = 0;

  push(line: Buffer): void {
    this.lines.push(line);
    this.held += line.length;
  }

  shift(): Buffer | undefined {
    const line = this.lines.shift();
    if (line !== undefined) this.held -= line.length;
    return line;
  }

  get count(): number {
    return this.lines.length;
  }

  get bytes(): number {
    return this.held;
  }
}

/**
 * Why a request read past the bound is not taken, or null for a line that is no request (a
 * notification or a response, kept). A request the SDK could not read gets the answer it would get
 * (unreadableRequest), which is never kept either.
 */
function refusalPastTheBound(line: Buffer, kept: PassedOn): RefusedRequest | null {
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    return unreadableRequest(line); // a Parse error, or null for a blank line
  }
  const unreadable = unreadableValue(value);
  if (unreadable !== null) return unreadable;
  // A bare `null`, number or string: no request, kept (and only reported, as any other time).
  if (typeof value !== "object" || value === null) return null;
  const { id, method } = value as { id?: RequestId; method?: unknown };
  if (typeof method !== "string" || id === undefined) return null;
  return {
    id,
    code: NOT_TAKEN_WHILE_UNREAD,
    problem:
      `request ${quotedName(method)} was not taken, and nothing in it ran: the client has left tacit serve's answers unread ` +
      `(more than ${UNREAD_BYTES_TEXT} or ${UNREAD_COUNT_TEXT} of them) and has written ${kept.count.toLocaleString("en-US")} more requests ` +
      "that wait for it to read them, as many as the server keeps. An MCP client must read what the server writes: read the answers already sent, then send it again",
  };
}

const UNREAD_BYTES_TEXT = `${UNREAD_ANSWERS_LIMIT_BYTES / (1024 * 1024)} MiB`;
const UNREAD_COUNT_TEXT = UNREAD_MESSAGES_LIMIT.toLocaleString("en-US");

/**
 * `stdin` as the SDK transport should read it: lines that fit, each passed on as one chunk
 * (so the transport's buffer never holds more than one), and oversized ones reported instead.
 * `ended` resolves when `stdin` ends or fails (the client went away), and the transport has read
 * every line passed on. While `stream` is paused (the client's answers are unread), lines are still read and kept in it,
 * up to QUEUED_REQUESTS_LIMIT*; requests past that are answered with an error and dropped
 * (`pastTheBound.refuse`), up to REFUSED_REQUESTS_LIMIT of them or REFUSED_ANSWERS_LIMIT_BYTES of answers; then `stdin` is paused too, until `stream` resumes.
 */
export function limitedStdin(
  stdin: Readable,
  limitBytes: number,
  onOversized: (message: OversizedMessage) => void,
  pastTheBound: PastTheBound,
): { stream: PassThrough; ended: Promise<void>; passedOn: PassedOn } {
  const stream = new PassThrough();
  // The lines passed on and not yet read by the transport, in order (see answerUnreadableRequests).
  const passedOn = new PassedOn();
  /** The requests refused since the stream was last paused, and their answers' bytes. */
  let refused = { count: 0, bytes: 0 };
  const full = (factor: number): boolean => passedOn.bytes >= factor * QUEUED_REQUESTS_LIMIT_BYTES || passedOn.count >= factor * QUEUED_REQUESTS_LIMIT;
  const stopReading = (): void => {
    if (stdin.isPaused()) return;
    stdin.pause();
    pastTheBound.onFull(refused.count);
  };
  const lines = new MessageLines(
    limitBytes,
    (line) => {
      if (stream.isPaused() && full(1)) {
        const refusal = refusalPastTheBound(line, passedOn);
        if (refusal !== null) {
          refused.count++;
          refused.bytes += pastTheBound.refuse(refusal);
          if (refused.bytes >= REFUSED_ANSWERS_LIMIT_BYTES || refused.count >= REFUSED_REQUESTS_LIMIT) stopReading();
          return;
        }
      }
      passedOn.push(line);
      stream.write(Buffer.concat([line, Buffer.from("\n")]));
      if (stream.isPaused() && full(KEPT_PAST_BOUND_FACTOR)) stopReading();
    },
    onOversized,
  );
  stdin.on("data", (chunk: Buffer) => lines.push(chunk));
  stream.on("resume", () => {
    refused = { count: 0, bytes: 0 };
    stdin.resume();
  });
  const stdinEnded = new Promise<void>((resolve) => {
    stdin.once("end", resolve);
    stdin.once("close", resolve);
    stdin.once("error", () => resolve());
  });
  // A last line without its newline is dropped, as the SDK itself would drop it.
  void stdinEnded.then(() => stream.end());
  // Ended once the transport has read every line kept for it too: a client that wrote its requests,
  // closed stdin and then read the answers (Python's communicate()) had those still kept dropped
  // unanswered, the server stopping as stdin ended. Said a turn of the event loop after the last line
  // is read, as stdin's own end comes: the requests just passed on are answered first (said at once,
  // the server stopped before answering the last of them).
  const ended = stdinEnded.then(() => (passedOn.count === 0 ? undefined : new Promise<void>((resolve) => stream.once("end", () => setImmediate(resolve)))));
  return { stream, ended, passedOn };
}

/**
 * Why `line` is a request the SDK cannot read, with the id and error code to answer it by, or
 * null: it is a response or a notification (no one to answer), or a valid request after all. A
 * line that is no JSON is a Parse error by the id null.
 * A batch (an array), or a request whose id is there but neither a string nor a number (null
 * included), is answered by the id null, as JSON-RPC 2.0 says an invalid request whose id cannot
 * be told is: the SDK only reported such a line, and the client waited for an answer that never came.
 */
export function unreadableRequest(line: Buffer): { id: RequestId | null; code: ErrorCode; problem: string } | null {
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    // JSON-RPC 2.0: a Parse error, by the id null. Only reported, it left a client that sent a
    // line it had broken (a raw newline in a string, say) waiting for an answer.
    if (line.toString("utf8").trim() === "") return null;
    return {
      id: null,
      code: ErrorCode.ParseError,
      problem:
        `a line of ${line.length} bytes is not JSON, and nothing in it ran: each MCP message is one JSON-RPC object on a line of its own ` +
        "(a newline inside a string is written \\n). Send it again as valid JSON",
    };
  }
  return unreadableValue(value);
}

/**
 * An id that is neither a string nor a number, named by its kind. Written out by JSON.stringify, an
 * array id nested 100,000 deep overflowed the stack in the transport's error handler, which closed
 * the transport and stopped the server, and an object id of megabytes was quoted whole.
 */
function idKind(id: unknown): string {
  if (id === null || typeof id === "boolean") return String(id);
  return Array.isArray(id) ? "an array" : typeof id === "object" ? "an object" : `a ${typeof id}`;
}

/** unreadableRequest for a line that is JSON, parsed. */
function unreadableValue(value: unknown): { id: RequestId | null; code: ErrorCode; problem: string } | null {
  if (Array.isArray(value)) {
    return {
      id: null,
      code: ErrorCode.InvalidRequest,
      problem:
        `a JSON-RPC batch (an array of ${value.length} message${value.length === 1 ? "" : "s"}) is not something MCP reads, and nothing in it ran: ` +
        "MCP has no batches (its 2025-06-18 version removed them, and this server never read them). Send each request as a line of its own, and match the answers by their ids",
    };
  }
  if (typeof value !== "object" || value === null) return null;
  const { id, method } = value as Record<string, unknown>;
  if (typeof method !== "string") return null;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isFinite(id)))) {
    if (!Object.hasOwn(value, "id")) return null; // a notification: never answered
    if (typeof id === "number") {
      // Past what a double holds (1e400): JSON.parse made it Infinity, which JSON.stringify writes as
      // null, and the client was told its id was null.
      return {
        id: null,
        code: ErrorCode.InvalidRequest,
        problem:
          `request ${quotedName(method)} has a numeric id too large to hold (it reads as ${id}), and nothing in it ran: an MCP request's id is a string, ` +
          `or a number up to ${Number.MAX_SAFE_INTEGER}. Send it again with an id of its own, one not used before in this session`,
      };
    }
    return {
      id: null,
      code: ErrorCode.InvalidRequest,
      problem:
        `request ${quotedName(method)} has the id ${idKind(id)}, and nothing in it ran: an MCP request's id is a string or a number, ` +
        "never null (a message without an id is a notification, which gets no answer). Send it again with an id of its own, one not used before in this session",
    };
  }
  const checked = JSONRPCRequestSchema.safeParse(value);
  if (checked.success) return null;
  return {
    id,
    code: ErrorCode.InvalidRequest,
    problem:
      `request ${quotedName(method)} is not a JSON-RPC request MCP reads, and nothing in it ran: ` +
      `${z.prettifyError(checked.error).replace(/\n/g, "; ")} (a request is {"jsonrpc": "2.0", "id", "method", "params": an object or left out}, nothing else)`,
  };
}

/**
 * Answers each request the SDK's transport cannot read with InvalidRequest, by its id (null for
 * a batch or an id that is no id, see unreadableRequest). The SDK
 * only reports such a line (onerror) and reads on, so a client that sent `"params": null` or a
 * member the schema does not know waited for an answer that never came. Every line passed on
 * ends in exactly one onmessage or one onerror, in order, so the line behind an error is the
 * first of `passedOn` not yet read.
 */
export function answerUnreadableRequests(transport: Transport, passedOn: PassedOn): void {
  const deliver = transport.onmessage;
  const report = transport.onerror;
  if (!deliver) throw new Error("tacit: connect the server to the transport before answering its unreadable requests");
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    passedOn.shift();
    deliver(message, extra);
  };
  transport.onerror = (error) => {
    const line = passedOn.shift();
    const unreadable = line === undefined ? null : unreadableRequest(line);
    if (unreadable !== null) {
      // `id: null` where the id cannot be told: JSON-RPC 2.0 says it MUST be null. The SDK's type
      // (MCP 2025-11-25's schema) would leave it out instead; a client that sends a batch or a null
      // id is no SDK client, and JSON-RPC is what it waits on.
      const answer = { jsonrpc: "2.0", id: unreadable.id, error: { code: unreadable.code, message: unreadable.problem } };
      void transport.send(answerToUnseen(answer) as JSONRPCMessage).catch(() => undefined);
    }
    report?.(error);
  };
}
