// Facts about the file system that the checks of one file operation ask again and again (is
// there a .git or an .envrc in this directory, what does this repository's configuration name),
// remembered only while that operation runs: inside fileOperation(), whose end forgets them all.
// Outside one, nothing is remembered and every check looks afresh. A mkdir of 2,000 levels checks
// each level it makes, and each check walked every directory above it again, with a path that
// long each time: the cube of the depth, minutes of the host's thread, where the script's time
// limit cannot fire.
// An operation is synchronous, so nothing else (another request, another session's) runs while
// its facts are remembered; and the operations run in one (mkdir, write) only make directories
// and write the one file they check, after checking, which changes none of these facts.

/** Every memo, so that the end of an operation forgets what each holds. */
const memos = new Set<OperationMemo<unknown>>();
/** Operations under way (nested calls count once). */
let depth = 0;
/** Operations begun so far (nested calls count once): the number of the one under way. */
let begun = 0;

/**
 * The number of the operation under way, or null outside one: a check made in the same
 * operation saw the same memos (what a check finds later, in another operation, may differ).
 */
export function operationUnderWay(): number | null {
  return depth > 0 ? begun : null;
}

/** Runs `operation` (synchronous) with the memos on; they forget everything when it ends, however it ends. */
export function fileOperation<T>(operation: () => T): T {
  if (depth === 0) begun++;
  depth++;
  try {
    return operation();
  } finally {
    depth--;
    if (depth === 0) for (const memo of memos) memo.forget();
  }
}

export class OperationMemo<V> {
  private readonly values = new Map<string, V>();

  constructor() {
    memos.add(this as OperationMemo<unknown>);
  }

  get(key: string, compute: () => V): V {
    const known = this.lookup(key);
    if (known) return known.value;
    const value = compute();
    this.set(key, value);
    return value;
  }

  /** The value remembered for `key` in this operation, if any (never outside one). */
  lookup(key: string): { value: V } | undefined {
    return this.values.has(key) ? { value: this.values.get(key) as V } : undefined;
  }

  /** Remembered until the operation ends; outside one, not at all. */
  set(key: string, value: V): void {
    if (depth > 0) this.values.set(key, value);
  }

  forget(): void {
    this.values.clear();
  }
}
