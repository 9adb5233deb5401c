// What a session keeps of its snippets' effects, to rebuild its sandbox after a failed snippet
// by replaying them (session.ts). Every reply is kept for the session's life, file contents
// included, so it is bounded: past the limit nothing more is kept, and the session can no
// longer be rebuilt (it goes on until a snippet fails; then it must be recreated). Unbounded,
// a snippet reading a large file in a loop made the host hold gigabytes.

import { HeapShare } from "./heap-share.js";
import type { Decision } from "./monitor.js";

/** One exchange with the monitor, as a session records it for replay. */
export interface RecordedExchange {
  /**
   * What was asked, as a digest (a replay must ask exactly the same): the request itself can
   * be large (a print, a write) and a long session keeps every one.
   */
  actionDigest: string;
  decision: Decision;
}

/**
 * What one recorded exchange holds besides its reply: the digest string, the exchange and the
 * decision objects, its slot in the array (measured at 154 bytes of heap on Node 20; rounded
 * up). Uncounted, a snippet of many requests with tiny replies (a number, null) grew the host
 * by about 150 bytes per request while the count barely moved.
 */
const EXCHANGE_OVERHEAD_BYTES = 256;

/** About what a recorded exchange holds in memory: its overhead, and its reply's characters (two bytes each, at most) or JSON. */
function approximateBytes(decision: Decision): number {
  const value: unknown = decision.ok ? decision.value : decision.error;
  if (typeof value === "string") return EXCHANGE_OVERHEAD_BYTES + value.length * 2;
  return EXCHANGE_OVERHEAD_BYTES + (JSON.stringify(value) ?? "").length * 2;
}

/** A session's snippets run one at a time, so one running count serves the snippet under way. */
export class SessionRecording {
  /** What the successful snippets' records hold (taken from the pool). */
  private keptBytes = 0;
  /** What the snippet under way has recorded so far (taken from the pool), until it passes a limit. */
  private runningBytes = 0;
  /** The snippet under way passed this session's limit or the pool's: its record was let go. */
  private overflowed: "session" | "server" | null = null;
  /** A snippet that passed a limit finished well: every record was let go, and no replay is possible. */
  private lost: "session" | "server" | null = null;

  constructor(
    readonly limitBytes: number,
    private readonly pool: HeapShare = HeapShare.unbounded(),
  ) {}

  /** Whether every successful snippet's replies are still kept, so the sandbox can be rebuilt. */
  get complete(): boolean {
    return this.lost === null;
  }

  /** Which limit made the recording incomplete: the session's own, or the server's for all sessions. */
  get lostTo(): "session" | "server" | null {
    return this.lost;
  }

  /** The server-wide limit, for messages. */
  get poolLimitBytes(): number {
    return this.pool.limitBytes;
  }

  /** The running snippet's record, counted against this session's limit and the pool as it grows. */
  snippet(): SnippetRecord {
    this.release(); // a snippet that ended in an exception was neither committed nor released
    return new SnippetRecord(this);
  }

  /** Counts a reply of the running snippet; false once a limit is passed (then nothing more is kept). */
  take(bytes: number): boolean {
    if (this.lost !== null || this.overflowed !== null) return false;
    const over = this.keptBytes + this.runningBytes + bytes > this.limitBytes ? "session" : this.pool.take(bytes) ? null : "server";
    if (over !== null) {
      this.overflowed = over;
      this.pool.give(this.runningBytes);
      this.runningBytes = 0;
      return false;
    }
    this.runningBytes += bytes;
    return true;
  }

  /** The snippet succeeded: its record stays, or, past a limit, every record goes. */
  commit(): void {
    if (this.overflowed !== null) {
      this.lost = this.overflowed;
      this.pool.give(this.keptBytes + this.runningBytes);
      this.keptBytes = 0;
    } else {
      this.keptBytes += this.runningBytes;
    }
    this.runningBytes = 0;
    this.overflowed = null;
  }

  /** The snippet failed: its record is not kept, nor counted. */
  release(): void {
    this.pool.give(this.runningBytes);
    this.runningBytes = 0;
    this.overflowed = null;
  }

  /** The session ended: what it kept goes back to the pool. */
  close(): void {
    this.pool.give(this.keptBytes + this.runningBytes);
    this.keptBytes = 0;
    this.runningBytes = 0;
  }
}

export class SnippetRecord {
  exchanges: RecordedExchange[] = [];

  constructor(private readonly session: SessionRecording) {}

  push(exchange: RecordedExchange): void {
    // Past a limit, every later reply of the snippet is refused too: its record stays empty.
    if (!this.session.take(approximateBytes(exchange.decision))) this.exchanges = [];
    else this.exchanges.push(exchange);
  }
}
