// Values built the first time they are asked for. Building zod schemas costs milliseconds
// (zod compiles its checks as schemas are made); a short `tacit run` makes most of its
// schemas only to never use them, before its sandbox has been sent the program.

/** `build()`'s value, built on the first call and the same ever after. */
export function onFirstUse<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
