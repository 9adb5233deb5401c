// The resident memory all of tacit serve's REPL sessions hold together. memoryLimitMb bounds one
// sandbox (its heap, and its resident memory at that plus RSS_ALLOWANCE_MB), and a session's
// sandbox keeps what its snippets made for as long as the session lives, idle or not: a red
// team's four idle sessions, each holding a Float64Array(75_000_000), kept 2,460 MB, and the
// default 100 sessions (maxSessions) at 768 MiB each could hold 75 GB, more than most machines
// have. Here they draw on one budget (sessionsMemoryLimitMb): a session is not created when the
// sessions hold it all, and a snippet that grows its sandbox while they hold more is stopped.
//
// Counted from the readings each sandbox's own watchdog takes (SandboxProcess: every 50 ms while
// a snippet runs, every 250 ms between snippets), so it costs no /proc read of its own. The pure
// evaluators that compute sessions' classified values are not counted: what they hold depends on
// plaintext, and a budget they share with the agent's sandboxes would tell the agent about it
// (whether its own snippet was stopped); each has its own fixed limit.

const KB_PER_MIB = 1024;

/**
 * What a session counts before its sandbox is first read (at its first snippet): a booted
 * sandbox holds some 35 MiB here, a little more once it has run a snippet. Counted from the
 * start, so that sessions created all at once cannot pass the budget before any is read.
 */
export const UNREAD_SESSION_KB = 64 * KB_PER_MIB;

const mib = (kb: number): string => `${Math.round(kb / KB_PER_MIB)} MiB`;

/** How to make room, said by every refusal. */
const MAKE_ROOM =
  "delete sessions you no longer need with delete_repl_session (list_sessions lists them), or have the operator " +
  'raise the budget (--sessions-memory-limit-mb <MiB>, config "sessionsMemoryLimitMb")';

export class SessionsMemory {
  private readonly accounts = new Set<SessionMemoryAccount>();
  private heldKb = 0;

  constructor(readonly limitKb: number) {}

  /** Resident memory the sessions hold together, in KiB (an unread session at UNREAD_SESSION_KB). */
  get totalKb(): number {
    return this.heldKb;
  }

  /**
   * An account for a new session, counted at UNREAD_SESSION_KB from now on; or, when that would
   * take the sessions past the budget, why the session is refused.
   */
  open(): SessionMemoryAccount | { refused: string } {
    if (this.heldKb + UNREAD_SESSION_KB > this.limitKb) {
      const sessions = this.accounts.size;
      return {
        refused:
          `create_repl_session refused: the server's ${sessions} live session${sessions === 1 ? "" : "s"} hold ${mib(this.heldKb)} of memory ` +
          `(resident) together, and a new one (counted at ${mib(UNREAD_SESSION_KB)} until it runs) would take them past the ` +
          `${mib(this.limitKb)} all REPL sessions of this tacit serve may hold together. To make room, ${MAKE_ROOM}.`,
      };
    }
    const account = new SessionMemoryAccount(this);
    this.accounts.add(account);
    this.change(UNREAD_SESSION_KB);
    return account;
  }

  /** Called by an account as what it holds changes. */
  change(deltaKb: number): void {
    this.heldKb += deltaKb;
  }

  /** Called by an account once its session has ended. */
  forget(account: SessionMemoryAccount): void {
    this.accounts.delete(account);
  }

  /**
   * Why a session's sandbox that grew to `ownKb` is stopped, the sessions then holding more than
   * the budget. `running`: a snippet (or a rebuild's replay of one) runs in it.
   */
  overBudget(ownKb: number, running: boolean): string {
    const others = this.accounts.size - 1;
    const grew = running
      ? `the snippet grew its session's sandbox to ${mib(ownKb)} of memory (resident)`
      : `the session's sandbox grew to ${mib(ownKb)} of memory (resident) between snippets (something a snippet started went on running)`;
    return (
      `${grew} while the server's REPL sessions together held ${mib(this.heldKb)}, more than the ${mib(this.limitKb)} all of ` +
      `them may hold together (the ${others} other session${others === 1 ? "" : "s"}: ${mib(this.heldKb - ownKb)}), so it was ` +
      `stopped. Hold less in this session, or make room: ${MAKE_ROOM}`
    );
  }
}

/** One session's share of SessionsMemory: what its sandbox (whichever is the session's now) was last read to hold. */
export class SessionMemoryAccount {
  private heldKb = UNREAD_SESSION_KB;
  /** The sandbox process the last reading came from (a rebuild replaces it); null before the first. */
  private reporter: object | null = null;
  private closed = false;

  constructor(private readonly pool: SessionsMemory) {}

  /**
   * A reading of `process` (the session's sandbox). Returns why it must be stopped when it grew
   * since its last reading while the sessions together hold more than the budget, else null:
   * the one that grows is stopped, not one that holds what it held (the sessions pass the budget
   * only as one of them grows). Between snippets too (`running` false): a sandbox does not run
   * then, but a worker a snippet left running may, within the CPU time tacit allows it there.
   */
  report(process: object, kb: number, running: boolean): string | null {
    if (this.closed) return null;
    const before = this.reporter === process ? this.heldKb : 0;
    this.reporter = process;
    this.hold(kb);
    return kb > before && this.pool.totalKb > this.pool.limitKb ? this.pool.overBudget(kb, running) : null;
  }

  /**
   * `process` is the session's sandbox from now on (its first, or one rebuilt after a failed
   * snippet): counted at UNREAD_SESSION_KB until it is read.
   */
  started(process: object): void {
    this.reporter = process;
    this.hold(UNREAD_SESSION_KB);
  }

  /** `process` was killed or has ended: what it held is given back (a SIGKILLed process frees it at once). */
  ended(process: object): void {
    if (this.reporter === process) this.hold(0);
  }

  /** The session has ended: it holds nothing any more, and nothing more is counted. */
  close(): void {
    if (this.closed) return;
    this.hold(0);
    this.closed = true;
    this.pool.forget(this);
  }

  private hold(kb: number): void {
    if (this.closed) return;
    this.pool.change(kb - this.heldKb);
    this.heldKb = kb;
  }
}
