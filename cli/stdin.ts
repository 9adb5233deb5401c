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
  /**
   * For readInput(): the evaluation's lifetime. Once aborted (the script was killed, timed
   * out or cancelled) the read gives up at once and stops consuming stdin, so a producer that
   * keeps the pipe open cannot keep tacit waiting past its limit.
   */
  signal?: AbortSignal;
  /** The refusal for input past limitBytes (the default names readInput()). */
  tooLarge?: (limitBytes: number) => string;
}

/** Where standard input leads, as the system names its descriptor (script-origin.ts judges it there). */
export const STDIN_DESCRIPTOR = "/proc/self/fd/0";

/** readInput() refused because of what standard input is (a classified file): a SecurityError to the script. */
export class InputRefusedError extends Error {
  override name = "SecurityError";
}

export class InputAbandonedError extends Error {
  override name = "InputAbandonedError";
}

/** Everything on stdin as UTF-8. */
export function readStdin({ limitBytes, emptyWhenInteractive, signal, tooLarge = inputTooLarge }: ReadStdinOptions): Promise<string> {
  if (process.stdin.isTTY && emptyWhenInteractive) return Promise.resolve("");
  const reading = readAll(limitBytes, tooLarge);
  if (!signal) return reading;
  return new Promise<string>((resolve, reject) => {
    const giveUp = (): void => {
      reject(new InputAbandonedError("readInput(): the evaluation ended before the piped input did"));
      process.stdin.destroy();
    };
    if (signal.aborted) return giveUp();
    signal.addEventListener("abort", giveUp, { once: true });
    // Settling after giveUp changes nothing; the handler keeps a late failure from going unhandled.
    reading.then(resolve, reject).finally(() => signal.removeEventListener("abort", giveUp));
  });
}

function inputTooLarge(limitBytes: number): string {
  return `readInput(): the piped input is larger than ${limitBytes} bytes, more than tacit hands to a script at once. Split the input, or pipe a smaller part.`;
}

async function readAll(limitBytes: number, tooLarge: (limitBytes: number) => string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limitBytes) {
      process.stdin.destroy();
      throw new InputTooLargeError(tooLarge(limitBytes));
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
