// What a session keeps of its snippets' effects, to rebuild its sandbox after a failed snippet
// by replaying them (session.ts). Every reply is kept for the session's life, file contents
// included, so it is bounded: past the limit nothing more is kept, and the session can no
// longer be rebuilt (it goes on until a snippet fails; then it must be recreated). Unbounded,
// a snippet reading a large file in a loop made the host hold gigabytes.

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
  /** What the successful snippets' records hold. */
  private keptBytes = 0;
  /** What the snippet under way has recorded so far, the reply that passed the limit included. */
  private runningBytes = 0;
  /** A snippet that passed the limit finished well: every record was let go, and no replay is possible. */
  private lost = false;

  constructor(readonly limitBytes: number) {}

  /** Whether every successful snippet's replies are still kept, so the sandbox can be rebuilt. */
  get complete(): boolean {
    return !this.lost;
  }

  /** The running snippet's record, counted against this session's limit as it grows. */
  snippet(): SnippetRecord {
    this.runningBytes = 0;
    return new SnippetRecord(this);
  }

  /** Counts a reply of the running snippet; false once the limit is passed (then nothing more is kept). */
  take(bytes: number): boolean {
    if (this.lost) return false;
    this.runningBytes += bytes;
    return this.keptBytes + this.runningBytes <= this.limitBytes;
  }

  /** The snippet succeeded: its record stays, or, past the limit, every record goes. */
  commit(): void {
    this.keptBytes += this.runningBytes;
    this.runningBytes = 0;
    if (this.keptBytes > this.limitBytes) this.lost = true;
  }

  /** The snippet failed: its record is not kept, nor counted. */
  release(): void {
    this.runningBytes = 0;
  }
}

export class SnippetRecord {
  exchanges: RecordedExchange[] = [];

  constructor(private readonly session: SessionRecording) {}

  push(exchange: RecordedExchange): void {
    // Past the limit the counts only grow, so every later push lands here too.
    if (!this.session.take(approximateBytes(exchange.decision))) this.exchanges = [];
    else this.exchanges.push(exchange);
  }
}
