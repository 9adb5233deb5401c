// One evaluation, end to end: check the script (validator, then type checker), run it in a
// fresh sandbox (or a session's live one) under the monitor, and say how it ended. A fresh
// sandbox boots while the checks run, so the checks cost little wall time; it is killed
// unused if they fail.

import { askedReadGlobs } from "./approval/policy.js";
import { type Action, FAILURE_UNREPORTED_EXIT_CODE, type HostFrame, PROTOCOL_VERSION } from "../library/protocol.js";
import type { RunnerConfig } from "./config.js";
import { EXIT_CODES, type Outcome } from "./exit-codes.js";
import { cancelledBecause, cancelledExitCode } from "./stop-reason.js";
import { CapabilityTable } from "./capabilities.js";
import { PureEvaluator } from "./classified/pure-evaluator.js";
import { ClassifiedStore } from "./classified/store.js";
import { FailureNotes, SecureSink, SinkQuota } from "./secure-sink.js";
import { ClassifiedPaths } from "./fs/classified-paths.js";
import { CommandConfinement } from "./exec/confinement.js";
import { ExecExecutor } from "./exec/executor.js";
import { NetworkExecutor } from "./net/executor.js";
import { parseHostPattern } from "./net/host-policy.js";
import { type ParseRefusal, parseRefusalAsync, ProbeCancelled } from "./nesting.js";
import { FileSystemExecutor } from "./fs/file-system.js";
import { GrepRunner, mayRunRecursiveSearch } from "./fs/grep-runner.js";
import { protectedPathsOf } from "./fs/protected-paths.js";
import { tacitHomes } from "./tacit-home.js";
import type { Decision, EvaluationContext, InputSource } from "./monitor.js";
import { OutputBuffer } from "./output.js";
import { printableCut } from "./printable.js";
import type { RecordedExchange } from "./session-recording.js";
import { rewriteForSandbox } from "./rewrite-imports.js";
import type { ParsedProgram } from "./parser.js";
import type { PureFunctionSite } from "./pure-functions.js";
import { type Sandbox, type SandboxEnd, sandboxWith } from "./sandbox.js";
import { converse } from "./conversation.js";
import type { LiveSandbox } from "./live-sandbox.js";
import type { SandboxProcess } from "./sandbox-process.js";
import { type CheckResult, checkInStages, checkScript, checksCancelledBy, type SessionTypeCheck, type TypeChecker } from "./checks.js";
import { typeCheck, typeCheckCache } from "./typecheck.js";
import type { TacitImport } from "./validator.js";
import { ApprovalGate, type Oversight } from "./approval/gate.js";
import { abortRace } from "./abort-race.js";
import { RunGrants } from "./approval/grants.js";
import { redirectVetting } from "./approval/redirects.js";
import { unattendedOversight } from "./approval/oversight.js";
import { digestOf, sha256Base64 } from "./audit/digest.js";
import type { HeapShare } from "./heap-share.js";
import type { EvaluatorsMemory } from "./sessions-memory.js";
import { HostSecrets } from "./host-secrets.js";
import { randomToken } from "./random-token.js";
import { monotonicMs } from "./monotonic.js";
import { namespaceFailureAtStart } from "./network-namespace.js";
import { MapRequestBudget } from "./classified/budget.js";
import { ConcurrencyLimit } from "./concurrency-limit.js";
import { CLASSIFIED_CHATS_AT_ONCE } from "./llm/chat-client.js";

/**
 * How long a killed evaluation may still wait for host-side work to wind down (a request in
 * progress, pending classified writes, the sink): everything it waits on is being stopped,
 * so this is only a bound, which keeps a run within about this much of its time limit.
 */
const ABANDONED_GRACE_MS = 1_000;
/**
 * The reason every evaluation's controllers are aborted with, made once: abort() without one
 * builds a DOMException, stack trace and all, each time an evaluation ends. Work aborted by it
 * (a request, a chat) has ended with its evaluation; no one sees the message.
 */
const EVALUATION_OVER = new Error("the evaluation is over");

/** Why a session's snippet that reported its result without reading the host's last reply was ended (see converse). */
const UNREAD_AFTER_REPORT =
  "the sandbox reported its result without reading all of the host's last reply, and had not read it by the end of the " +
  "time limit (the library reads each reply whole before it goes on; code that reads the protocol channel itself, by " +
  "replacing TextDecoder, JSON or the channel's functions, left it unread, and tacit would have held it for as long as the " +
  "session lives). The snippet did not succeed; leave the library's reading of its replies alone";

const WRITING_AFTER_REPORT =
  "the sandbox reported its result but had not finished writing by the end of the time limit: its main thread, where " +
  "the library waits once it has reported (for the next snippet, or to be ended), was still writing or busy elsewhere " +
  "(code that replaces TextEncoder or the channel's functions can make the report's write carry more after it, or run on " +
  "after it). The program did not succeed; leave the library's writing of frames alone";

/** Resolves when `work` settles or `ms` have passed, whichever is first. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.then(() => undefined, () => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export { type CheckResult, checkScript, EXIT_CODES, type Outcome };

export interface EvaluationResult {
  outcome: Outcome;
  exitCode: number;
  stdout: string;
  /** What went wrong, in the agent's terms; null on success. */
  error: string | null;
  durationMs: number;
  truncated: boolean;
  /** What the host noticed about the answers the script got (see OutputBuffer.warn); tacit run writes them to stderr. */
  warnings: string[];
}

export interface EvaluateOptions {
  code: string;
  /** How the agent's file is named in messages and stack frames. */
  displayName: string;
  config: RunnerConfig;
  input: InputSource;
  /** Where relative file-system roots start (default: the process's working directory). */
  cwd?: string;
  /** Receives output as it is printed (already capped), for streaming to a terminal. */
  onOutput?: (text: string) => void;
  /** Receives each warning as it is given (see OutputBuffer.warn), for a terminal. */
  onWarning?: (warning: string) => void;
  /**
   * Test-only switches, reachable only through this API (never from the CLI, config or the
   * script): they prove the sandbox holds without the validator and without hiding Deno.
   */
  unsafeSkipValidation?: boolean;
  unsafeKeepRuntime?: boolean;
  /**
   * A sandbox started ahead of time (it boots while the caller loads and checks). Used if it
   * was started with this config's limits; otherwise it is discarded and a fresh one started.
   */
  prestarted?: SandboxProcess;
  /**
   * Takes back `prestarted`, untouched, where the script is refused before it runs (tacit serve's
   * warm spare then serves the next call: otherwise each refused call cost a sandbox's boot).
   */
  giveBack?: (unused: SandboxProcess) => void;
  /**
   * Checks already under way (started while the rest of tacit loaded), with whether they
   * include type-checking. Used when that matches the config; otherwise the checks run here.
   */
  precheck?: { typeChecked: boolean; result: Promise<CheckResult> };
  /** Aborting it stops the evaluation for real (an MCP client's cancellation). */
  signal?: AbortSignal;
  /** The type checker to use (a server keeps an incremental one); default: a tsc process. */
  typeChecker?: TypeChecker;
  /** A REPL session's part in this evaluation (see runner/session.ts). */
  session?: SessionPart;
  /** Approval tiers, who to ask, and the audit log; default: the config's policy, no one to ask, no log. */
  oversight?: Oversight;
  /**
   * What all of a server's evaluations may hold of classified plaintext together (see
   * heap-share.ts), for a one-shot evaluation's store; a session's store has its own. Default: no bound beyond the store's.
   */
  classifiedValues?: HeapShare;
  /**
   * What all of a server's pure evaluators may hold together (see EvaluatorsMemory), for a
   * one-shot evaluation's evaluator; a session's evaluator is counted by the session. Default: no
   * bound beyond the evaluator's own.
   */
  evaluatorsMemory?: EvaluatorsMemory;
  /**
   * A server's one-shot call: the classified work its script leaves at its end (pending classified
   * writes, the secure output, both waiting for the map functions computing them) is kept here and
   * not waited for, as a session's snippet's is (see SessionState.pending), so the call is answered
   * when its script ends. Waited for, the answer came when those functions had finished, and the
   * next call's Date.now() minus a time the last one saved told how long they ran on a secret (a
   * security review read 3907 ms against 182 ms for a map that looped on some plaintexts, through
   * tacit serve). `pending` is the server's, so that a later call's classified reads wait for these
   * writes and its writes land after them; `keep` is handed the work (bounded: see LeftWork).
   * Default (tacit run, whose values must land before it exits): the work is waited for.
   */
  leftWork?: { pending: PendingClassifiedWork; keep(work: ClassifiedWorkLeft): void };
}

/**
 * Classified work left at an evaluation's end: `settled` settles once it is done, or stopped at
 * what remained of the evaluation's time limit; `stop()` stops it now, as that limit would (its
 * map functions end, a value not computed by then is written and printed as unavailable, out of sight).
 */
export interface ClassifiedWorkLeft {
  settled: Promise<void>;
  stop(): void;
}

/**
 * The classified work evaluations left behind, kept pending rather than waited for at their end
 * (see runEvaluation): a session's, or a server's one-shot calls' (EvaluateOptions.leftWork).
 * `writes`: the classified writes still pending (each leaves once landed), which a later
 * evaluation's classified reads wait for; `lastWrite`: the last of them, which its own writes
 * land after (EvaluationContext.lastClassifiedWrite); `writesSettled`: when the values they
 * write are settled (EvaluationContext.classifiedWritesSettled); `finishing`: settles once that
 * work and the secure output are done, or stopped at the time limit of the evaluation that left
 * them (a session, or the server, waits for it when it ends).
 */
export interface PendingClassifiedWork {
  writes: Set<Promise<unknown>>;
  lastWrite: Promise<unknown>;
  writesSettled: Promise<void> | null;
  finishing: Promise<void>;
}

/** Nothing pending yet. */
export function noPendingClassifiedWork(): PendingClassifiedWork {
  return { writes: new Set(), lastWrite: Promise.resolve(), writesSettled: null, finishing: Promise.resolve() };
}

/** The digest a replayed request is compared by. */
export function exchangeDigest(action: Action): string {
  return sha256Base64(JSON.stringify(action));
}

/** What lives across a session's evaluations. */
export interface SessionState {
  classified: ClassifiedStore;
  pure: PureEvaluator;
  sink: SecureSink | null;
  /** Where its store's failure notes go: each snippet's share of the sink in turn. */
  notes: FailureNotes;
  /** One table for the session, so a capability kept from an earlier snippet is refused as revoked. */
  capabilities: CapabilityTable;
  /**
   * The classified work earlier snippets left behind (see PendingClassifiedWork): a snippet's
   * end, and so when the next one starts (its `Date.now()`), waited for the map functions
   * computing what it wrote and printed.
   */
  pending: PendingClassifiedWork;
}

export interface SessionPart {
  /** The session's id, for the audit log. */
  id: string;
  state: SessionState;
  /** The session's sandbox: it runs this snippet and, if it succeeds, stays alive for the next. */
  live: LiveSandbox;
  /** This snippet alone, as sent (`code` is the whole program). */
  snippet: string;
  /** The whole program's parse, joined from the earlier snippets' kept one (or null: parse it whole). */
  parsed: () => ParsedProgram | null;
  /** How the type checker checks this snippet against the earlier ones (split-check.ts). */
  typeCheck?: SessionTypeCheck;
  /**
   * The snippet as the sandbox runs it, from what the checks found in `code` (the session's
   * earlier snippets followed by this one, so the checks see the whole program).
   */
  sandboxCode: (imports: readonly TacitImport[], pureFunctions: readonly PureFunctionSite[]) => string;
  /** This evaluation's exchanges are appended here (a rebuilt sandbox replays them). */
  record: { push(exchange: RecordedExchange): void };
  /** The parse probe's verdict on the snippet, where the session has it already (nesting.ts probeTree). */
  probed?: ParseRefusal | null;
}

/**
 * `endedAt`: when the script itself ended (its sandbox reported, or was stopped, and its
 * requests were answered), never after the classified work left behind it (pending writes,
 * the secure output): how long that took depends on the map functions computing it, so a
 * duration counted to it told the agent how long a function ran on a secret (see runEvaluation).
 */
function result(outcome: Outcome, output: OutputBuffer, error: string | null, startedAt: number, endedAt: number = monotonicMs()): EvaluationResult {
  return {
    outcome,
    exitCode: EXIT_CODES[outcome],
    stdout: output.text(),
    error,
    durationMs: Math.round(endedAt - startedAt),
    truncated: output.truncated,
    warnings: output.warnings(),
  };
}

/** An evaluation cancelled with `reason` (its signal's): outcome "cancelled", with a stop signal's exit code when one stopped tacit. */
function cancelled(reason: unknown, output: OutputBuffer, error: string, startedAt: number, endedAt?: number): EvaluationResult {
  return { ...result("cancelled", output, error, startedAt, endedAt), exitCode: cancelledExitCode(reason) };
}

/** Runs one evaluation, logged (when an audit log is configured) from start to end and signed. */
export async function evaluate(options: EvaluateOptions): Promise<EvaluationResult> {
  const oversight = options.oversight ?? unattendedOversight(options.config, options.cwd ?? process.cwd());
  const evaluation = randomToken(9);
  const audit = oversight.audit;
  try {
    audit?.append({
      type: "evaluation-started",
      evaluation,
      session: options.session?.id ?? null,
      displayName: options.displayName,
      codeDigest: digestOf(options.code),
      policyDigest: oversight.policyDigest,
    });
  } catch (error) {
    // A log that failed before (tacit serve, a session): nothing runs, and its caller is told so.
    if (!(error instanceof Error) || error.name !== "AuditLogError") throw error;
    const notRun: EvaluationResult = {
      outcome: "audit-log-failed",
      exitCode: EXIT_CODES["audit-log-failed"],
      stdout: "",
      error: auditLogFailedText("before it ran"),
      durationMs: 0,
      truncated: false,
      warnings: [],
    };
    throw new AuditLogFailedAfterRun(error.message, notRun);
  }
  let ended: EvaluationResult | undefined;
  // What the evaluation holds beyond its end however it ends (a one-shot's classified values, from the server's share).
  const atEnd: Array<() => void> = [];
  try {
    ended = await runEvaluation(options, oversight, evaluation, atEnd);
    return ended;
  } finally {
    for (const release of atEnd) release();
    if (audit) {
      try {
        audit.append({
          type: "evaluation-ended",
          evaluation,
          outcome: ended?.outcome ?? "internal-error",
          exitCode: ended?.exitCode ?? EXIT_CODES.threw,
          durationMs: ended?.durationMs ?? 0,
        });
        audit.signHead();
      } catch (error) {
        // The log failed, during the evaluation or now: the failure, with the result, which was lost with it.
        if (ended !== undefined && error instanceof Error && error.name === "AuditLogError") throw new AuditLogFailedAfterRun(error.message, failedAtEnd(ended));
        throw error;
      }
    }
  }
}

/**
 * Why a script timed out while readInput() waited: the program piping into tacit had not closed
 * the pipe (a producer still running, or `docker run -i` and an ssh session, which hold standard
 * input open), and "the script ran longer than" read as if the script had been busy.
 */
const WAITING_FOR_INPUT =
  ", and when the limit came it was waiting in readInput() for its standard input to end: readInput() reads until whatever " +
  "pipes into tacit closes the pipe, and it had not (run tacit with </dev/null when there is nothing to pipe)";

/**
 * What a script's caller (the agent) is told when tacit could not write its audit log: what
 * happened and what to do, with none of the host's internals (the log's path lies outside the
 * script's scope, and the log's own message is for the operator, on tacit's stderr).
 */
export function auditLogFailedText(when: "while it ran" | "before it ran" | "before a session" | "as it ended"): string {
  const logged = "tacit could not write its audit log (every action is logged before it is carried out)";
  const what =
    when === "while it ran"
      ? `${logged}, so it ended the script: the request the script was waiting on got no answer, and nothing after it ran.`
      : when === "before it ran"
        ? `${logged}, so it runs no script: nothing of this one ran.`
        : when === "before a session"
          ? `${logged}, so it starts no session: none was kept.`
          : "tacit could not write its audit log as the script ended: what the script printed and its result stand, but the log does not hold their end.";
  return (
    `${what} The script cannot fix or work around this, and running it again fails the same way: tell the operator, ` +
    "whose tacit says on its stderr (tacit serve: in its log) what happened to the log and what to do."
  );
}

/** An evaluation that ran to its end, whose end the audit log could not take: exit 2, its caller told why after its own error. */
function failedAtEnd(ended: EvaluationResult): EvaluationResult {
  if (ended.outcome === "audit-log-failed") return ended;
  const said = auditLogFailedText("as it ended");
  return { ...ended, outcome: "audit-log-failed", exitCode: EXIT_CODES["audit-log-failed"], error: ended.error === null ? said : `${ended.error}\n${said}` };
}

/**
 * The audit log could not be written by the time an evaluation ended: an AuditLogError as any
 * other (same name and message, for the operator), with the evaluation's result (its error says,
 * for the script's caller, that the log failed: see auditLogFailedText), which tacit run and
 * tacit serve still give.
 */
export class AuditLogFailedAfterRun extends Error {
  override name = "AuditLogError";
  constructor(
    message: string,
    readonly result: EvaluationResult,
  ) {
    super(message);
  }
}

async function runEvaluation(options: EvaluateOptions, oversight: Oversight, evaluation: string, atEnd: Array<() => void>): Promise<EvaluationResult> {
  const startedAt = monotonicMs();
  const { config } = options;
  const output = new OutputBuffer(config.outputLimitBytes, options.onOutput, options.onWarning);
  const live = options.session?.live;
  const sandbox = live ? live.sandbox : sandboxWith(config.memoryLimitMb, options.prestarted);
  // Ends host-side work still running for this evaluation (a long search) when it stops.
  const lifetime = new AbortController();
  // Nothing started for a program that will not run goes on: a one-shot sandbox is killed
  // (a session's waits for the next snippet), and the search thread ends.
  const unused = async (reason: string): Promise<void> => {
    lifetime.abort(EVALUATION_OVER);
    if (live) return;
    const { prestarted, giveBack } = options;
    const untouched = prestarted !== undefined && giveBack !== undefined ? sandbox.release(prestarted) : null;
    if (untouched !== null) return giveBack!(untouched);
    sandbox.kill("cancelled", reason);
    await sandbox.ended;
  };

  const grep = new GrepRunner(lifetime.signal);
  // A script that names a recursive search gets its search thread started now (or the one
  // `tacit run` started as it read the script), so that it boots while the checks run and the
  // sandbox starts, not when the search is asked for (its helper, where there is one, starts
  // with the search: see grep-runner.ts).
  if (mayRunRecursiveSearch(options.session?.snippet ?? options.code)) grep.prestart();

  // The checks' verdict: checks that fail, or a script they refuse, stop what was started for it.
  const checked = async <T,>(checks: () => T | Promise<T>): Promise<T> => {
    try {
      return await checks();
    } catch (error) {
      await unused("the checks failed");
      throw error;
    }
  };
  const refused = async (check: CheckResult): Promise<EvaluationResult> => {
    await unused("rejected before running");
    return result("rejected", output, check.errors.join("\n"), startedAt);
  };

  let tacitImports: TacitImport[] = [];
  let pureFunctions: PureFunctionSite[] = [];
  // A type check started here is awaited once the run is prepared (below): the preparation,
  // which has no effect outside this evaluation, overlaps the checker's work.
  let typesChecked: Promise<CheckResult> | null = null;
  /** The call was cancelled while its script's parse probe ran or waited: it is not checked, and never runs. */
  let probeCancelled = false;
  if (!options.unsafeSkipValidation) {
    const check = await checked(async () => {
      const early = options.precheck;
      if (early && early.typeChecked === config.typeCheck) return early.result;
      // A checker given (a server's) stops the check when the evaluation is cancelled (see checksCancelledBy),
      // and when the validator refuses the script: a session's snippet is checked while it is validated (see
      // checkInStages), and the check of one refused at once went on up to the time limit, out of the client's
      // reach (its call answered), every later check of the server waiting behind it.
      const validationRefused = new AbortController();
      const checker = options.typeChecker
        ? checksCancelledBy(options.typeChecker, options.signal ? AbortSignal.any([options.signal, validationRefused.signal]) : validationRefused.signal)
        : (text: string) => typeCheck(text, config.executionTimeoutMs, typeCheckCache(), config.memoryLimitMb);
      const session = options.session;
      const fresh = session?.snippet ?? options.code;
      // A long script's parse probe (a child process: nesting.ts) is awaited here, with the host
      // free meanwhile; run by the validator it held every other call of tacit serve for it.
      // A cancellation ends the probe (see ProbeCancelled): the call is answered as cancelled below.
      let probed: ParseRefusal | null;
      try {
        probed = session?.probed !== undefined ? session.probed : await parseRefusalAsync(fresh, options.signal);
      } catch (error) {
        if (!(error instanceof ProbeCancelled)) throw error;
        probeCancelled = true;
        return { ok: false, errors: [], tacitImports: [], pureFunctions: [] };
      }
      let stages: ReturnType<typeof checkInStages>;
      try {
        stages = checkInStages(options.code, options.displayName, config.typeCheck, checker, fresh, session?.parsed, session?.typeCheck, probed);
      } catch (error) {
        validationRefused.abort(EVALUATION_OVER);
        throw error;
      }
      if (!stages.validation.ok) validationRefused.abort(EVALUATION_OVER);
      typesChecked = stages.types;
      // Handled here too: a preparation that throws leaves it unawaited.
      typesChecked?.catch(() => undefined);
      return stages.validation;
    });
    if (probeCancelled && options.signal?.aborted) {
      await unused("cancelled before it ran");
      return cancelled(options.signal.reason, output, `cancelled: ${cancelledBecause(options.signal.reason)} before it ran (while its script was measured for its checks); nothing of it ran`, startedAt);
    }
    if (!check.ok) return refused(check);
    tacitImports = check.tacitImports;
    pureFunctions = check.pureFunctions;
  }

  // Aborted as soon as the sandbox is killed (timeout, cancellation, memory): from then on
  // nothing more is carried out for this evaluation, and its map/flatMap jobs stop.
  const abandon = new AbortController();
  const unlessAbandoned = abortRace(abandon.signal);
  // Aborted when the sandbox ends without reporting (it crashed, or was killed from outside):
  // it reads no answer, so a question open for it is withdrawn at once, not left up to five
  // minutes with the run waiting on it.
  const sandboxGone = new AbortController();
  const unanswerable = AbortSignal.any([abandon.signal, sandboxGone.signal]);
  const { context, capabilities, pure, sink, grants, attachNotes } = createEvaluationContext(
    config,
    options,
    oversight,
    output,
    { lifetime: lifetime.signal, abandoned: abandon.signal, unanswerable },
    grep,
  );
  // A session's store lives on (it is released with the session); a one-shot's gives its share back,
  // once the classified work it left is done, where that is not waited for (see EvaluateOptions.leftWork).
  let leftBehind: Promise<void> | null = null;
  if (!options.session) atEnd.push(() => (leftBehind ? void leftBehind.then(() => context.classified.release()) : context.classified.release()));
  // What its map requests took of the process's share (see MapRequestBudget) is given back on the
  // schedule below; an evaluation that ends before it is set (a host failure) gives it back at its end.
  let mapRequestsScheduled = false;
  atEnd.push(() => {
    if (!mapRequestsScheduled) context.mapRequests.release();
  });
  const gate = new ApprovalGate({
    oversight,
    evaluation,
    library: config.library,
    capabilities,
    grants,
    cwd: options.cwd ?? process.cwd(),
    // The clock stops while a person is asked: the sandbox waits, blocked, for the reply, and
    // is watched meanwhile for running all the same (code with the raw channel need not wait:
    // a security review computed on, uncounted, while the person took their time). The pure
    // evaluator, whose map functions go on while the script waits, is stopped meanwhile, and
    // no classified chat waiting for its turn is asked of the model until the answer.
    whilePaused: (work) => clock.whilePaused(blockedWhile(sandbox, pure.whileAsked(context.classifiedChats.whileHeld(work)))),
  });
  // The last prints are logged before the evaluation's end is (atEnd runs first).
  atEnd.push(() => gate.logOutput());

  const code = options.session
    ? options.session.sandboxCode(tacitImports, pureFunctions)
    : rewriteForSandbox(options.code, tacitImports, pureFunctions);

  if (typesChecked) {
    const pending: Promise<CheckResult> = typesChecked;
    // A caller that gives up stops waiting for the checker (whose check goes on, unseen).
    const types = await checked(() => (options.signal ? abortRace(options.signal)(pending) : pending));
    if (types !== null && !types.ok) return refused(types);
  }
  // Cancelled during its checks: it never runs. A session's sandbox is left as it is for the
  // next snippet: killed, it cost a rebuild that replays every earlier snippet.
  if (options.signal?.aborted) {
    await unused("cancelled before it ran");
    return cancelled(options.signal.reason, output, `cancelled: ${cancelledBecause(options.signal.reason)} before it ran (during its checks); nothing of it ran`, startedAt);
  }
  // From here on the evaluation touches what outlives it: a session's sandbox and failure notes.
  const program: HostFrame = live
    ? live.programFrame(code, options.displayName)
    : { type: "start", protocol: PROTOCOL_VERSION, code, displayName: options.displayName, hideRuntime: !options.unsafeKeepRuntime, randomSeed: null, session: false };
  attachNotes();
  sandbox.scrubReplies(context.hostSecrets);
  // Whether a readInput() is under way: a limit reached then is one spent waiting for the pipe to end.
  let readingInput = false;
  // Held off the main thread too under tacit serve (see SandboxProcess.timeLimit): a kill made
  // there is said here all the same, so the end below is the time limit's either way.
  const clock = sandbox.timeLimit(config.executionTimeoutMs, () => {
    if (conversation.unreadAfterReport()) return sandbox.kill("protocol", UNREAD_AFTER_REPORT);
    if (conversation.writingAfterReport()) return sandbox.kill("protocol", WRITING_AFTER_REPORT);
    // The action under way, if any, is logged as having run out of the evaluation's time (see RanOutOfTime).
    context.ranOutOfTime = { limit: "evaluation-time-limit", ms: config.executionTimeoutMs };
    sandbox.kill("timeout", `the script ran longer than ${config.executionTimeoutMs} ms${readingInput ? WAITING_FOR_INPUT : ""}`);
  });
  const conversation = converse(sandbox, program, live !== undefined, async (action) => {
    // A killed sandbox reads no answer, and an effect carried out for it now would happen
    // after its limit: requests still queued are dropped, one in progress is let go of.
    if (abandon.signal.aborted) return null;
    readingInput = action.kind === "ReadInput";
    // try/finally, not the promise's finally(): that made two more promises and turns of the microtask queue per request.
    let decision: Decision | null;
    try {
      decision = await unlessAbandoned(gate.dispatch(action, context));
    } finally {
      readingInput = false;
    }
    if (decision === null) return null;
    options.session?.record.push({ actionDigest: exchangeDigest(action), decision });
    return decision;
  });
  const cancel = (): void => sandbox.kill("cancelled", cancelledBecause(options.signal?.reason));
  options.signal?.addEventListener("abort", cancel, { once: true });
  if (options.signal?.aborted) cancel();
  const end = await conversation.end;
  if (end !== "alive" && end.kind === "exited" && conversation.reported() === null) sandboxGone.abort(EVALUATION_OVER);
  options.signal?.removeEventListener("abort", cancel);
  let remaining = clock.left();
  clock.stop();
  // After a kill, host-side work stops at once: the pure evaluator (a one-shot's own) is
  // closed before anything waits, so no request or pending write waits on values it would
  // have computed (a chain of maps can keep it busy for PURE_JOB_TIMEOUT_MS each). After a
  // normal end, classified values still being computed (for the sink, a pending write, a
  // classified chat) are let finish first.
  let abandoned = end !== "alive" && end.kind === "killed" && end.reason !== "finished";
  const stopHostWork = async (): Promise<void> => {
    abandon.abort(EVALUATION_OVER);
    lifetime.abort(EVALUATION_OVER);
    if (!options.session) await pure.close();
  };
  if (abandoned) await stopHostWork();
  capabilities.revokeAll();
  if (abandoned) {
    // Bounded all the same: whatever a request still waits on, a killed evaluation ends within a grace of its limit.
    await settledWithin(conversation.drained(), ABANDONED_GRACE_MS);
  } else if (end !== "alive" && end.kind === "exited") {
    // A sandbox that ended its own process may have left a request in progress (code with the
    // raw channel need not wait for its reply): a security review wrote an Exec request with a
    // ten-minute timeoutMs and exited, and the host, its clock stopped, waited for the command
    // without a bound, past the time limit. The request gets what is left of the limit; then
    // it is stopped, with the command, as at a kill.
    const from = monotonicMs();
    let drained = false;
    await settledWithin(conversation.drained().then(() => (drained = true)), remaining);
    remaining = Math.max(0, remaining - (monotonicMs() - from));
    if (!drained) {
      abandoned = true;
      await stopHostWork();
      await settledWithin(conversation.drained(), ABANDONED_GRACE_MS);
    }
  } else {
    await conversation.drained();
  }
  // What a killed sandbox left under way (a command being killed with it) logs how it ended before the evaluation's end is logged.
  await settledWithin(gate.settled(), ABANDONED_GRACE_MS);
  // The script's own end: the duration the agent is shown stops here. What follows waits for
  // map functions (the values written and printed), whose running time depends on the
  // plaintext: a security review's map that looped on a secret for some plaintexts showed in
  // `tacit run --json`'s and MCP's durationMs (1.7 s against 0.2 s).
  const scriptEndedAt = monotonicMs();
  // Background classified work is bounded by what remains of the evaluation's time limit
  // (after a kill, by the grace): then it is abandoned too, and waited for a grace at most.
  // What a later snippet of the session (or call of the server) reads after (see PendingClassifiedWork).
  const pending = options.session?.state.pending ?? options.leftWork?.pending;
  // Added to what is pending, not put in its place: a server's calls run at once, each from what
  // was pending when it started (a session's snippets run one after another, each from the last's).
  if (pending) {
    const settledBefore = pending.writesSettled;
    const settledNow = context.classifiedWritesSettled;
    pending.writesSettled = settledBefore === null || settledNow === null ? (settledNow ?? settledBefore) : Promise.all([settledBefore, settledNow]).then(() => undefined);
    // To nothing: Promise.all's value holds the last one's, so each call nested one more array in
    // it, kept for the server's (or session's) life: 64 bytes a call, 1,000 arrays after 1,000 calls.
    pending.lastWrite = Promise.all([pending.lastWrite, context.lastClassifiedWrite]).then(() => undefined);
  }
  // What its map requests took of the process's share (see MapRequestBudget) goes back once its
  // jobs can no longer wait: when it is abandoned (they stop), else a grace after its time limit,
  // which bounds them. Not when they are done: when that is depends on the plaintext, and a
  // refusal by the share is seen by every evaluation of the server.
  const giveBackMapRequests = (): void => context.mapRequests.release();
  mapRequestsScheduled = true;
  if (abandon.signal.aborted) giveBackMapRequests();
  else {
    abandon.signal.addEventListener("abort", giveBackMapRequests, { once: true });
    setTimeout(giveBackMapRequests, remaining + ABANDONED_GRACE_MS).unref();
  }
  // Stops the work now, as the time limit would (see ClassifiedWorkLeft); nothing once it is done.
  let stopNow: () => void = () => undefined;
  const finishing = (async (): Promise<void> => {
    let overtime: NodeJS.Timeout | undefined;
    const finishingFrom = monotonicMs();
    await Promise.race([
      finishClassifiedWork(context, pure, sink, abandoned, options.session !== undefined),
      new Promise<void>((resolve) => {
        let overrun = false;
        const stop = (): void => {
          clearTimeout(overtime);
          if (overrun) return;
          overrun = true;
          abandon.abort(EVALUATION_OVER);
          lifetime.abort(EVALUATION_OVER);
          void settledWithin(finishClassifiedWork(context, pure, sink, true, options.session !== undefined), ABANDONED_GRACE_MS).then(resolve);
        };
        overtime = setTimeout(stop, abandoned ? ABANDONED_GRACE_MS : remaining);
        stopNow = stop;
        // A stop (Ctrl-C, SIGTERM, a caller's cancellation) after the script's own end stops this
        // work too, as the time limit would: a script that printed slow values and ended had tacit
        // run sit through each value's own limit, up to its whole time limit, after the signal.
        options.signal?.addEventListener("abort", stop, { once: true });
        if (options.signal?.aborted) stop();
      }),
    ]);
    options.signal?.removeEventListener("abort", stopNow);
    stopNow = () => undefined;
    clearTimeout(overtime);
    lifetime.abort(EVALUATION_OVER);
    // A session's evaluator outlives the snippet, and map jobs the snippet queued but did not wait
    // for went on after it, up to PURE_JOB_TIMEOUT_MS each, timed by nothing: a security review's
    // snippet limited to 2 s queued 20 maps that loop forever, and the evaluator went on computing
    // after the snippet had ended, up to 5 s a job (100 s of a core for those 20; a session may
    // queue 100,000). They get what is left of
    // the snippet's time limit, as the work it waits for at its end does; then they are stopped,
    // and a value not computed by then fails out of sight, as a killed snippet's do.
    if (options.session && !abandon.signal.aborted) {
      const left = Math.max(0, remaining - (monotonicMs() - finishingFrom));
      setTimeout(() => abandon.abort(EVALUATION_OVER), left).unref();
    }
  })();
  // tacit run waits for it (its values land before it exits). A session's snippet, and a server's
  // one-shot call, do not: it is kept pending in the session (or the server), and the next snippet
  // (or call) starts at once. Waited for, the next snippet's Date.now() minus a time the last one
  // saved told how long the maps computing what it wrote or printed ran (a security review read
  // 2307 ms against 73 ms for a map that looped on some plaintexts, through tacit serve; 3907 ms
  // against 182 ms between two execute_typescript calls). What a later snippet or call does with
  // the values stays in order: its classified reads wait for these writes, and are settled after
  // them (PendingClassifiedWork), and its writes land after them; a later snippet's prints follow
  // in the secure output, and so do a later call's (one order of appends per sink file: see secure-sink.ts appendOrder).
  // A server's call keeps it, not awaited: a failure of its own (its values' failures go to the secure output) must not end the server.
  const kept = options.leftWork ? finishing.catch(() => undefined) : finishing;
  if (pending) pending.finishing = Promise.all([pending.finishing, kept]).then(() => undefined);
  if (!options.session) {
    if (options.leftWork) {
      leftBehind = kept;
      options.leftWork.keep({ settled: leftBehind, stop: () => stopNow() });
    } else {
      await finishing;
    }
  }

  const outcome = conversation.reported();
  // The sandbox may exit by itself right after reporting, before the host's kill lands.
  if (end === "alive" || (outcome && (end.kind === "exited" || end.reason === "finished"))) {
    return outcome?.kind === "failed"
      ? result("threw", output, outcome.error.stack || `${outcome.error.name}: ${outcome.error.message}`, startedAt, scriptEndedAt)
      : result("ok", output, null, startedAt, scriptEndedAt);
  }
  return describeAbnormalEnd(end, config, options.displayName, options.signal?.reason, output, startedAt, scriptEndedAt);
}

/** `work` (a person being asked), with the sandbox watched for running meanwhile (see SandboxProcess.watchIdle). */
async function blockedWhile<T>(sandbox: Sandbox, work: Promise<T>): Promise<T> {
  sandbox.watchIdle(true);
  try {
    return await work;
  } finally {
    sandbox.watchMemory(true);
  }
}

/** Everything the monitor decides with, for one evaluation: policy, executors, stores. */
function createEvaluationContext(
  config: RunnerConfig,
  options: EvaluateOptions,
  oversight: Oversight,
  output: OutputBuffer,
  { lifetime, abandoned, unanswerable }: Pick<EvaluationContext, "lifetime" | "abandoned" | "unanswerable">,
  grep: GrepRunner,
) {
  const cwd = options.cwd ?? process.cwd();
  const shared = options.session?.state;
  const pending = shared?.pending ?? options.leftWork?.pending;
  const capabilities = shared?.capabilities ?? new CapabilityTable();
  const grants = new RunGrants();
  const protectedPaths = protectedPathsOf(config);
  const sink = shared ? shared.sink : config.library.secureOutput ? new SecureSink(config.library.secureOutput) : null;
  const pure = shared?.pure ?? new PureEvaluator(config.classifiedStoreLimitBytes, options.evaluatorsMemory, config.pureIdleStopMs, config.pureJobTimeoutMs);
  // What the script may print, and that again with each classified value it may hold, once;
  // the store's notes on values it could not compute count against the same share.
  const quota = sink ? new SinkQuota(sink, { knownBytes: config.outputLimitBytes, totalBytes: config.outputLimitBytes + config.classifiedStoreLimitBytes }) : null;
  const notes = shared?.notes ?? new FailureNotes();
  const classified = shared?.classified ?? new ClassifiedStore(pure, notes.note, config.classifiedStoreLimitBytes, config.classifiedValuesLimit, options.classifiedValues);
  const hostSecrets = HostSecrets.of(config);
  const classifiedPaths = new ClassifiedPaths(config.library.classifiedPaths);
  const context: EvaluationContext = {
    output,
    hostSecrets,
    ranOutOfTime: null,
    input: options.input,
    classified,
    mapRequests: new MapRequestBudget(config.classifiedStoreLimitBytes),
    classifiedChats: new ConcurrencyLimit(CLASSIFIED_CHATS_AT_ONCE),
    sink: quota,
    // A session's snippet (or a server's call) reads and writes after the classified writes earlier ones left pending.
    background: pending?.writes ?? new Set(),
    classifiedWritesSettled: pending?.writesSettled ?? null,
    lastClassifiedWrite: pending?.lastWrite ?? Promise.resolve(),
    files: new FileSystemExecutor(
      {
        allowedRoots: config.library.allowedRoots,
        grantedRoots: grants.roots,
        classified: classifiedPaths,
        classifiedWrite: config.library.classifiedWrite,
        protectedPaths,
        hostSecrets: hostSecrets.texts,
        searchSkips: askedReadGlobs(config.policy, cwd),
      },
      capabilities,
      grep,
      cwd,
      // Paths as named, which a host secret may be part of (the script's are scrubbed from its replies).
      (warning) => output.warn(hostSecrets.scrubText(warning)),
    ),
    network: new NetworkExecutor(
      {
        permissions: config.library.networkPermissions?.map(parseHostPattern) ?? null,
        grantedHosts: grants.hosts,
        maxResponseBytes: config.library.networkResponseLimitBytes,
        timeoutMs: config.library.networkTimeoutMs,
        redirects: redirectVetting(oversight.policy, grants),
      },
      capabilities,
      classified,
      lifetime,
      hostSecrets,
    ),
    llm: config.library.llm,
    lifetime,
    abandoned,
    unanswerable,
    commands: new ExecExecutor(
      { commandPermissions: config.library.commandPermissions, strictMode: config.library.strictMode },
      config.library.allowedRoots,
      capabilities,
      cwd,
      lifetime,
      grants.commands,
      protectedPaths,
      hostSecrets,
      config.library.confineCommands
        ? new CommandConfinement({ allowedRoots: config.library.allowedRoots, classified: classifiedPaths, protectedPaths, tacitHomes: tacitHomes(), tacitFiles: sink === null ? [] : [sink.file], recordDirectory: config.recordPath })
        : null,
      config.library.execOutputLimitBytes,
    ),
  };
  // The store's notes on values it could not compute go to this evaluation's share from when it runs.
  const attachNotes = (): void => {
    notes.to = quota;
  };
  return { context, capabilities, pure, sink, grants, attachNotes };
}

/**
 * Lets background classified work finish after a normal end — pending classified writes, and
 * sink output waiting for values still being computed — before the pure evaluator stops.
 * After a kill it is abandoned: the evaluator stops first, and whatever was waiting for it
 * is recorded as unavailable.
 */
async function finishClassifiedWork(
  context: EvaluationContext,
  pure: PureEvaluator,
  sink: SecureSink | null,
  abandoned: boolean,
  sessionOwned: boolean,
): Promise<void> {
  if (abandoned && !sessionOwned) await pure.close();
  await Promise.all([...context.background]).catch(() => undefined);
  await sink?.flush().catch(() => undefined);
  // A session's store, evaluator and sink live on; they end with the session.
  if (sessionOwned) return;
  await pure.close();
  // Failures reported while closing (values that never finished) still reach the sink.
  await sink?.flush().catch(() => undefined);
  sink?.close();
}

function describeAbnormalEnd(
  end: SandboxEnd,
  config: RunnerConfig,
  displayName: string,
  /** Why the evaluation's signal was aborted, if it was: a cancellation by a stop signal takes its exit code. */
  abortReason: unknown,
  output: OutputBuffer,
  startedAt: number,
  endedAt: number,
): EvaluationResult {
  if (end.kind === "killed") {
    switch (end.reason) {
      case "timeout":
        return result(
          "timeout",
          output,
          `timed out: ${end.detail}, so it was killed. Raise the limit with --exec-timeout-ms <ms> ` +
            `(config "executionTimeoutMs") if the work needs longer.`,
          startedAt,
          endedAt,
        );
      case "memory":
        return result(
          "resource-limit",
          output,
          `killed: ${end.detail}. Raise the limit with --memory-limit-mb <MiB> (config "memoryLimitMb", now ${config.memoryLimitMb}) ` +
            "or process the data in smaller pieces.",
          startedAt,
          endedAt,
        );
      case "sessions-memory":
        // The detail says what to do: the budget is the server's, not the snippet's own limit.
        return result(
          "resource-limit",
          output,
          `killed: ${end.detail}. The session goes on from its earlier snippets, as after any snippet that failed.`,
          startedAt,
          endedAt,
        );
      case "cancelled":
        return cancelled(abortReason, output, `cancelled: ${end.detail}`, startedAt, endedAt);
      case "lingered":
        return result(
          "protocol-error",
          output,
          `the session's sandbox was ended before this snippet could run: ${end.detail} (something an earlier snippet ` +
            "started went on running after its snippet had ended); create a new session",
          startedAt,
          endedAt,
        );
      case "audit-log":
        return result("audit-log-failed", output, auditLogFailedText("while it ran"), startedAt, endedAt);
      case "protocol":
      case "finished":
        return result("protocol-error", output, `protocol violation: ${end.detail}; the evaluation was ended`, startedAt, endedAt);
    }
  }
  // Before anything else is made of its exit: such a sandbox never ran Deno, let alone the script.
  const noNamespace = namespaceFailureAtStart(end);
  if (noNamespace !== null) return result("protocol-error", output, noNamespace, startedAt, endedAt);
  // V8's fatal out-of-memory ends the process by a trap (SIGTRAP; an abort elsewhere), which
  // nothing in the sandbox can send itself. Its crash text on stderr is not asked: a script past
  // the validator can write that text and exit, and was told to raise the memory limit.
  const heapExhausted = end.signal === "SIGTRAP" || end.signal === "SIGABRT";
  if (heapExhausted) {
    return result(
      "resource-limit",
      output,
      `killed: the script ran out of memory (V8 heap limit ${config.memoryLimitMb} MiB). Raise it with --memory-limit-mb <MiB> ` +
        '(config "memoryLimitMb") or process the data in smaller pieces.',
      startedAt,
      endedAt,
    );
  }
  // Before Deno's reports on stderr are looked for: the script's failure, unreported, reached none of them (see bootstrap.ts fail).
  if (end.code === FAILURE_UNREPORTED_EXIT_CODE && end.signal === null) {
    return result(
      "protocol-error",
      output,
      "protocol violation: how the script ended could not be reported: the library's report of it (or of the error that threw " +
        "as it reported it) threw, since the script had replaced something the library writes it with (JSON.stringify, " +
        "TextEncoder, a method of the built-ins' prototypes); leave the built-ins as they are",
      startedAt,
      endedAt,
    );
  }
  const stalled = /Top-level await promise never resolved[\s\S]*?blob:[^\s:]+(?:\/[^\s:]+)?:(\d+):(\d+)/.exec(end.stderr);
  if (stalled || /Top-level await promise never resolved/.test(end.stderr)) {
    const where = stalled ? ` (${displayName}:${stalled[1]}:${stalled[2]})` : "";
    return result(
      "threw",
      output,
      `Error: the script's top-level await never settled${where}: it awaits a promise that nothing will resolve ` +
        "(no timer, request or callback is left to resolve it)",
      startedAt,
      endedAt,
    );
  }
  const panic = denoPanic(end.stderr);
  if (panic !== null) {
    return result(
      "protocol-error",
      output,
      `the sandbox crashed: Deno panicked while running the script (${panic}). This is a bug in Deno, not a refusal by ` +
        "tacit; nothing was done after the crash. Rewrite the construct Deno fails on (TypeScript-only syntax such as " +
        "decorators inside a namespace is the usual cause) and run the script again.",
      startedAt,
      endedAt,
    );
  }
  // Only the kernel sends it: the sandbox runs with a file size limit of 0 (see writesNoFile in sandbox-process.ts).
  if (end.signal === "SIGXFSZ") {
    return result(
      "protocol-error",
      output,
      "protocol violation: the sandbox was ended as it wrote to a file on disk (its file size limit is 0 bytes: the script's own " +
        "process writes no file, node:sqlite's temporary files included); read and write files with requestFileSystem(root, fs => …)",
      startedAt,
      endedAt,
    );
  }
  const how = end.signal ? `signal ${end.signal}` : `exit code ${end.code}`;
  return result(
    "protocol-error",
    output,
    `protocol violation: the sandbox ended (${how}) without reporting a result; the script must not exit the runtime or write to stdout itself`,
    startedAt,
    endedAt,
  );
}

/**
 * Deno's own crash report ("Deno has panicked…"): its panic message, one printable line, or
 * null when the sandbox did not panic. Without this, a crash inside Deno read as the script
 * having broken the protocol.
 */
function denoPanic(stderr: string): string | null {
  if (!stderr.includes("Deno has panicked")) return null;
  const message = /panicked at [^\n]*:\n([^\n]+)/.exec(stderr)?.[1]?.trim() ?? "no message";
  return printableCut(message, 300);
}
