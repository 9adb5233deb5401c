// At most N tasks at a time, the rest waiting in arrival order. tacit serve runs each
// execute_typescript call in its own sandbox process; without a bound, a client sending many
// calls at once would start as many Deno processes (each allowed its full heap) as it liked.

/** Runs a task once a slot is free (see ConcurrencyLimit.slot). */
export type Slot = <T>(task: () => Promise<T>) => Promise<T>;

/** A task waiting for a slot: `take` gives it the slot; `leave` rejects it, its signal aborted. */
interface Waiter {
  signal: AbortSignal | undefined;
  take: () => void;
  leave: () => void;
}

export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** Signals listened to: one listener each, however many of its tasks wait (see waitForSlot). */
  private readonly listened = new WeakSet<AbortSignal>();

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a concurrency limit must be a whole number >= 1, got ${limit}`);
  }

  private holds = 0;
  /** Settles when nothing holds the tasks any more. */
  private released: Promise<void> = Promise.resolve();
  private release: () => void = () => undefined;

  /**
   * Runs `work` with no task starting meanwhile (those under way go on): classified chats
   * while a person is asked about one of the evaluation's requests, with its clock stopped.
   */
  async whileHeld<T>(work: Promise<T>): Promise<T> {
    if (this.holds++ === 0) this.released = new Promise<void>((resolve) => (this.release = resolve));
    try {
      return await work;
    } finally {
      if (--this.holds === 0) this.release();
    }
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `task` once a slot is free. If `signal` aborts while the task waits, it never runs:
   * the call rejects with `cancelled()`'s error.
   */
  async run<T>(task: () => Promise<T>, signal: AbortSignal | undefined, cancelled: () => Error): Promise<T> {
    if (this.running >= this.limit) await this.waitForSlot(signal, cancelled);
    else this.running++;
    try {
      // Held (see whileHeld): the slot is kept, and the task starts once nothing holds it.
      while (this.holds > 0) {
        await this.released;
        if (signal?.aborted) throw cancelled();
      }
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next.take(); // the slot passes on as it is
      else this.running--;
    }
  }

  /** `run` with its signal and cancellation fixed: what a caller hands to code that only runs tasks. */
  slot(signal: AbortSignal | undefined, cancelled: () => Error): Slot {
    return (task) => this.run(task, signal, cancelled);
  }

  private waitForSlot(signal: AbortSignal | undefined, cancelled: () => Error): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(cancelled());
      this.waiting.push({ signal, take: resolve, leave: () => reject(cancelled()) });
      if (signal === undefined || this.listened.has(signal)) return;
      // One listener for all the tasks waiting under a signal: a script's classified chats wait
      // under its evaluation's, as many as it asks for, and a listener each made Node warn of a
      // leak on the run's stderr (MaxListenersExceededWarning) past ten.
      this.listened.add(signal);
      signal.addEventListener(
        "abort",
        () => {
          const leaving: Waiter[] = [];
          let kept = 0;
          for (const waiter of this.waiting) {
            if (waiter.signal === signal) leaving.push(waiter);
            else this.waiting[kept++] = waiter;
          }
          this.waiting.length = kept;
          for (const waiter of leaving) waiter.leave();
        },
        { once: true },
      );
    });
  }
}

/**
 * Calls admitted at most, and what they hold together (their code, in characters): past
 * either, a call is refused before it waits for anything.
 */
export class InFlightBound {
  private calls = 0;
  private chars = 0;

  constructor(
    readonly maxCalls: number,
    readonly maxChars: number,
  ) {}

  /** Admits a call holding `chars` (then `release` it when it ends), or says why not. */
  admit(chars: number): { release: () => void } | { refused: string } {
    if (this.calls + 1 > this.maxCalls || this.chars + chars > this.maxChars) {
      const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
      return {
        refused:
          `refused before it ran: ${this.calls === 1 ? "1 call is" : `${this.calls} calls are`} already under way or waiting for their turn, holding ` +
          `${mib(this.chars)} Mi characters of code, and this one (${mib(chars)} Mi characters) would pass what the server ` +
          `holds at once (${this.maxCalls} calls, ${mib(this.maxChars)} Mi characters). Wait for the answers to calls already ` +
          `sent before sending more, or send shorter code.`,
      };
    }
    this.calls++;
    this.chars += chars;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.calls--;
        this.chars -= chars;
      },
    };
  }
}

/**
 * Work left running after the call that started it was answered, at most `limit` pieces at a
 * time: past it the oldest is stopped (it would have been stopped at its time limit anyway). A
 * server's one-shot calls are answered when their script ends, before the classified work they
 * left is done (see EvaluateOptions.leftWork in evaluate.ts), so their slots no longer bound that
 * work: without this, calls a few hundred milliseconds long could each leave a pure evaluator
 * running for up to the time limit. Which piece is stopped, and when, depends on the calls only;
 * what stopping changes (a value written or printed as unavailable) shows only in the secure output.
 */
export class LeftWork {
  private readonly running: Array<{ stop(): void }> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a limit of left work must be a whole number >= 1, got ${limit}`);
  }

  keep(work: { settled: Promise<void>; stop(): void }): void {
    const entry = { stop: work.stop };
    this.running.push(entry);
    const leave = (): void => {
      const at = this.running.indexOf(entry);
      if (at >= 0) this.running.splice(at, 1);
    };
    void work.settled.then(leave, leave);
    while (this.running.length > this.limit) this.running.shift()!.stop();
  }
}
