// A client of `tacit serve` that sends requests and does not read the answers. Node keeps
// whatever stdout cannot take yet in memory, without bound: 2,000 show_interface calls took the
// server from 62 MB to 257 MB, and 100 execute_typescript calls each printing 4 MB (sent in one
// write, all admitted at once) took it to 2.1 GB, more than any limit of tacit's allows for. So
// once the client leaves more than a bound unread, the server takes no new request (it stops
// reading stdin), starts no new evaluation (those running finish and are answered) and sends no
// progress notification, until the client has read it all.

import type { Readable, Writable } from "node:stream";
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * How much of its answers a client may leave unread before the server waits for it. Above
 * one answer's usual size (a few KiB) and the bytes a pipe holds (64 KiB), far below what the
 * answers under way could add together.
 */
export const UNREAD_ANSWERS_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * How many messages may wait for the client to read them, however short: each one's request
 * is held by the SDK until its answer is written (its abort controller, its handler's context),
 * some 9 KB in all for a ping's 40-byte answer. 4 MiB of ping answers is 100,000 of them: 200,000
 * pings sent at once took the server to 982 MB under the byte bound alone.
 */
export const UNREAD_MESSAGES_LIMIT = 1000;

export interface UnreadAnswersOptions {
  transport: Transport;
  /** Where the transport writes its answers (process.stdout). */
  output: Writable;
  /** Where the client's requests come from (process.stdin): not read while the client reads nothing. */
  input: Readable;
  limitBytes: number;
  limitMessages: number;
  /** Keeps any evaluation from starting until `until` settles (ConcurrencyLimit.whileHeld). */
  holdEvaluations: (until: Promise<void>) => void;
  /** Told each time the client has left too much unread, with how much. */
  onBackedUp: (unread: { bytes: number; messages: number }) => void;
}

/**
 * Writes what the transport sends to `output`, and watches it. Past `limitBytes` or
 * `limitMessages` unread, stops reading the client and holds evaluations, until the output
 * drains, or closes (the server then stops: nothing it ends may wait on the hold). `release`
 * lets everything go on at once: the server is stopping, and what it ends must not wait for a
 * client that reads nothing.
 */
export function waitForUnreadAnswers(options: UnreadAnswersOptions): { release: () => void } {
  const { transport, output, input, limitBytes, limitMessages, holdEvaluations, onBackedUp } = options;
  let resume: (() => void) | null = null;
  let released = false;
  /** Messages written since the output last drained that found it full: each waits for that drain. */
  let waiting = 0;
  const backedUp = (): void => {
    if (resume !== null || released || output.destroyed) return;
    // Only a write that found the stream full waits for its drain; before that the bytes are the kernel's.
    if (!output.writableNeedDrain || (output.writableLength <= limitBytes && waiting <= limitMessages)) return;
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    resume = () => {
      output.off("drain", resumeNow);
      output.off("close", resumeNow);
      resume = null;
      input.resume();
      letGo();
    };
    const resumeNow = (): void => resume?.();
    output.on("drain", resumeNow);
    output.on("close", resumeNow);
    input.pause();
    holdEvaluations(held);
    // Said after the hold is in place: a logging notification is itself sent through here.
    onBackedUp({ bytes: output.writableLength, messages: waiting });
  };
  /** Settles at the output's next drain: every send that found it full waits for the same one. */
  let drained: Promise<void> | null = null;
  // Written here rather than by the SDK's stdio transport, which does the same with a drain
  // listener of its own for every message that finds the output full: past ten, Node printed
  // "MaxListenersExceededWarning: Possible EventEmitter memory leak detected" on the operator's
  // stderr whenever a client read more slowly than it was answered.
  transport.send = (message) => {
    // A progress notification says a call is still under way, and is sent every second for each
    // call, held ones included: written while the client reads nothing, they piled up as answers did
    // (256 calls, 40 KB a second). The next one, once the client reads, says it all the same.
    if (resume !== null && "method" in message && message.method === "notifications/progress") return Promise.resolve();
    const taken = output.write(serializeMessage(message));
    if (!taken) waiting++;
    backedUp();
    if (taken) return Promise.resolve();
    drained ??= new Promise<void>((resolve) =>
      output.once("drain", () => {
        drained = null;
        waiting = 0;
        resolve();
      }),
    );
    return drained;
  };
  return {
    release: () => {
      released = true;
      resume?.();
    },
  };
}
