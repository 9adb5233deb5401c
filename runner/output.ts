// What the script prints, capped so that a runaway script cannot exhaust the host. Past
// the cap the output is cut and a visible marker says so. Beside it, the host's warnings about
// what the script was answered (a search that left out entries it could not read): not part of
// what it printed (tacit run writes them to stderr), but part of what its author reads.

import { DEFAULT_OUTPUT_LIMIT_BYTES } from "./limits.js";

export function truncationMarker(limitBytes: number): string {
  return `\n[tacit: output truncated: the script printed more than ${limitBytes} bytes; the rest was discarded]\n`;
}

/**
 * Different warnings a run keeps, at most: a script that searches in a loop would otherwise
 * fill the host with them. The same warning again is counted, not kept again.
 */
export const WARNINGS_LIMIT = 20;

export class OutputBuffer {
  private readonly parts: string[] = [];
  private bytes = 0;
  truncated = false;
  /** Each warning kept, and how many times it was given. */
  private readonly warned = new Map<string, number>();
  /** Warnings past WARNINGS_LIMIT, not kept. */
  private warningsDropped = 0;

  constructor(
    private readonly limitBytes: number = DEFAULT_OUTPUT_LIMIT_BYTES,
    /** Called with each accepted piece as it arrives, for streaming to a terminal. */
    private readonly onText?: (text: string) => void,
    /** Called with each warning the first time it is given, and once when they are too many. */
    private readonly onWarning?: (warning: string) => void,
  ) {}

  warn(warning: string): void {
    const times = this.warned.get(warning);
    if (times !== undefined) {
      this.warned.set(warning, times + 1);
      return;
    }
    if (this.warned.size >= WARNINGS_LIMIT) {
      if (this.warningsDropped++ === 0) this.onWarning?.(tooManyWarnings());
      return;
    }
    this.warned.set(warning, 1);
    this.onWarning?.(warning);
  }

  /** The warnings given, in order, each once (with how many times, if more than once). */
  warnings(): string[] {
    const kept = [...this.warned].map(([warning, times]) => (times === 1 ? warning : `${warning} (given ${times} times)`));
    return this.warningsDropped === 0 ? kept : [...kept, `${tooManyWarnings()}: ${this.warningsDropped} not shown`];
  }

  write(text: string): void {
    // Nothing printed is nothing kept: a print of no parts, which only the raw channel sends
    // (posted without waiting, many thousands a second), held an empty piece each.
    if (this.truncated || text === "") return;
    const size = Buffer.byteLength(text);
    if (this.bytes + size <= this.limitBytes) {
      this.bytes += size;
      this.accept(text);
      return;
    }
    const room = this.limitBytes - this.bytes;
    // Cut on a character boundary: decode the allowed bytes and drop a split last character.
    const head = Buffer.from(text).subarray(0, room).toString("utf8").replace(/\uFFFD$/, "");
    this.bytes = this.limitBytes;
    this.truncated = true;
    this.accept(head + truncationMarker(this.limitBytes));
  }

  private accept(text: string): void {
    this.parts.push(text);
    this.onText?.(text);
  }

  text(): string {
    return this.parts.join("");
  }
}

function tooManyWarnings(): string {
  return `more than ${WARNINGS_LIMIT} different warnings; the rest are not shown`;
}
