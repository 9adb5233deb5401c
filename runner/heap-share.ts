// A share of tacit's own heap that many holders of one kind draw on together. A limit per
// holder (per session) bounds one holder only, and tacit serve keeps up to maxSessions (100)
// of them: a ninth security review filled three sessions, each well within its own limits
// (256 MiB of recorded replies, or of classified values), and a tacit serve with a 300 MB heap
// died of it, every session with it (at the default heap, a few dozen sessions do the same).
// Counted as the holders count (two bytes a character).

import { getHeapStatistics } from "node:v8";

export class HeapShare {
  private usedBytes = 0;

  constructor(readonly limitBytes: number) {}

  /** A quarter of this process's heap limit. */
  static quarterOfHeap(): HeapShare {
    return HeapShare.ofHeap(4);
  }

  /** One `part`th of this process's heap limit. */
  static ofHeap(part: number): HeapShare {
    return new HeapShare(Math.floor(getHeapStatistics().heap_size_limit / part));
  }

  /** No bound beyond the holder's own (a holder that is alone: tacit run, the repl). */
  static unbounded(): HeapShare {
    return new HeapShare(Number.POSITIVE_INFINITY);
  }

  /** Whether `bytes` would fit now (nothing taken). */
  fits(bytes: number): boolean {
    return this.usedBytes + bytes <= this.limitBytes;
  }

  /** Bytes taken now. */
  get takenBytes(): number {
    return this.usedBytes;
  }

  /** Bytes not taken yet. */
  get freeBytes(): number {
    return Math.max(0, this.limitBytes - this.usedBytes);
  }

  /** Takes `bytes` if they fit; false (and nothing taken) if not. */
  take(bytes: number): boolean {
    if (this.usedBytes + bytes > this.limitBytes) return false;
    this.usedBytes += bytes;
    return true;
  }

  give(bytes: number): void {
    this.usedBytes = Math.max(0, this.usedBytes - bytes);
  }
}
