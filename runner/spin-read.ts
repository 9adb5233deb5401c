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
import { availableParallelism, loadavg } from "node:os";
import type { Readable, Writable } from "node:stream";

/**
 * How long the host waits, spinning, for a sandbox's next frame after a reply: about what waking
 * a sleeping process costs on this project's virtual machines (30 µs), so that a request that
 * comes later costs the host at most what it saves on one that comes in time.
 */
const HOST_SPIN_MICROS = 30;

/** How often the load is looked at again (see spinningPays). */
const LOAD_LOOK_INTERVAL_MS = 250;
let loadLookedAt = Number.NEGATIVE_INFINITY;
let busy = false;

/**
 * TACIT_SPIN: "never" (no process of tacit's spins: for a machine on battery, say), "always"
 * (whenever a CPU is free for it, however loaded the machine), otherwise "auto". Read once.
 */
let setting: "auto" | "always" | "never" | undefined;

/**
 * Whether waiting spinning pays now. With "auto", not where the machine has more runnable work
 * than CPUs (its load over the last minute, tacit's own processes counted): then no CPU idles, so
 * waking a sleeping process costs little, and a process spinning takes a CPU from the work it
 * waits for. With 2 CPUs and a load of 20, a bare round trip took 29 µs with both sides
 * sleeping, 32-80 µs with the sandbox spinning, 56-214 µs with both spinning.
 */
export function spinningPays(): boolean {
  if (setting === undefined) {
    const asked = process.env.TACIT_SPIN;
    setting = asked === "always" || asked === "never" ? asked : "auto";
  }
  if (setting !== "auto") return setting === "always";
  const now = performance.now();
  if (now - loadLookedAt >= LOAD_LOOK_INTERVAL_MS) {
    loadLookedAt = now;
    busy = loadavg()[0]! > availableParallelism();
  }
  return !busy;
}

/** No answer counts for more than this many µs in AnswerPace: one slow answer (a command's, an approval's) is soon forgotten. */
const ANSWER_SAMPLE_CAP_MICROS = 200;
/**
 * The longest average answer a sandbox spins through where CPUs are few (see fewCpus): a little
 * more than what waking it costs here (a reply written to a sleeping sandbox cost the host 50 µs
 * more than one to a spinning one). Through longer answers it sleeps. Warm answers take about
 * 20 µs here, and a margin above them matters more than the exact value: on the quiet machine,
 * the 10,000-read loop's median over 10 runs was 601 ms at 40 µs, 593 at 60, 656 at 100, and
 * 887 at 25, where warm answers often passed for slow ones.
 */
const PROMPT_ANSWER_MICROS = 60;

/**
 * How promptly the host has been answering sandboxes' requests lately: an average of the µs from
 * a request's frame to its reply, each answer counting 1/16 (at most ANSWER_SAMPLE_CAP_MICROS).
 * It starts slow: the host's request path starts cold.
 */
export class AnswerPace {
  private recentMicros = ANSWER_SAMPLE_CAP_MICROS;

  took(micros: number): void {
    this.recentMicros += (Math.min(micros, ANSWER_SAMPLE_CAP_MICROS) - this.recentMicros) / 16;
  }

  /** Whether answers have come within PROMPT_ANSWER_MICROS of late. */
  get prompt(): boolean {
    return this.recentMicros <= PROMPT_ANSWER_MICROS;
  }
}

/** This process's: V8's warmth, which the pace follows, is the whole process's (a serve's sessions together). */
const answerPace = new AnswerPace();

/**
 * Whether the machine has too few CPUs for a sandbox spinning, the host working and V8's compiler
 * all at once. The host's first thousand or two answers are slow (its request path runs in V8's
 * interpreter while V8 compiles it on a thread of its own): a sandbox spinning through them held
 * one of two CPUs, the compiler took the other from the host or from the sandbox, and a sandbox
 * preempted for a time slice while its reply came made the host wait 80-180 µs a request (reads
 * 500-1,000 of a loop of 10,000 took 122-182 ms, 18 ms once warm). Sleeping through slow answers,
 * a sandbox is woken the moment its reply comes: 53-98 ms.
 */
let fewCpus: boolean | undefined;

/** Counts one answer the host gave a sandbox: `micros` from its request's frame to its reply (see AnswerPace). */
export function answerTook(micros: number): void {
  answerPace.took(micros);
}

/**
 * Whether a sandbox spins through the host's next answer, where spinningPays says waiting spinning
 * pays at all: with TACIT_SPIN=always, yes; otherwise, on a machine with more than two CPUs, yes,
 * and on one with two or fewer only where the host's answers have been prompt of late (see
 * fewCpus). The host's own wait for the sandbox's next frame (SpinningReader) spins either way.
 */
export function sandboxSpinningPays(): boolean {
  if (!spinningPays()) return false;
  if (setting === "always") return true;
  fewCpus ??= availableParallelism() <= 2;
  return !fewCpus || answerPace.prompt;
}

/** The file descriptor of a stream Node reads or writes through libuv, where its handle shows one. */
export function descriptorOf(stream: Readable | Writable): number | null {
  const handle = (stream as unknown as { _handle?: { fd?: unknown } | null })._handle;
  const fd = handle?.fd;
  return typeof fd === "number" && fd >= 0 ? fd : null;
}

/**
 * `stream`'s descriptor, where the host may read it itself, in order with what the event loop
 * reads: the stream flows, holds no bytes it has not emitted (those come first), is not destroyed,
 * and shows a descriptor. Null otherwise.
 */
function directlyReadable(stream: Readable): number | null {
  if (stream.readableFlowing !== true || stream.readableLength > 0 || stream.destroyed) return null;
  return descriptorOf(stream);
}

/**
 * What `stream` has to read next, read into `buffer` within `micros` µs, spinning; null where
 * nothing came in time, the stream ended or failed (libuv then finds that itself), or it cannot
 * be read this way: it is paused, holds bytes it has not emitted (those come first), or shows no
 * descriptor.
 */
export function readSpinning(stream: Readable, buffer: Buffer, micros: number): Uint8Array | null {
  const fd = directlyReadable(stream);
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

/**
 * What `stream`'s descriptor holds now, read at once into `buffer` (at most its length): the bytes,
 * "none" where nothing is there (or the stream has ended: libuv finds that itself), or
 * "unreadable" where it cannot be read this way (see readSpinning). Bytes read here are handed to
 * the caller, not to the stream's listeners.
 */
export function readWaiting(stream: Readable, buffer: Buffer): Uint8Array | "none" | "unreadable" {
  const fd = directlyReadable(stream);
  if (fd === null) return "unreadable";
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const n = readSync(fd, buffer, 0, buffer.length, null);
    return n > 0 ? buffer.subarray(0, n) : "none";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EAGAIN" ? "none" : "unreadable";
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/**
 * The longest the host goes on reading sandboxes spinning without its event loop turning. A frame
 * read spinning is handled at once, its request answered and the next one read spinning again,
 * all in one turn of the event loop: a sandbox that always answered within the spin kept the host
 * there, and its timers (the time limit), other sessions' frames and cancellations waited 17-19 ms
 * at a time (the loop otherwise turned every 1-5 ms), bounded only by the sandbox being slow
 * once. One bound for the whole process, as all sandboxes share its event loop.
 */
const MAX_SPINNING_CHAIN_MS = 1;
/** When the first frame read spinning since the event loop last turned came; null: none has. */
let chainStartedAt: number | null = null;
const loopTurned = (): void => {
  chainStartedAt = null;
};

/** The most requests a run of misses makes the host wait for sleeping before it spins again. */
const MAX_SKIPPED_SPINS = 64;

/**
 * readSpinning on one stream, backing off where it does not pay: after a miss (nothing came in
 * time: the script computes between calls, or the machine is so loaded that the sandbox is not
 * running) the next 1, 2, 4 … 64 waits are left to the event loop, and a catch starts afresh.
 */
export class SpinningReader {
  private readonly buffer = Buffer.allocUnsafe(64 * 1024);
  private skipped = 0;
  private toSkip = 0;

  constructor(private readonly stream: Readable, private readonly micros: number = HOST_SPIN_MICROS) {}

  /**
   * What the stream has next, if it comes within the bound and this wait is not skipped. Only for
   * a sandbox that spins too (SandboxInput.spin, which asks spinningPays), so that a CPU is free
   * for each.
   */
  next(): Uint8Array | null {
    // Not a miss: the sandbox was in time, it is the host's turn to let the event loop run.
    if (chainStartedAt !== null && performance.now() - chainStartedAt >= MAX_SPINNING_CHAIN_MS) return null;
    if (this.skipped < this.toSkip) {
      this.skipped++;
      return null;
    }
    const bytes = readSpinning(this.stream, this.buffer, this.micros);
    this.skipped = 0;
    this.toSkip = bytes === null ? Math.min(Math.max(1, this.toSkip * 2), MAX_SKIPPED_SPINS) : 0;
    if (bytes !== null && chainStartedAt === null) {
      chainStartedAt = performance.now();
      // Runs in the event loop's next check phase: the chain has given way by then.
      setImmediate(loopTurned);
    }
    return bytes;
  }
}
