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
// evaluators that compute sessions' (and calls') classified values are not counted: what they hold depends on
// plaintext, and a budget they share with the agent's sandboxes would tell the agent about it
// (whether its own snippet was stopped); each has its own fixed limit, and they draw on a
// budget of their own (EvaluatorsMemory, below).

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

/** What an account draws on: SessionsMemory (the sessions' sandboxes) or EvaluatorsMemory (their pure evaluators). */
interface MemoryPool {
  readonly totalKb: number;
  readonly limitKb: number;
  change(deltaKb: number): void;
  forget(account: SessionMemoryAccount): void;
  /**
   * Why a process that grew to `ownKb` (`account`'s) while the pool holds more than its budget is
   * stopped; null when room was made otherwise.
   */
  overBudget(ownKb: number, running: boolean, account: SessionMemoryAccount): string | null;
}

export class SessionsMemory implements MemoryPool {
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
  /** Whether a reading was taken since the process now counted started (see report and started). */
  private read = false;
  /** The sandbox process the last reading came from (a rebuild replaces it); null before the first. */
  private reporter: object | null = null;
  private closed = false;

  constructor(private readonly pool: MemoryPool) {}

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
    this.read = true;
    this.hold(kb);
    return kb > before && this.pool.totalKb > this.pool.limitKb ? this.pool.overBudget(kb, running, this) : null;
  }

  /** What it counts now, in KiB: its process's last reading (UNREAD_SESSION_KB before the first, 0 once ended). */
  get kb(): number {
    return this.heldKb;
  }

  /** Whether what it counts is a reading of its process (not UNREAD_SESSION_KB, counted before the first). */
  get wasRead(): boolean {
    return this.read;
  }

  /**
   * `process` is the session's sandbox from now on (its first, or one rebuilt after a failed
   * snippet): counted at UNREAD_SESSION_KB until it is read.
   */
  started(process: object): void {
    this.reporter = process;
    this.read = false;
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

/**
 * The resident memory all of tacit serve's pure evaluators hold together, its sessions' and its
 * one-shot calls' (evaluatorsMemoryLimitMb). Each evaluator is bounded on its own (a 256 MiB
 * heap, 512 MiB resident), but a session keeps one for as long as it lives, and a red team's
 * seven sessions, each mapping a 208 MB Float64Array, held 1,221 MiB of evaluators outside every
 * server-wide bound (the sessions' sandboxes were within their 512 MiB); ten sessions that had
 * each run one map kept 21 Deno processes, 668 MiB, idle. A one-shot call's evaluator was not
 * counted at all: one execute_typescript map grew to 268 MiB under a budget of 128, and
 * maxConcurrentEvaluations (8) of them could hold 4 GiB beside it.
 *
 * A budget of their own, read on the schedule each evaluator's own limit is watched on (every
 * 50 ms while a job runs, 250 ms between jobs, and once as each job is answered), never on
 * anything the plaintext decides. What the evaluators hold depends on the secrets their
 * functions are given (every session's), so every decision taken from it may only have effects
 * out of the agent's sight:
 * - over the budget, the evaluators with no job open are ended first (what they hold is of no
 *   use: the next job starts a fresh process);
 * - then the one holding the most, if it holds more than its fair share (the budget over the
 *   evaluators running) and more than the one that grew: its job fails. Stopping the one that
 *   grew, whatever the others held, let one session keep every other's maps from running: a
 *   session's evaluator held 285 MiB of a 448 MiB budget (busy until its job's time limit), and
 *   another session's map, growing to 184 MiB, within its half, was the one that failed;
 * - else the one that grew, whose job fails;
 * - a fresh process is not kept ready after an idle stop when the budget has no room for it.
 * A job that fails fails out of sight (its reason goes to the secure output only, and a failed
 * value looks like any other to the script), and a job that must wait for a fresh start only
 * computes its value later: what the agent can time of a map (a request that sends its value)
 * happens on the store's fixed schedule (MAP_SETTLE_MS in store.ts), which counts from the
 * evaluator's first start only, and a value not computed by then goes without, noted out of
 * sight. An evaluator is counted from its start but read, and so ended by the budget, only once
 * it is ready: the budget never ends one that is starting, and when the first start ends (the
 * moment that schedule counts from) depends on nothing of the budget. Nothing a script sees,
 * its output, its timing, its exit, tells it whether its own values or another session's were
 * cut by the budget.
 */
export class EvaluatorsMemory implements MemoryPool {
  private heldKb = 0;
  /** The accounts of the evaluator processes running (started and not ended): what a fair share is counted over. */
  private readonly accounts = new Set<SessionMemoryAccount>();
  /** One per evaluator (see PureEvaluator): how the budget ends its process. */
  private readonly evaluators = new Set<CountedEvaluator>();

  constructor(readonly limitKb: number) {}

  get totalKb(): number {
    return this.heldKb;
  }

  /** The account of an evaluator process starting: counted at UNREAD_SESSION_KB until it is read (once ready). Never refused. */
  open(): SessionMemoryAccount {
    const account = new SessionMemoryAccount(this);
    this.accounts.add(account);
    this.change(UNREAD_SESSION_KB);
    return account;
  }

  /** Whether a fresh evaluator, counted at UNREAD_SESSION_KB, fits in the budget now. */
  get hasRoomForStart(): boolean {
    return this.heldKb + UNREAD_SESSION_KB <= this.limitKb;
  }

  /** `evaluator` may be ended by the budget from now on. Returns the unregistering (its end: see PureEvaluator.close). */
  register(evaluator: CountedEvaluator): () => void {
    this.evaluators.add(evaluator);
    return () => void this.evaluators.delete(evaluator);
  }

  change(deltaKb: number): void {
    this.heldKb += deltaKb;
  }

  forget(account: SessionMemoryAccount): void {
    this.accounts.delete(account);
  }

  /** What each evaluator running may hold when all of them hold their most: the budget over how many run. */
  private get fairShareKb(): number {
    return this.limitKb / Math.max(1, this.accounts.size);
  }

  private get over(): boolean {
    return this.heldKb > this.limitKb;
  }

  overBudget(ownKb: number, running: boolean, grower: SessionMemoryAccount): string | null {
    // Idle ones first (a SIGKILLed process is given back at once, see SandboxProcess.kill).
    for (const evaluator of [...this.evaluators]) {
      if (!this.over) break;
      evaluator.stopIfIdle();
    }
    if (!this.over) return null;
    const shareKb = this.fairShareKb;
    const evaluatorsRunning = this.accounts.size;
    // Then those holding more than their fair share, and more than the one that grew, the most first.
    const stopped = new Set<SessionMemoryAccount>();
    while (this.over) {
      let most: { account: SessionMemoryAccount; stop: (reason: string) => void } | null = null;
      for (const evaluator of this.evaluators) {
        const counted = evaluator.counted();
        if (counted === null || counted.account === grower || stopped.has(counted.account) || !counted.account.wasRead) continue;
        if (most === null || counted.account.kb > most.account.kb) most = counted;
      }
      if (most === null || most.account.kb <= shareKb || most.account.kb <= ownKb) break;
      stopped.add(most.account);
      most.stop(
        `the pure evaluator held ${mib(most.account.kb)} of memory (resident), more than its fair share of ${mib(shareKb)} (the ` +
          `${mib(this.limitKb)} all of this tacit serve's pure evaluators may hold together, over the ${evaluatorsRunning} running), when another ` +
          `grew and they held ${mib(this.heldKb)} together, more than the ${mib(this.limitKb)} they may hold together; so it was stopped ` +
          "and the value failed (the one holding the most is stopped, so that no session or call keeps the others' maps from running). " +
          `Make the function hold less (at most ${mib(shareKb)} while ${evaluatorsRunning} evaluators run), or have the operator raise the ` +
          'budget (--evaluators-memory-limit-mb <MiB>, config "evaluatorsMemoryLimitMb")',
      );
    }
    if (!this.over) return null;
    const grew = running
      ? `the map/flatMap function grew the pure evaluator to ${mib(ownKb)} of memory (resident)`
      : `the pure evaluator grew to ${mib(ownKb)} of memory (resident) between jobs (something a function started went on running)`;
    return (
      `${grew} while the pure evaluators of this tacit serve's sessions and calls held ${mib(this.heldKb)} together, more than the ` +
      `${mib(this.limitKb)} they may hold together, and no other held more than this one beyond its fair share (${mib(shareKb)}: ` +
      `the budget over the ${evaluatorsRunning} running), so it was stopped and the value failed. Make the function hold less, ` +
      'or have the operator raise the budget (--evaluators-memory-limit-mb <MiB>, config "evaluatorsMemoryLimitMb")'
    );
  }
}

/** An evaluator as the budget sees it (see PureEvaluator). */
export interface CountedEvaluator {
  /** Ends its process if it is ready and no job is open there. */
  stopIfIdle(): void;
  /** Its process counted in the budget (ready), with its account and how to end it (its open job fails with `reason`); null when none. */
  counted(): { account: SessionMemoryAccount; stop: (reason: string) => void } | null;
}
