// What the script prints, capped so that a runaway script cannot exhaust the host. Past
// the cap the output is cut and a visible marker says so.

export const OUTPUT_LIMIT_BYTES = 10 * 1024 * 1024;

export function truncationMarker(limitBytes: number): string {
  return `\n[tacit: output truncated: the script printed more than ${limitBytes} bytes; the rest was discarded]\n`;
}

export class OutputBuffer {
  private readonly parts: string[] = [];
  private bytes = 0;
  truncated = false;

  constructor(
    private readonly limitBytes: number = OUTPUT_LIMIT_BYTES,
    /** Called with each accepted piece as it arrives, for streaming to a terminal. */
    private readonly onText?: (text: string) => void,
  ) {}

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
