// Waiting for a sandbox's next frame without sleeping. After the host has answered a request at
// once, the sandbox usually sends its next one within microseconds; the event loop would sleep
// in epoll meanwhile, and on a virtual machine whose idle vCPUs halt, waking it costs more than
// answering a small read: measured here, a ping-pong between two processes over a Unix socket
// took 60 µs a round trip sleeping and 4.4 µs spinning. So the host reads the sandbox's stdout
// itself for a few tens of µs, before handing the wait back to the event loop.
//
// The descriptor is the stream's own (Node's handle holds it, non-blocking). Reading it here,
// synchronously, takes nothing from libuv: it reads only when the event loop runs, and bytes
// read here are parsed before that, so their order is kept.

import { readSync } from "node:fs";
import type { Readable } from "node:stream";

/** The file descriptor of a stream Node reads through libuv, where its handle shows one. */
function descriptorOf(stream: Readable): number | null {
  const handle = (stream as unknown as { _handle?: { fd?: unknown } | null })._handle;
  const fd = handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : null;
}

/**
 * What `stream` has to read next, read into `buffer` within `micros` µs, spinning; null where
 * nothing came in time, the stream ended or failed (libuv then finds that itself), or it cannot
 * be read this way: it is paused, holds bytes it has not emitted (those come first), or shows no
 * descriptor.
 */
export function readSpinning(stream: Readable, buffer: Buffer, micros: number): Uint8Array | null {
  if (stream.readableFlowing !== true || stream.readableLength > 0 || stream.destroyed) return null;
  const fd = descriptorOf(stream);
  if (fd === null) return null;
  // Each empty read throws an EAGAIN error; its stack trace is most of what that costs.
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const until = performance.now() + micros / 1000;
    do {
      let n: number;
      try {
        n = readSync(fd, buffer, 0, buffer.length, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EAGAIN") continue;
        return null;
      }
      return n > 0 ? buffer.subarray(0, n) : null;
    } while (performance.now() < until);
    return null;
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}
