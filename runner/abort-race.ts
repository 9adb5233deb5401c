// Waiting on work that may be given up on: a killed evaluation's requests stop being waited for.

/**
 * A function giving `work`'s value, or null as soon as `signal` is aborted (the work itself is not
 * stopped by this). One abort listener serves every request of the evaluation: adding and
 * removing an EventTarget listener (and racing a fresh promise) on each of thousands of
 * requests was a measurable share of a small read's cost, most of all before the JIT warms up.
 */
export function abortRace(signal: AbortSignal): <T>(work: Promise<T>) => Promise<T | null> {
  const waiting = new Set<() => void>();
  signal.addEventListener(
    "abort",
    () => {
      for (const giveUp of waiting) giveUp();
      waiting.clear();
    },
    { once: true },
  );
  return <T>(work: Promise<T>): Promise<T | null> => {
    if (signal.aborted) return Promise.resolve(null);
    return new Promise<T | null>((resolve, reject) => {
      const giveUp = (): void => resolve(null);
      waiting.add(giveUp);
      work.then(
        (value) => {
          waiting.delete(giveUp);
          resolve(value);
        },
        (error: unknown) => {
          waiting.delete(giveUp);
          reject(error);
        },
      );
    });
  };
}
