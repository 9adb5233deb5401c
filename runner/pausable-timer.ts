// The evaluation's wall-clock limit, which stops while a person is being asked: the sandbox
// is blocked waiting for the answer, so the time is the person's, not the script's.

import { monotonicMs } from "./monotonic.js";

export class PausableTimer {
  private remaining: number;
  private startedAt = monotonicMs();
  private timer: NodeJS.Timeout | undefined;
  private pauses = 0;

  constructor(limitMs: number, private readonly onExpire: () => void) {
    this.remaining = limitMs;
    this.timer = setTimeout(onExpire, limitMs);
  }

  /** Milliseconds of the limit not yet used. */
  left(): number {
    return this.pauses > 0 ? this.remaining : Math.max(0, this.remaining - (monotonicMs() - this.startedAt));
  }

  async whilePaused<T>(work: Promise<T>): Promise<T> {
    if (this.pauses++ === 0) {
      this.remaining = Math.max(0, this.remaining - (monotonicMs() - this.startedAt));
      clearTimeout(this.timer);
    }
    try {
      return await work;
    } finally {
      if (--this.pauses === 0 && this.timer !== undefined) {
        this.startedAt = monotonicMs();
        this.timer = setTimeout(this.onExpire, this.remaining);
      }
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
