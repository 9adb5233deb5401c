// The sandbox end of the protocol: synchronous request/reply over stdin/stdout. The stub
// blocks on the host's reply (Deno.stdin.readSync), which is what makes the capability API
// synchronous, like TACIT's.

import {
  type Action,
  type ActionResults,
  type HostFrame,
  type ReplyFrame,
  type SandboxFrame,
  type StartFrame,
  encodeFrame,
  PROTOCOL_VERSION,
  MAX_HOST_FRAME_CHARS,
} from "../protocol.js";

export interface Channel {
  /** Blocks until the host has decided the action; throws what the host refused with. */
  request<K extends Action["kind"]>(action: Extract<Action, { kind: K }>): ActionResults[K];
  send(frame: SandboxFrame): void;
  /** Reads the one frame the host sends first. */
  readStart(): StartFrame;
}

export interface ChannelIo {
  readSync(buffer: Uint8Array): number | null;
  writeSync(bytes: Uint8Array): number;
  /** Builds the error the agent's code sees for a refusal. */
  refusal(name: "SecurityError" | "Error", message: string): Error;
}

export function createChannel(io: ChannelIo): Channel {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(64 * 1024);
  let pending = "";
  let nextId = 1;

  function writeAll(bytes: Uint8Array): void {
    let offset = 0;
    while (offset < bytes.length) offset += io.writeSync(bytes.subarray(offset));
  }

  function readFrame(): HostFrame {
    // Only text not yet searched is searched for the newline: a large reply arrives in many
    // reads, and rescanning it all each time would be quadratic.
    let searched = 0;
    for (;;) {
      const newline = pending.indexOf("\n", searched);
      if (newline >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        return JSON.parse(line) as HostFrame;
      }
      searched = pending.length;
      if (pending.length > MAX_HOST_FRAME_CHARS) throw new Error("tacit: oversized frame from host");
      const n = io.readSync(chunk);
      if (n === null) throw new Error("tacit: the host closed the channel");
      pending += decoder.decode(chunk.subarray(0, n), { stream: true });
    }
  }

  function send(frame: SandboxFrame): void {
    writeAll(encoder.encode(encodeFrame(frame)));
  }

  return {
    send,
    readStart() {
      const frame = readFrame();
      if (frame.type !== "start") throw new Error("tacit: expected the start frame");
      if (frame.protocol !== PROTOCOL_VERSION) throw new Error(`tacit: protocol ${frame.protocol} from the host, expected ${PROTOCOL_VERSION}`);
      return frame;
    },
    request(action) {
      const id = nextId++;
      send({ type: "request", id, action });
      const reply = readFrame() as ReplyFrame;
      if (reply.type !== "reply" || reply.id !== id) throw new Error("tacit: reply out of order");
      if (!reply.ok) throw io.refusal(reply.error.name, reply.error.message);
      return reply.value as never;
    },
  };
}
