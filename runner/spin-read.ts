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

import { readFileSync, readSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import type { Readable, Writable } from "node:stream";

/**
 * How long the host waits, spinning, for a sandbox's next frame after a reply: about what waking
 * a sleeping process costs on this project's virtual machines (30 µs), so that a request that
 * comes later costs the host at most what it saves on one that comes in time.
 */
const HOST_SPIN_MICROS = 30;

/**
 * How often the machine's runnable tasks are counted (see spinningPays): often enough that a run of
 * a second or two is judged by a few dozen counts, seldom enough that counting costs nothing
 * measurable (a read of /proc/loadavg, about 10 µs, every 50 ms).
 */
const RUNNABLE_LOOK_INTERVAL_MS = 50;
/** How often the load average is looked at again, where the runnable tasks cannot be counted. */
const LOAD_AVERAGE_LOOK_INTERVAL_MS = 250;
/** How quickly the average of others' runnable tasks follows the counts: its time constant, ms. */
const OTHERS_AVERAGE_MS = 1000;
/** What spinning takes from the machine while a sandbox waits for the host: a CPU for each side. */
const SPINNING_CPUS = 2;
/**
 * How much of others' runnable work spinning tolerates beyond the CPUs it leaves them: a kernel
 * thread or a short process now and then, not half a CPU's worth of work kept waiting.
 */
const OTHERS_SLACK = 0.5;

/**
 * The machine's runnable tasks now, on Linux: the 4th field of /proc/loadavg ("runnable/total"),
 * the kernel's count at the moment of reading, the reader included. Null where it cannot be read.
 */
export function runnableNow(): number | null {
  let text: string;
  try {
    text = readFileSync("/proc/loadavg", "latin1");
  } catch {
    return null;
  }
  const match = /^\S+ \S+ \S+ (\d+)\/\d+/.exec(text);
  return match ? Number(match[1]) : null;
}

/**
 * Whether other work keeps the machine's CPUs from spinning: an average, over about a second, of
 * the runnable tasks that are not tacit's own spinning ones (its host's thread, and its sandboxes
 * that spin). The load average this replaces counted tacit's own two
 * spinning processes: alone on a machine of two CPUs, a long loop of reads brought the one-minute
 * load to about 2 by itself, and turned its own spinning off (each read then cost a sandbox's
 * wake-up, about twice a spun read). Counting only others', a machine busy with other work still
 * stops spinning (two processes spinning on a loaded machine of two CPUs starve everything,
 * the test suite included), and tacit alone does not stop itself.
 */
export class OthersLoad {
  /**
   * Starts at none at the process's start (performance.now()'s 0), so that the first count weighs
   * as much as the time since: in `tacit run`, whose first request comes 100-300 ms after its
   * start, a busy machine is seen at once (8 others' tasks weigh 1.6), and one other task caught
   * once (often one of tacit's own threads, while it starts) does not stop spinning for a second.
   */
  private average = 0;
  private countedAt = 0;

  constructor(private readonly cpus: number) {}

  /** Counts `runnable` tasks on the machine at `now` (ms, performance.now()), `own` of them tacit's (see spinningPays). */
  counted(runnable: number, own: number, now: number): void {
    const others = Math.max(0, runnable - own);
    this.average += (others - this.average) * (1 - Math.exp(-Math.max(0, now - this.countedAt) / OTHERS_AVERAGE_MS));
    this.countedAt = now;
  }

  /** Whether others' runnable work leaves too few CPUs free for the two spinning takes. */
  get busy(): boolean {
    return this.average > othersBorne(this.cpus);
  }
}

/** The most of others' runnable tasks, on average, beside which tacit spins on a machine of `cpus` CPUs. */
export function othersBorne(cpus: number): number {
  return cpus - SPINNING_CPUS + OTHERS_SLACK;
}

let othersLoad: OthersLoad | undefined;
/** Whether /proc/loadavg's count could be read (Linux); false: the one-minute load average is used. */
let runnableCountable = true;
let loadLookedAt = Number.NEGATIVE_INFINITY;
let busy = false;

/**
 * TACIT_SPIN: "never" (no process of tacit's spins: for a machine on battery, say), "always"
 * (whenever a CPU is free for it, however loaded the machine), otherwise "auto". Read once.
 */
let setting: "auto" | "always" | "never" | undefined;

/**
 * Whether waiting spinning pays now. With "auto", not where other work keeps the machine's CPUs
 * busy (see OthersLoad): then no CPU idles, so waking a sleeping process costs little, and a
 * process spinning takes a CPU from the work it waits for. With 2 CPUs and a load of 20, a bare
 * round trip took 29 µs with both sides sleeping, 32-80 µs with the sandbox spinning, 56-214 µs
 * with both spinning. `ownRunnable`: how many of the machine's runnable tasks are tacit's own
 * now, this thread included (see SandboxInput.spin). Where /proc/loadavg cannot be read, the
 * one-minute load average against the CPUs, tacit's own processes counted.
 */
export function spinningPays(ownRunnable: number): boolean {
  if (setting === undefined) {
    const asked = process.env.TACIT_SPIN;
    setting = asked === "always" || asked === "never" ? asked : "auto";
  }
  if (setting !== "auto") return setting === "always";
  const now = performance.now();
  if (now - loadLookedAt < (runnableCountable ? RUNNABLE_LOOK_INTERVAL_MS : LOAD_AVERAGE_LOOK_INTERVAL_MS)) return !busy;
  loadLookedAt = now;
  const runnable = runnableCountable ? runnableNow() : null;
  if (runnable === null) {
    runnableCountable = false;
    busy = loadavg()[0]! > availableParallelism();
  } else {
    othersLoad ??= new OthersLoad(availableParallelism());
    othersLoad.counted(runnable, ownRunnable, now);
    busy = othersLoad.busy;
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
 * `ownRunnable`: as for spinningPays.
 */
export function sandboxSpinningPays(ownRunnable: number): boolean {
  if (!spinningPays(ownRunnable)) return false;
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
