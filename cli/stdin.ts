// Reading standard input: the script itself (`tacit run -`) or the data a script reads
// with readInput().

/** Piped input beyond this is refused rather than loaded whole (a reply frame must fit). */
export const INPUT_LIMIT_BYTES = 16 * 1024 * 1024;

export class InputTooLargeError extends Error {
  override name = "InputTooLargeError";
}

export interface ReadStdinOptions {
  limitBytes: number;
  /** For readInput(): a terminal is "nothing piped", so a script never waits on a person. */
  emptyWhenInteractive: boolean;
}

/** Everything on stdin as UTF-8. */
export async function readStdin({ limitBytes, emptyWhenInteractive }: ReadStdinOptions): Promise<string> {
  if (process.stdin.isTTY && emptyWhenInteractive) return "";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limitBytes) {
      process.stdin.destroy();
      throw new InputTooLargeError(
        `readInput(): the piped input is larger than ${limitBytes} bytes, more than tacit hands to a script at once. ` +
          "Split the input, or pipe a smaller part.",
      );
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
