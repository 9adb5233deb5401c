// The host's handle on the pure evaluator process: one per evaluation, started on first
// use, jobs run one at a time. A job that runs too long or breaks the process kills it, and
// one left idle for PURE_IDLE_STOP_MS is replaced by a fresh one at once. Whatever
// happens in there, the caller gets a result to keep classified, never something to show the agent.

import { MAX_HOST_FRAME_CHARS, PURE_READY_ID, type PureJob, type PureReply } from "../../library/protocol.js";
import { FrameSplitter, parsePureReply, ProtocolError } from "../frames.js";
import { PausableTimer } from "../pausable-timer.js";
import { PlaintextBudget } from "./budget.js";
import { jsonLengthWithin } from "./json-length.js";
import { namespaceFailureAtStart } from "../network-namespace.js";
import { SandboxProcess } from "../sandbox-process.js";
import { PURE_IDLE_STOP_MS, PURE_JOB_TIMEOUT_MS, PURE_MEMORY_LIMIT_MB } from "../limits.js";
import type { CountedEvaluator, EvaluatorsMemory, SessionMemoryAccount } from "../sessions-memory.js";

// PURE_JOB_TIMEOUT_MS (how long one map/flatMap function may run, config pureJobTimeoutMs) lives in limits.ts too.
export { PURE_JOB_TIMEOUT_MS };
/** How long the evaluator may take to start (before its first job's own limit runs). */
const PURE_START_TIMEOUT_MS = 30_000;
// PURE_IDLE_STOP_MS lives in limits.ts with the other defaults (config.ts reads it without loading this module).
export { PURE_IDLE_STOP_MS };
/**
 * What a reply line is read to beyond what the store would keep (see replyLimitChars): its
 * frame, and a failed job's error (of which the host keeps 2,048 characters, six of JSON text
 * each at most) whether or not the store has room left.
 */
const REPLY_ROOM_CHARS = 64 * 1024;

export type PureResult = { ok: true; value: unknown } | { ok: false; reason: string };

export class PureEvaluator {
  private process: SandboxProcess | null = null;
  /** Settles once the current process has said it is ready for jobs (or has ended). */
  private ready: Promise<void> = Promise.resolve();
  /** The job under way, and the process it was sent to. */
  private waiting: { id: number; proc: SandboxProcess; resolve: (reply: PureReply) => void } | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private closed = false;
  /** Jobs asked for (see run) and not finished: while any is, the process is never ended for idling. */
  private openJobs = 0;
  /** Ends the process idleStopMs after the last open job finished (see PURE_IDLE_STOP_MS). */
  private idleStop: NodeJS.Timeout | null = null;
  /** Questions being asked (see whileAsked); while any is, the process is stopped. */
  private asking = 0;
  /** Settles when the last question is answered; the limits below are paused until then. */
  private answered: Promise<void> = Promise.resolve();
  private markAnswered: () => void = () => undefined;

  /**
   * `valueLimitBytes`: the most a value may cost the host (config classifiedStoreLimitBytes,
   * measured as the store measures it): a reply that would cost more once parsed is not parsed.
   * `memory`: tacit serve's evaluators' budget (see EvaluatorsMemory), its sessions' and its
   * one-shot calls': each process of this evaluator is counted in it from its start, read once
   * ready, and ended when the evaluators pass it (while idle, or holding more than its fair share).
   * `idleStopMs`: how long the process may go with no job (config pureIdleStopMs, see PURE_IDLE_STOP_MS).
   * `jobTimeoutMs`: how long one function may run (config pureJobTimeoutMs, see PURE_JOB_TIMEOUT_MS).
   */
  constructor(
    private readonly valueLimitBytes: number,
    private readonly memory?: EvaluatorsMemory,
    private readonly idleStopMs: number = PURE_IDLE_STOP_MS,
    private readonly jobTimeoutMs: number = PURE_JOB_TIMEOUT_MS,
  ) {}

  /** The process counted in `memory` (see CountedEvaluator), with its account and how the budget ends it. */
  private counted(): ReturnType<CountedEvaluator["counted"]> {
    const proc = this.countedProcess;
    const account = this.countedAccount;
    if (proc === null || account === null || proc.isKilled) return null;
    // Its open job, if any, fails with the reason (out of sight); the next starts a fresh process.
    return { account, stop: (reason) => proc.kill("sessions-memory", reason) };
  }

  /**
   * Stops being asked to end the process when the evaluators pass their budget (see close).
   * Registered at the first start, not before: a server's call refused by its checks (or
   * cancelled before it ran) makes an evaluator it never closes, and each one registered up
   * front would have stayed in the budget's list for the server's life.
   */
  private leaveMemory: (() => void) | null = null;

  /**
   * Ends the process if it is ready and no job is open (pending or running), for the
   * evaluators' budget (see EvaluatorsMemory): the next job starts a fresh one. Not one still
   * starting: the store's schedule counts from the first start's end (see started), which the
   * budget must not move.
   */
  private stopIfIdle(): void {
    const proc = this.process;
    if (this.openJobs > 0 || proc === null || this.countedProcess !== proc) return;
    this.cancelIdleStop();
    proc.kill("finished", "the pure evaluator was idle while the evaluators of the server's sessions held more than their budget");
    this.process = null;
  }

  /** The process counted in `memory` (it said it was ready), if any, and its account. */
  private countedProcess: SandboxProcess | null = null;
  private countedAccount: SessionMemoryAccount | null = null;

  /** The budget of the store whose values this evaluator computes (see readRepliesWithin). */
  private budget: PlaintextBudget | null = null;

  /**
   * Bounds what the host reads of a reply by what `budget` (the store's) would still keep:
   * without it, a reply was read up to the frame limit (256 Mi characters, half a gigabyte)
   * whatever the store could keep of it, and a map function decides how long its reply is, so
   * several sessions doing so at once could take tacit serve toward running out of memory at a
   * time the plaintext decides. A reply past the bound fails out of sight (see replyLimitChars).
   */
  readRepliesWithin(budget: PlaintextBudget): void {
    this.budget = budget;
  }

  /**
   * The longest reply line read: REPLY_ROOM_CHARS, and three characters for each byte the store
   * would still keep (a value's string costs two bytes a character there, and a character is at
   * most six of JSON text: `\u0001`). A value the store would keep is never cut.
   */
  private replyLimitChars(): number {
    const room = this.budget?.roomBytes ?? this.valueLimitBytes;
    return Math.min(MAX_HOST_FRAME_CHARS, REPLY_ROOM_CHARS + 3 * room);
  }

  /**
   * Runs `work` (a person being asked about one of the evaluation's requests) with the evaluator
   * stopped (SIGSTOP) and its limits paused, as the evaluation's own clock is: a map function
   * computing while a person decides used a core for as long as they took (a twelfth security
   * review queued maps of about 4.5 s each before a request a rule always asks about, and the
   * evaluator computed through the question), uncounted, each question up to the five minutes
   * one waits, where the time limit bounds classified work otherwise. A function stopped in
   * the middle goes on where it was once the person has answered.
   */
  async whileAsked<T>(work: Promise<T>): Promise<T> {
    if (this.asking++ === 0) {
      this.answered = new Promise<void>((resolve) => (this.markAnswered = resolve));
      this.process?.hold(true);
      for (const timer of this.limits) void timer.whilePaused(this.answered);
    }
    try {
      return await work;
    } finally {
      if (--this.asking === 0) {
        this.process?.hold(false);
        this.markAnswered();
      }
    }
  }

  /** The start and job limits running now, paused while a person is asked. */
  private readonly limits = new Set<PausableTimer>();

  /**
   * A limit that stops while a person is asked (see whileAsked); `stop()` it once it no longer
   * applies. `of`: the process whose time limit it is (see SandboxProcess.timeLimit: under tacit
   * serve, held off the main thread too), where it is one that ends the process.
   */
  private limit(ms: number, onExpire: () => void, of?: SandboxProcess): { stop(): void } {
    const expire = (): void => {
      this.limits.delete(timer);
      onExpire();
    };
    const timer = of === undefined ? new PausableTimer(ms, expire) : of.timeLimit(ms, expire);
    this.limits.add(timer);
    if (this.asking > 0) void timer.whilePaused(this.answered);
    return {
      stop: () => {
        timer.stop();
        this.limits.delete(timer);
      },
    };
  }

  /** Deadlines from `after` not reached yet: each resolves early once the evaluator is closed. */
  private readonly deadlines = new Set<() => void>();
  /** Settles once the first process this evaluator started is ready for jobs (or has ended). */
  private firstReady: Promise<void> | null = null;

  /**
   * Settles once the evaluator's first process is ready, starting it now if none was ever
   * started: how long Deno takes to start depends on nothing of the agent's, and the store's
   * schedule counts from then (a later process, started after a function broke the one
   * before, is not waited for: when that happens depends on the plaintext).
   */
  started(): Promise<void> {
    if (this.firstReady === null) {
      if (this.closed) return Promise.resolve();
      this.process ??= this.start();
      this.firstReady = this.ready;
    }
    return this.firstReady;
  }

  /**
   * Resolves `ms` from now, not counting the time a person is asked (the evaluator is stopped
   * then, see whileAsked), or at once once the evaluator is closed (its evaluation is over, and
   * what waited for it is no longer seen by the agent). The store's schedule for map results
   * (see MAP_SETTLE_MS in store.ts): a time that depends on when the script asked, never on how
   * long the evaluator takes.
   */
  after(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const reached = (): void => {
        this.deadlines.delete(reached);
        timer.stop();
        resolve();
      };
      const timer = this.limit(ms, reached);
      this.deadlines.add(reached);
    });
  }

  private start(): SandboxProcess {
    if (this.memory !== undefined) this.leaveMemory ??= this.memory.register({ stopIfIdle: () => this.stopIfIdle(), counted: () => this.counted() });
    const proc = new SandboxProcess({ memoryLimitMb: PURE_MEMORY_LIMIT_MB, role: "pure" });
    // Started while a person is asked (a job queued before the question): it waits for the answer too.
    if (this.asking > 0) proc.hold(true);
    let markReady: () => void = () => undefined;
    /** Whether it said it was ready: only then can a function have run in it (see the end below). */
    let becameReady = false;
    this.ready = new Promise<void>((resolve) => (markReady = resolve));
    const startLimit = this.limit(PURE_START_TIMEOUT_MS, () => proc.kill("timeout", `the pure evaluator did not start within ${PURE_START_TIMEOUT_MS} ms`));
    const started = (): void => {
      startLimit.stop();
      markReady();
    };
    // The same splitting and validation as the sandbox's frames; replies carry whole values,
    // so they may be as long as what the host sends the evaluator.
    const splitter = new FrameSplitter(MAX_HOST_FRAME_CHARS);
    /**
     * Bytes of the share of all sessions' classified values (see heap-share.ts) taken for the
     * part of a reply read and not ended yet: each store bounds its own reply, and this bounds
     * the replies of a server's sessions read at the same time together.
     */
    let reading = 0;
    // Counted (at UNREAD_SESSION_KB) from its start, so that fresh ones started together are
    // seen by the budget's room for another (see scheduleIdleStop); read only once ready.
    const account: SessionMemoryAccount | null = this.memory?.open() ?? null;
    const giveBackReading = (): void => {
      this.budget?.giveReading(reading);
      reading = 0;
    };
    proc.stdout.on("data", (chunk: Buffer) => {
      // A process the host has ended may still have written more: none of it counts.
      if (proc.isKilled) return;
      try {
        const lines = splitter.push(chunk);
        const limit = this.replyLimitChars();
        if (splitter.holdingChars > limit || lines.some((line) => line.length > limit)) {
          throw new ProtocolError(
            `the evaluator's reply was longer than the ${limit} characters the host reads of one: ` +
              "three for each byte this evaluation's or session's classified values may still take (config \"classifiedStoreLimitBytes\")",
          );
        }
        const holdingBytes = splitter.holdingChars * 2;
        if (holdingBytes > reading) {
          if (this.budget !== null && !this.budget.takeReading(holdingBytes - reading)) {
            throw new ProtocolError(
              "the evaluator's reply, still being read, would take more than the classified values of all this server's sessions and calls " +
                "may still take together (a quarter of tacit's heap limit)",
            );
          }
          reading = holdingBytes;
        } else if (holdingBytes < reading) {
          this.budget?.giveReading(reading - holdingBytes);
          reading = holdingBytes;
        }
        for (const line of lines) {
          // Measured on its text first: parsed, a reply of a few tens of megabytes of "[],"
          // took gigabytes of the host (and a map function decides what it answers, so whether
          // tacit died could tell the script about a secret). One whose elements and properties
          // alone would cost more than the store keeps is not parsed: its process is ended and
          // its job fails out of sight, like any other that breaks the protocol. (Its text is
          // bounded by the frame's limit; a value that is too large as text is not kept by the store.)
          if (PlaintextBudget.structureOfJson(line) > this.valueLimitBytes) {
            throw new ProtocolError(
              `the evaluator answered with a value whose arrays and objects alone would take more than the ` +
                `${Math.round(this.valueLimitBytes / (1024 * 1024))} MiB the host keeps for classified values (config "classifiedStoreLimitBytes") once read`,
            );
          }
          const reply = parsePureReply(line);
          if (reply.id === PURE_READY_ID) {
            becameReady = true;
            // Read from here on (see EvaluatorsMemory): its start is never ended by the budget.
            if (account !== null && !proc.isKilled) {
              proc.countIn(account);
              this.countedProcess = proc;
              this.countedAccount = account;
            }
            started();
          } else this.onReply(reply, proc);
        }
      } catch (error) {
        if (!(error instanceof ProtocolError)) throw error;
        giveBackReading();
        proc.kill("protocol", error.message);
      }
    });
    void proc.ended.then((end) => {
      giveBackReading();
      account?.close();
      if (this.countedProcess === proc) {
        this.countedProcess = null;
        this.countedAccount = null;
      }
      started();
      if (this.process === proc) this.process = null;
      // Only a job sent to this process ends with it (a later one went to a fresh process).
      if (this.waiting?.proc !== proc) return;
      // One that ended before it was ready ran no function of the script's: where that was
      // unshare failing (a namespace limit reached), the secure output's note says so.
      const why =
        end.kind === "killed"
          ? end.detail
          : ((becameReady ? null : namespaceFailureAtStart(end, "pure evaluator")) ?? `the evaluator exited (${end.signal ?? end.code})`);
      this.waiting.resolve({ id: this.waiting.id, ok: false, error: why });
      this.waiting = null;
    });
    return proc;
  }

  /**
   * A reply counts only from the process its job was sent to, for that job, and only once the
   * process has read the whole job: the evaluator reads a job's line to its end before it runs
   * it, so all of it has gone into the pipe, and the host has seen that, before any reply can
   * come. A map function could patch the evaluator's realm (TextDecoder, JSON, console) for the
   * jobs after its own: a security review's answered the next job at once, from the first piece
   * it read, and blocked, and the host, its job answered, held the rest of the job (440 Mi
   * characters: a 40 Mi-character value captured under ten names) for as long as the session
   * lived. Map functions now run in a frozen realm of their own (library/pure/evaluator.ts);
   * should a reply come early all the same, the process is ended, and the job fails out of sight.
   */
  private onReply(reply: PureReply, from: SandboxProcess): void {
    if (this.waiting && this.waiting.proc === from && reply.id === this.waiting.id) {
      if (from.holdsUnwritten) {
        from.kill("protocol", "the evaluator answered a job before it had read all of it");
        return;
      }
      const { resolve } = this.waiting;
      this.waiting = null;
      resolve(reply);
    }
  }

  /**
   * Runs one job after those before it. Never rejects. `abandoned` is the signal of the
   * evaluation that asked for it: once that evaluation is killed, the job is not started, or
   * (running) its process is killed, so a session's evaluator is free for the next snippet
   * at once instead of after a queue of jobs of up to PURE_JOB_TIMEOUT_MS each.
   */
  run(job: Omit<PureJob, "id">, abandoned?: AbortSignal): Promise<PureResult> {
    this.openJobs++;
    this.cancelIdleStop();
    const result = this.chain.then(() => this.runNow(job, abandoned));
    this.chain = result;
    // runNow never rejects: every job that was asked for finishes, and is counted out here.
    void result.then(() => {
      if (--this.openJobs === 0) this.scheduleIdleStop();
    });
    return result;
  }

  private cancelIdleStop(): void {
    if (this.idleStop !== null) clearTimeout(this.idleStop);
    this.idleStop = null;
  }

  /** From now (the last open job has finished), idleStopMs of no job ends the process. */
  private scheduleIdleStop(): void {
    this.cancelIdleStop();
    if (this.closed || this.process === null) return;
    this.idleStop = setTimeout(() => {
      this.idleStop = null;
      const proc = this.process;
      if (this.openJobs > 0 || proc === null) return;
      proc.kill("finished", `the pure evaluator was idle for ${this.idleStopMs} ms`);
      // A fresh one at once, holding only what a start holds: the next map finds it ready, as
      // it found the old one, instead of waiting for a Deno start that a request sending its
      // value may not wait for on a loaded machine (see MAP_SETTLE_MS in store.ts). Not when
      // the evaluators' budget has no room for one (see EvaluatorsMemory): the next job starts it.
      this.process = this.closed || this.memory?.hasRoomForStart === false ? null : this.start();
    }, this.idleStopMs);
    // A one-shot's end (or a session's) closes the evaluator; this timer keeps nothing alive.
    this.idleStop.unref();
  }

  private runNow(job: Omit<PureJob, "id">, abandoned: AbortSignal | undefined): Promise<PureResult> {
    if (this.closed || abandoned?.aborted) return Promise.resolve({ ok: false, reason: "the evaluation ended before this value was computed" });
    const id = this.nextId++;
    // The job is one line of JSON, and it can be longer than a string may be (a computed value
    // of some tens of millions of characters, captured under several names, is in it once per
    // name). Thrown in here, that rejected the job, and with it every later one; out of any
    // request, the rejection ended the host: a security review crashed `tacit run` (exit 1) only
    // when a map, told by the plaintext, made its value large. It fails out of sight instead.
    // Measured before it is made, and no longer (in characters) than the store's limit in bytes,
    // nor than the evaluator reads (MAX_HOST_FRAME_CHARS): made to be measured, a job took its
    // whole length of the host's heap first. Values held within the store's budget, 2 bytes a
    // character, are up to 6 characters a character in JSON (`\u0001`): a security review
    // captured five values of 10 million control characters, made only when the secret began as
    // guessed, and a tacit with a 300 MB heap died building the job (and only then).
    const framed = { ...job, id } satisfies PureJob;
    const jobLimitChars = Math.min(MAX_HOST_FRAME_CHARS, this.valueLimitBytes + REPLY_ROOM_CHARS) - 1;
    if (!jsonLengthWithin(framed, jobLimitChars)) {
      return Promise.resolve({
        ok: false,
        reason:
          `the job, with the values the function captures, is longer than the ${jobLimitChars + 1} characters of JSON the host sends the pure evaluator in one ` +
          "(as many as this evaluation's or session's classified values may take bytes, config \"classifiedStoreLimitBytes\", and at most what the evaluator reads)",
      });
    }
    let line: string;
    try {
      line = JSON.stringify(framed) + "\n";
    } catch (error) {
      return Promise.resolve({ ok: false, reason: `the job could not be sent to the pure evaluator: ${String(error)}` });
    }
    // A process killed between jobs (it went on running after answering, say) whose end has
    // not been seen yet takes no more jobs: a fresh one does. Sent there, the job failed with
    // the old process's reason.
    if (this.process?.killed) this.process = null;
    const proc = (this.process ??= this.start());
    const ready = this.ready;
    const answered = new Promise<PureResult>((resolve) => {
      // The function's limit, from when the evaluator is ready: a fresh one's start does not count.
      let timer: { stop(): void } | undefined;
      let settled = false;
      void ready.then(() => {
        if (!settled) timer = this.limit(this.jobTimeoutMs, () => proc.kill("timeout", `the function ran longer than ${this.jobTimeoutMs} ms`), proc);
      });
      // The process is killed (the next job starts a fresh one); its end resolves the job.
      const stop = (): void => proc.kill("cancelled", "the evaluation ended before this value was computed");
      abandoned?.addEventListener("abort", stop, { once: true });
      this.waiting = {
        id,
        proc,
        resolve: (reply) => {
          settled = true;
          timer?.stop();
          abandoned?.removeEventListener("abort", stop);
          // Answered: the evaluator waits for its next job, blocked on stdin, and must not run
          // at all until then. A thread a function started and left running (timed by nothing
          // between jobs, for as long as a session lives) ends it; the next job starts a fresh one.
          proc.watchIdle();
          resolve(reply.ok ? { ok: true, value: reply.value } : { ok: false, reason: shortReason(reply.error) });
        },
      };
      proc.watchMemory(true);
    });
    // Written here, not in the closures above: a variable they read is kept with them until the
    // job is answered, and the line (up to the store's limit in characters, a value of control
    // characters six times its length) was held by the host for as long as the function ran. A
    // red team's seven tacit serve calls at once, each holding 10 MiB of classified values and
    // mapping them with a function that spun for its 5 s, had the host's heap at 261 MB of its
    // 300 after collection; the pipe's copy of a line is drained as the evaluator reads it.
    proc.write(line);
    return answered;
  }

  /** Ends the process; resolves once it is gone. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelIdleStop();
    this.leaveMemory?.();
    this.leaveMemory = null;
    for (const reached of [...this.deadlines]) reached();
    const proc = this.process;
    this.process = null;
    if (!proc) return;
    proc.kill("finished", "the evaluation ended");
    await proc.ended;
  }
}

/**
 * How much of a function's error a failed value keeps. The store holds a failed value (its
 * reason included) for as long as the evaluation or session lives, and its note goes to the
 * secure output: a function throwing a 4 MB message, mapped in a loop, had the host hold and
 * write 4 MB a call.
 */
export const MAX_REASON_CHARS = 2048;

function shortReason(reason: string): string {
  if (reason.length <= MAX_REASON_CHARS) return reason;
  return `${ownCopy(reason.slice(0, MAX_REASON_CHARS))}… (${reason.length - MAX_REASON_CHARS} more characters)`;
}

/**
 * `text` in a string of its own. V8 makes a slice of a long string (13 characters or more) a
 * view into it, which keeps the whole alive: the 2,048 characters kept of a function's error
 * held its whole message (as long as the evaluator's reply allows: 256 Mi characters) for as
 * long as the store kept the failed value. A security review threw a 10-million-
 * character error from a map function in a loop, in a session: tacit serve grew by 10 MB a
 * failed value (900 MB resident after 80) and, at a small heap, died after eight (every
 * session with it), as it would have at any heap, and only when the function said so (when the
 * secret it was given began as guessed). Copied through its UTF-16 code units, every unit as it was.
 */
function ownCopy(text: string): string {
  return Buffer.from(text, "utf16le").toString("utf16le");
}
