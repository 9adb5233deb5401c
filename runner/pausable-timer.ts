// The evaluation's wall-clock limit, which stops while a person is being asked: the sandbox
// is blocked waiting for the answer, so the time is the person's, not the script's.

import { monotonicMs } from "./monotonic.js";

/** Told when the limit is due (monotonicMs()), or null while it is not running: paused or stopped (see SandboxProcess.timeLimit). */
export type DeadlineListener = (atMs: number | null) => void;

export class PausableTimer {
  private remaining: number;
  private startedAt = monotonicMs();
  private timer: NodeJS.Timeout | undefined;
  private pauses = 0;
  /** Expired or stopped: onExpire is never called (again). */
  private over = false;

  constructor(
    limitMs: number,
    private readonly onExpire: () => void,
    private readonly deadline: DeadlineListener = () => undefined,
  ) {
    this.remaining = limitMs;
    this.timer = setTimeout(() => this.expire(), limitMs);
    deadline(this.startedAt + limitMs);
  }

  /** Milliseconds of the limit not yet used. */
  left(): number {
    return this.pauses > 0 ? this.remaining : Math.max(0, this.remaining - (monotonicMs() - this.startedAt));
  }

  async whilePaused<T>(work: Promise<T>): Promise<T> {
    if (this.pauses++ === 0) {
      this.remaining = Math.max(0, this.remaining - (monotonicMs() - this.startedAt));
      clearTimeout(this.timer);
      if (!this.over) this.deadline(null);
    }
    try {
      return await work;
    } finally {
      if (--this.pauses === 0 && !this.over) {
        this.startedAt = monotonicMs();
        this.timer = setTimeout(() => this.expire(), this.remaining);
        this.deadline(this.startedAt + this.remaining);
      }
    }
  }

  /**
   * Ends the limit now as its timer would (onExpire), unless it is over: where something else saw
   * it pass first (tacit serve's off-thread backstop, whose kill the main thread learns of before
   * this timer's turn comes).
   */
  expireNow(): void {
    clearTimeout(this.timer);
    this.expire();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.over = true;
    this.deadline(null);
  }

  private expire(): void {
    if (this.over) return;
    this.over = true;
    this.timer = undefined;
    this.onExpire();
  }
}
