// Facts about the file system that the checks of one host operation ask again and again (is
// there a .git or an .envrc in this directory, what does this repository's configuration name),
// remembered only until the operation's synchronous work is over: cleared by a microtask queued
// when the first fact is remembered. A mkdir of 2,000 levels checks each level it makes, and each
// check walked every directory above it again, with a path that long each time: the cube of the
// depth, minutes of the host's thread, where the script's time limit cannot fire.
// No fact outlives the request it was found for: conversation.ts handles each request in a
// promise callback chained after the one before has settled, which is queued after this clearing
// microtask (the queue runs in order). Within a request, the operations that consult these facts
// only make directories and write the one file they check, after checking.

export class TurnMemo<V> {
  private readonly values = new Map<string, V>();
  private clearing = false;

  get(key: string, compute: () => V): V {
    const known = this.lookup(key);
    if (known) return known.value;
    const value = compute();
    this.set(key, value);
    return value;
  }

  /** The value remembered for `key` this turn, if any. */
  lookup(key: string): { value: V } | undefined {
    return this.values.has(key) ? { value: this.values.get(key) as V } : undefined;
  }

  set(key: string, value: V): void {
    this.values.set(key, value);
    if (!this.clearing) {
      this.clearing = true;
      queueMicrotask(() => {
        this.values.clear();
        this.clearing = false;
      });
    }
  }
}
