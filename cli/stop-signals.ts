// How tacit ends on SIGINT, SIGTERM and SIGHUP: at once, with 128 + the signal's number, its
// exit hooks run (sandboxes, checkers and their directories go; the audit log signs what it
// holds). `tacit serve` first stops the calls under way, as when its client goes away (see
// runner/mcp-server.ts): an MCP client that ended it with SIGTERM while an always-ask delete
// waited for the person's answer left an audit log holding the delete's request and nothing
// after it. A second signal while it stops exits at once.

const EXIT_CODE_OF = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

export type StopSignal = keyof typeof EXIT_CODE_OF;

/** What the next stop signal does instead of exiting (once), or null: exit. */
let stopFirst: ((signal: StopSignal) => void) | null = null;

/** Installs the handlers (cli/main.ts, before any command runs). */
export function exitOnStopSignals(): void {
  for (const signal of Object.keys(EXIT_CODE_OF) as StopSignal[]) {
    const exit = (): void => process.exit(EXIT_CODE_OF[signal]);
    process.once(signal, () => {
      const stop = stopFirst;
      stopFirst = null;
      if (stop === null) return exit();
      process.once(signal, exit);
      stop(signal);
    });
  }
}

/**
 * Until the returned function is called, the first stop signal calls `stop` instead of exiting;
 * the command then ends itself, with `exitCodeOf` the signal.
 */
export function stopFirstOnSignal(stop: (signal: StopSignal) => void): () => void {
  stopFirst = stop;
  return () => {
    if (stopFirst === stop) stopFirst = null;
  };
}

export function exitCodeOf(signal: StopSignal): number {
  return EXIT_CODE_OF[signal];
}
