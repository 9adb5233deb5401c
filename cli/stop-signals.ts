// How tacit ends on SIGINT, SIGTERM, SIGHUP and SIGQUIT: with 128 + the signal's number, its exit
// hooks run (sandboxes, checkers and their directories go; the audit log signs what it holds).
// SIGQUIT (Ctrl-\) too: its default ends a process with a core dump, and where dumps are on
// (ulimit -c, a core_pattern of "core") tacit's memory, classified plaintext and the LLM key with
// it, went to a file "core" in the working directory, the default allowed root, where the next
// script read the plaintext back (grep -a); and nothing under way was ended or logged.
// `tacit run`, `tacit repl` and `tacit serve` first end what is under way, as a cancellation
// (for serve: its client going away) would, so that the audit log says how it ended: an MCP
// client that ended tacit serve with SIGTERM while an always-ask delete waited for the person's
// answer, or a Ctrl-C while a command ran, left a log holding the request and nothing after it.
// Other commands, and a second signal while one stops, exit at once.

import { type StopSignal, StoppedBySignal } from "../runner/stop-reason.js";

const EXIT_CODE_OF: Record<StopSignal, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129, SIGQUIT: 131 };

export type { StopSignal };

/** What the next stop signal does instead of exiting (once), or null: exit. */
let stopFirst: ((signal: StopSignal) => void) | null = null;

/** Installs the handlers (cli/main.ts, before any command runs). */
export function exitOnStopSignals(): void {
  closeInspectorSignal();
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
 * SIGUSR1 does nothing. Node answers it by starting its inspector on 127.0.0.1:9229, through which
 * any local process may run code in tacit, the host that decides every effect, and read what it
 * holds (the LLM key it blanked from its environment, classified plaintext): a command a script
 * runs outside a PID namespace, which a ptrace policy keeps out of tacit's memory, sent it and
 * tacit wrote "Debugger listening on ws://127.0.0.1:9229/…". A listener of its own keeps Node's
 * away (Node 22.14 has --disable-sigusr1 for it; tacit runs on older ones). To debug tacit, start
 * it with node --inspect.
 */
function closeInspectorSignal(): void {
  process.on("SIGUSR1", () => undefined);
}

/**
 * For the rest of this process, a stop signal ends it as the system does (no handler: the signal's
 * own default), for a command that then works in one synchronous stretch and has nothing to end
 * first: a handler runs only when the event loop does, so `tacit audit verify` of a log of many GB
 * (or of a sparse file of a TB put in its place) let Ctrl-C wait for the whole read, and then
 * exited 0 as if it had not been pressed.
 */
export function endAtOnceOnStopSignals(): void {
  for (const signal of Object.keys(EXIT_CODE_OF) as StopSignal[]) process.removeAllListeners(signal);
}

/**
 * `read()` with the stop signals at the system's defaults, then tacit's handlers put back: for the
 * read of a file a person named (a script, a --config), which may wait in the kernel as long as
 * the file's other end likes. A handler runs only when the event loop does, so a FIFO nobody
 * writes (one a permitted `mkfifo` of an earlier script put at the script's name) held tacit in
 * open() for ever, and neither Ctrl-C nor SIGTERM (a CI job's timeout) ended it, only SIGKILL.
 * Nothing tacit must end first is under way yet: the sandbox bin/tacit.js may have prestarted ends
 * with it (its parent-death signal).
 */
export function withStopSignalsAtDefault<T>(read: () => T): T {
  const handlers = (Object.keys(EXIT_CODE_OF) as StopSignal[]).map((signal) => [signal, process.rawListeners(signal)] as const);
  endAtOnceOnStopSignals();
  try {
    return read();
  } finally {
    for (const [signal, listeners] of handlers) for (const listener of listeners) process.on(signal, listener as NodeJS.SignalsListener);
  }
}

/**
 * A command's stop: until `release()`, the first stop signal aborts `signal` (and calls `onStop`)
 * instead of exiting; the command ends what is under way and returns `exitCode(…)`.
 */
export class SignalStop {
  private readonly controller = new AbortController();
  private caught: StopSignal | null = null;
  readonly release: () => void;

  constructor(onStop: (signal: StopSignal) => void = () => undefined) {
    const stop = (signal: StopSignal): void => {
      this.caught = signal;
      // The reason names the signal: the script's error says "tacit was stopped by SIGTERM" (see cancelledBecause).
      this.controller.abort(new StoppedBySignal(signal));
      onStop(signal);
    };
    stopFirst = stop;
    this.release = () => {
      if (stopFirst === stop) stopFirst = null;
    };
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The signal that stopped the command, or null. */
  get signalled(): StopSignal | null {
    return this.caught;
  }

  /** 128 + the signal's number when one stopped the command, else `otherwise`. */
  exitCode(otherwise: number): number {
    return this.caught === null ? otherwise : EXIT_CODE_OF[this.caught];
  }
}
