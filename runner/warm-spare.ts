// tacit serve's warm spare: the sandbox the next one-shot call (or new session) takes, started
// ahead so that it boots while the client thinks. A boot is tens of ms of CPU on several
// threads (measured: 70-80 ms of CPU, 0.3-0.7 s of wall time on a loaded 2-core machine), and
// a session's snippet that came meanwhile competed with it for the cores: in the benchmark's
// paced loop, where one-shot calls and snippets alternate 100 ms apart, every snippet met the
// boot the one-shot call before it had started. While a snippet is under way, a spare still
// booting is stopped (SIGSTOP: it runs nothing of an agent's yet, only tacit's bootstrap), and
// goes on once no snippet is; one taken meanwhile goes on at once.

import { monotonicMs } from "./monotonic.js";
import { SandboxProcess } from "./sandbox-process.js";

/**
 * How long after its start a spare may still be booting, and is stopped while a snippet runs.
 * Past it, it waits blocked for its program: stopping it would only wake its threads for nothing.
 */
const BOOT_MS = 2_000;

export class WarmSpare {
  private spare: SandboxProcess | undefined;
  private startedAt = -Infinity;
  /** The spare is stopped (see inForeground). */
  private held = false;
  /** Session snippets under way. */
  private foreground = 0;
  private closed = false;

  constructor(private readonly memoryLimitMb: number) {
    this.replenish();
  }

  /**
   * Takes the spare, running (it goes on if it was stopped), or undefined when none is waiting.
   * Not one that has ended while it waited (its network namespace could not be made as it
   * started, a namespace limit reached then, or it crashed): handed out, it failed the call that
   * took it, which was told the script had exited; the caller starts a fresh sandbox instead.
   */
  take(): SandboxProcess | undefined {
    const taken = this.spare;
    this.spare = undefined;
    if (this.held) taken?.hold(false);
    this.held = false;
    return taken?.hasEnded === true ? undefined : taken;
  }

  /**
   * Takes back a spare a call took and did not use (its script was refused before running, see
   * evaluate's giveBack): it serves the next call. Ended instead where another spare is waiting
   * already (started as the call came, right after an answer) or the server has stopped.
   */
  giveBack(unused: SandboxProcess): void {
    if (this.closed || this.spare !== undefined || unused.isKilled || unused.hasEnded) {
      unused.kill("cancelled", "not needed: another spare sandbox is waiting");
      return;
    }
    this.spare = unused;
    // Taken and given back, it has had its boot's head start: not stopped while a snippet runs (see hold).
    this.startedAt = -Infinity;
  }

  /** Starts the next spare unless one is waiting (stopped at once while a snippet runs). */
  replenish(): void {
    if (this.closed || this.spare !== undefined) return;
    this.spare = new SandboxProcess({ memoryLimitMb: this.memoryLimitMb });
    this.startedAt = monotonicMs();
    if (this.foreground > 0) this.hold();
  }

  /** Runs a session's snippet (`work`) with a spare that may still be booting stopped until no snippet is under way. */
  async inForeground<T>(work: () => Promise<T>): Promise<T> {
    if (this.foreground++ === 0) this.hold();
    try {
      return await work();
    } finally {
      if (--this.foreground === 0 && this.held) {
        this.held = false;
        this.spare?.hold(false);
      }
    }
  }

  /** Ends the spare; none is started after. */
  close(): void {
    this.closed = true;
    this.spare?.kill("cancelled", "the server stopped");
    this.spare = undefined;
  }

  private hold(): void {
    if (this.spare === undefined || this.held || monotonicMs() - this.startedAt >= BOOT_MS) return;
    this.held = true;
    this.spare.hold(true);
  }
}
