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

export class SessionRecording {
  private bytes = 0;
  /** The snippet running now has taken the session past its limit. */
  private overflowing = false;
  /** A snippet that did finished well: what was recorded is let go, and no replay is possible. */
  private lost = false;

  constructor(readonly limitBytes: number) {}

  /** Whether every successful snippet's replies are still kept, so the sandbox can be rebuilt. */
  get complete(): boolean {
    return !this.lost;
  }

  /** A snippet's own record, counted against this session's limit as it grows. */
  snippet(): SnippetRecord {
    return new SnippetRecord(this);
  }

  /** Counts a reply; false once the limit is passed (then nothing more is kept). */
  take(bytes: number): boolean {
    if (this.lost || this.overflowing) return false;
    this.bytes += bytes;
    this.overflowing = this.bytes > this.limitBytes;
    return !this.overflowing;
  }

  /** The snippet succeeded: its record stays, or, past the limit, every record goes. */
  commit(): void {
    if (this.overflowing) this.lost = true;
  }

  /** The snippet failed: its record is not kept, and what it counted is given back. */
  release(record: SnippetRecord): void {
    this.bytes -= record.bytes;
    this.overflowing = false;
  }
}

export class SnippetRecord {
  exchanges: RecordedExchange[] = [];
  /** Counted against the session, the reply that passed the limit included. */
  bytes = 0;
  private full = false;

  constructor(private readonly session: SessionRecording) {}

  push(exchange: RecordedExchange): void {
    if (this.full) return;
    const bytes = approximateBytes(exchange.decision);
    const kept = this.session.take(bytes);
    if (!kept) {
      // Counted even so when it passed the limit (take added it), so release gives it back.
      if (!this.session.complete) return;
      this.bytes += bytes;
      this.full = true;
      this.exchanges = [];
      return;
    }
    this.bytes += bytes;
    this.exchanges.push(exchange);
  }
}
