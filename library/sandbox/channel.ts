// The sandbox end of the protocol: synchronous request/reply over stdin/stdout. The stub
// blocks on the host's reply (Deno.stdin.readSync), which is what makes the capability API
// synchronous, like TACIT's.

import {
  type Action,
  type ActionResults,
  type HostFrame,
  type NextFrame,
  type PostedAction,
  type ReplyFrame,
  type SandboxFrame,
  type StartFrame,
  encodeFrame,
  PROTOCOL_VERSION,
  MAX_HOST_FRAME_CHARS,
  MAX_SANDBOX_FRAME_CHARS,
} from "../protocol.js";
import { protectedLineReader } from "../line-reader.js";
import { overLimits } from "./call-limits.js";

/**
 * Taken as the library loads, before agent code runs (see line-reader.ts): a snippet that replaced
 * JSON.parse made the next snippet, as the sandbox read it from the host, code of its own.
 */
const parseJson = JSON.parse;

/** Why a frame of `chars` characters (as sent, JSON's escapes included) is not sent, and what to send instead. */
function tooLargeToSend(frame: SandboxFrame, chars: number): string {
  const action = frame.type === "request" || frame.type === "post" ? frame.action : null;
  const what =
    action?.kind === "FsWrite" ? `${action.path}: ${action.append ? "append()" : "write()"} of ${action.content.length} characters`
    : action?.kind === "Exec" ? `exec("${action.command}"): its arguments and input`
    : action?.kind === "HttpRequest" || action?.kind === "HttpRequestClassified" ? `the request to ${action.url}: its body and headers`
    : action?.kind === "Classify" ? "classify(value): the value"
    : action?.kind === "Chat" ? "chat(message): the message"
    : "this call's data";
  const instead =
    action?.kind === "FsWrite" ? "write the content in parts: write() the first, then append() each of the others"
    : action?.kind === "Exec" ? "write large input to a file (requestFileSystem) and give the command its name"
    : action?.kind === "Classify" ? "classify it in parts, or write it to a file and read it with readClassified()"
    : "send less in one call";
  return `${what} would be ${chars} characters as sent (JSON's escapes included), more than the ${MAX_SANDBOX_FRAME_CHARS} one call carries to the host; nothing was sent. Instead, ${instead}.`;
}

export interface Channel {
  /** Blocks until the host has decided the action; throws what the host refused with. */
  request<K extends Action["kind"]>(action: Extract<Action, { kind: K }>): ActionResults[K];
  /** Sends an action nothing waits on (see PostedAction). */
  post(action: PostedAction): void;
  send(frame: SandboxFrame): void;
  /** Reads the one frame the host sends first. */
  readStart(): StartFrame;
  /** A session's sandbox, between snippets: blocks until the host sends the next one. */
  readNext(): NextFrame;
}

export interface ChannelIo {
  readSync(buffer: Uint8Array): number | null;
  writeSync(bytes: Uint8Array): number;
  /** Builds the error the agent's code sees for a refusal. */
  refusal(name: "SecurityError" | "Error", message: string): Error;
}

export function createChannel(io: ChannelIo): Channel {
  const encoder = new TextEncoder();
  /**
   * Where a frame is encoded before it is written (one that does not fit is encoded anew):
   * encode() allocated an array per frame, about 0.85 µs of a small read's 2.5 µs in the stub,
   * encodeInto() here 0.11 µs. Reused at once: writeAll has written it all when it returns.
   */
  const outgoing = new Uint8Array(64 * 1024);
  let nextId = 1;

  function writeAll(bytes: Uint8Array): void {
    let offset = 0;
    while (offset < bytes.length) offset += io.writeSync(bytes.subarray(offset));
  }

  const readLine = protectedLineReader((buffer) => io.readSync(buffer), MAX_HOST_FRAME_CHARS);

  function readFrame(): HostFrame {
    const line = readLine();
    if (line === "closed") throw new Error("tacit: the host closed the channel");
    if (line === "too-long") throw new Error("tacit: oversized frame from host");
    return parseJson(line) as HostFrame;
  }

  function send(frame: SandboxFrame): void {
    const text = encodeFrame(frame);
    // The host ends a sandbox that sends a longer line (a protocol violation, which the script
    // cannot catch and which says nothing of the call): the call fails here instead.
    if (text.length - 1 > MAX_SANDBOX_FRAME_CHARS) throw io.refusal("Error", tooLargeToSend(frame, text.length - 1));
    const { read, written } = encoder.encodeInto(text, outgoing);
    writeAll(read === text.length ? outgoing.subarray(0, written) : encoder.encode(text));
  }

  return {
    send,
    readStart() {
      const frame = readFrame();
      if (frame.type !== "start") throw new Error("tacit: expected the start frame");
      if (frame.protocol !== PROTOCOL_VERSION) throw new Error(`tacit: protocol ${frame.protocol} from the host, expected ${PROTOCOL_VERSION}`);
      return frame;
    },
    readNext() {
      const frame = readFrame();
      if (frame.type !== "next") throw new Error("tacit: expected the next snippet");
      return frame;
    },
    post(action) {
      send({ type: "post", action });
    },
    request(action) {
      const over = overLimits(action);
      if (over !== null) throw io.refusal("Error", over);
      const id = nextId++;
      send({ type: "request", id, action });
      const reply = readFrame() as ReplyFrame;
      if (reply.type !== "reply" || reply.id !== id) throw new Error("tacit: reply out of order");
      if (!reply.ok) throw io.refusal(reply.error.name, reply.error.message);
      return reply.value as never;
    },
  };
}
