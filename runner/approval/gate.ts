// The approval gate: stands in front of the monitor for every action of one evaluation.
// It names the action (category, canonical pattern), resolves its tier from the policy —
// before anything runs, and never from what the model says — asks a person when the tier
// says so, and writes each step to the audit log: requested, decided, result. Prints are
// logged together, as "output" events (audit/printed-output.ts).

import path from "node:path";
import type { Action } from "../../library/protocol.js";
import { actionResultJson, type AuditEvent, type CommandProgress, type EventJson, policyDecisionJson, type RequestProgress, requestedJson, type ResultExtras, type Tier } from "../audit/events.js";
import { actionRecord, cutRecorded } from "../audit/action-record.js";
import { digestOf } from "../audit/digest.js";
import { PrintedOutput } from "../audit/printed-output.js";
import type { CapabilityTable } from "../capabilities.js";
import type { LibraryConfig } from "../config.js";
import { commandRefusal } from "../exec/command-policy.js";
import { isWithin, resolveReal, resolveRealOrSelf } from "../fs/containment.js";
import { allowedRootsBounds, nowLeadsText, type PlaceBounds, scopeBounds } from "../fs/moved-place.js";
import { type Decision, dispatch, type EvaluationContext, type Refusal, refusalOf, refused } from "../monitor.js";
import { type HostPattern, parseHostPattern } from "../net/host-policy.js";
import { type ActionRequest, approvalPattern, describeAction, fsPathUse, isFsPathAction, isSingleFileRead, type PathSubject, pathSubject, type ScopeLookup, type SingleFileRead } from "./action-request.js";
import type { HostSecrets } from "../host-secrets.js";
import { printable } from "../printable.js";
import { backslashesDoubled, headThenShown, shownPattern } from "./shown-text.js";
import { shownWord, singleQuoted } from "../shell-word.js";
import type { Answer, Asker } from "./askers.js";
import type { RunGrants } from "./grants.js";
import type { IndirectRule, TierPolicy } from "./policy.js";
import type { Approval, ApprovalStore } from "./store.js";
import { monotonicMs } from "../monotonic.js";
import type { BeforeEffect } from "../before-effect.js";


/**
 * The longest action (its detail and pattern as shown) a person is asked about. A question is
 * read to decide, and an MCP client may cut a long message short: a ninth security review asked
 * about `find . <a path of 4,000 characters> -delete` under a rule whose pattern (`exec find *`)
 * says nothing of the end, where the -delete was. Longer ones are refused without asking.
 */
export const QUESTION_LIMIT_CHARS = 2_000;
/** The answer to a question whose evaluation ended while (or before) the person was asked. */
const WITHDRAWN: Answer = Object.freeze({
  answer: "no",
  via: "withdrawn",
  unavailable:
    "the evaluation ended (it was cancelled, stopped or its session deleted) while a person was asked, so the question was " +
    "withdrawn and any answer to it is ignored (a yes is not remembered)",
  fromPerson: false,
});

/** Where audit events go: the AuditLog. */
export interface AuditSink {
  /**
   * A function is called when the line is made (after the reply is sent): for costly fields. `at`: when it
   * happened (Date.now()), if before now; default now.
   */
  append(event: AuditEvent | EventJson | (() => AuditEvent | EventJson), at?: number): void;
  /** Throws what append would now, and leaves room for one more event without writing (see AuditLog.ready). */
  ready(): void;
  /** Writes what was appended to the file (called before an action with an effect). */
  flush(): void;
  /** Signs the chain so far (the end of every evaluation and session). */
  signHead(): void;
  close(): void;
}

/** What outlives one evaluation: the policy, the person to ask, remembered approvals, the log. */
export interface Oversight {
  policy: TierPolicy;
  asker: Asker;
  /** Opened on first need: runs that never ask never touch the file. */
  approvals: () => ApprovalStore;
  audit: AuditSink | null;
  /** "sha256:…" of the configuration decisions depend on (secrets left out), for the log. */
  policyDigest: string;
}

export interface GateOptions {
  oversight: Oversight;
  evaluation: string;
  library: LibraryConfig;
  capabilities: CapabilityTable;
  grants: RunGrants;
  cwd: string;
  /** Runs `work` with the evaluation's clock stopped: time a person takes is not the script's. */
  whilePaused: <T>(work: Promise<T>) => Promise<T>;
}

/** Categories whose actions change nothing outside tacit. */
const READ_ONLY: ReadonlySet<ActionRequest["category"]> = new Set(["internal", "fs.read", "fs.stat", "fs.open", "fs.readClassified"]);

/** The policy's decision on one action with an effect, as its executor tells the gate it is about to act (see decideBeforeEffect). */
interface DecidedBeforeEffect {
  /** Given to the executor (through the monitor's dispatch). */
  beforeEffect: BeforeEffect;
  /** The decision (or a person's, logged before) is in the file: the executor came to the effect. */
  logged: boolean;
  /** What logging it threw, if it did: the effect did not happen, and the action fails with it. */
  failure?: { error: unknown };
}

/** A request the allowlists refuse that a beyondAllowlist rule makes askable, with what a yes grants. */
interface Extension {
  request: ActionRequest;
  detail: string;
  grant: () => void;
}

/** An extension a person was asked about (or could not be) and did not grant: the allowlists' refusal says how it could be. */
interface DeclinedExtension {
  pattern: string;
  tier: Exclude<Tier, "allow">;
  answer: Answer;
}

export class ApprovalGate {
  private actions = 0;
  /** Prints carried out since the last event logged (see logOutput). */
  private readonly printed = new PrintedOutput();
  /**
   * Chunked reads (forEachLine) a person approved in this evaluation, by where each goes on (see
   * streamPlace: its path and the offset of its next piece), with the pattern they were asked about.
   */
  private readonly approvedStreams = new Map<string, string>();

  /** Where remembered approvals hold: the working directory, as a real path. */
  private readonly directory: string;
  /** What describeAction looks scopes up in: one for the evaluation, not one per action. */
  private readonly scopes: ScopeLookup;

  constructor(private readonly options: GateOptions) {
    this.directory = resolveRealOrSelf(path.resolve(options.cwd));
    this.scopes = { cwd: options.cwd, fsScope: (token) => options.capabilities.fsScope(token) };
  }

  /** True when the gate has nothing to do: no rule and no log, so actions go straight to the monitor. */
  get transparent(): boolean {
    return this.options.oversight.policy.empty && this.options.oversight.audit === null;
  }

  /** Actions under way: each settles once its decision and result are logged (see settled). */
  private readonly underWay = new Set<Promise<Decision>>();

  dispatch(action: Action, context: EvaluationContext): Promise<Decision> {
    if (this.transparent) return dispatch(action, context);
    const { audit, policy } = this.options.oversight;
    let logged: Promise<Decision>;
    if (action.kind === "Print" && audit !== null) logged = this.dispatchPrint(action, context);
    else {
      this.logOutput();
      const number = ++this.actions;
      const request = describeAction(action, this.scopes);
      // With no rules everything is "allow": the per-action work is only the log's.
      logged =
        audit !== null && policy.empty && request.subject.kind === "path" && isSingleFileRead(action)
          ? this.dispatchUnruledRead(action, context, audit, number, request.pattern, request.subject)
          : this.dispatchLogged(action, context, number, request);
    }
    this.underWay.add(logged);
    const done = (): void => void this.underWay.delete(logged);
    logged.then(done, done);
    return logged;
  }

  /**
   * Settles once every action under way has ended and logged its decision and result. The
   * evaluation waits for it before it logs its end: a killed sandbox reads no reply, and its
   * evaluation used to end (and a `tacit run` exit) while a command it had started was still being
   * killed, so a security review's `sleep 5`, run 1.5 s until the time limit, had a request in the
   * log and no decision or result, as if it had never run.
   */
  async settled(): Promise<void> {
    while (this.underWay.size > 0) await Promise.allSettled([...this.underWay]);
  }

  // Prints (with a log), reads of one file with no rules (with a log), and the steps no action
  // of a run without rules takes (extending the allowlists, asking a person, a stream that moved)
  // are methods of their own: V8 optimizes dispatchLogged once it is hot (a few hundred actions),
  // and with them inline it was one large async function whose optimizing compile took 185 ms of
  // a background thread in a 1,000-read run with --audit-log (--trace-opt), on a machine whose two
  // cores the sandbox and the host share. With the reads apart, a loop of reads never makes it hot.
  private async dispatchLogged(action: Action, context: EvaluationContext, number: number, request: ActionRequest): Promise<Decision> {
    const { oversight, evaluation } = this.options;
    let tier: Tier = oversight.policy.empty ? "allow" : oversight.policy.tierOf(request, { extendedBy: this.extensionsOf(action) });
    // A later piece of a read a person already approved is the same read, while its path leads
    // where it did when they were asked: a security review swapped it for a link between pieces,
    // and the rest of the stream came from a file a rule always asks about, with no question.
    // It is the piece that read goes on with, at the offset where the last one ended: code with
    // the raw channel asked for offset 1 of a file after a person had said no to reading it again,
    // and got it as it was then, unasked, under an always-ask rule.
    const piece = action.kind === "FsReadChunk" ? action : null;
    const streamAskedAs = piece !== null && piece.offset > 0 ? this.approvedStreams.get(streamPlace(piece, piece.offset)) : undefined;
    const streamMoved = streamAskedAs === undefined ? null : movedSinceAsked(request, streamAskedAs);
    if (streamAskedAs !== undefined && streamMoved === null) tier = "allow";
    // The events every action logs are written as text by events.ts's encoders; one with a record lists its keys in
    // sorted order, so that the log makes its canonical JSON natively (audit/digest.ts). Any order would be correct, only slower.
    // A command's or a request's pattern is its shape ("exec rm *", "net GET host"): its record says what it did (see action-record.ts).
    // Made only for a log: a policy without one need not digest every write or resolve every command's directory.
    const record = oversight.audit === null ? null : actionRecord(action, this.options.cwd);
    // A path's pattern names it as the script did; where it really leads through links is logged beside it, and the
    // executor then acts there or not at all (see judged below). A review's write to current/app.conf (current a
    // link to releases/v2) was logged as "fs.write …/current/app.conf" only: once the link is changed, the log
    // reads as a write somewhere the data never went. (A read of one file that no rule looks at: dispatchUnruledRead.)
    const realPath = oversight.audit === null || request.subject.kind !== "path" ? undefined : request.subject.paths()[1];
    if (record === null) this.log(requestedJson(number, evaluation, action.kind, request.pattern, realPath ?? null, tier));
    else {
      const requested: AuditEvent = { action: number, ...record, evaluation, kind: action.kind, pattern: request.pattern, tier, type: "action-requested" };
      this.log(realPath === undefined ? requested : { ...requested, realPath });
    }
    if (streamMoved !== null) {
      this.approvedStreams.delete(streamPlace(piece!, piece!.offset));
      const message =
        `${printable(streamAskedAs!)}: refused: the path changed since a person approved reading it (` +
        `${nowLeadsText(streamMoved, this.boundsOf(action))}); nothing more of it was read. Do not retry it; ask the user.`;
      return this.deniedBeforeRunning(number, refused("SecurityError", message), "path changed after the answer", context);
    }
    // The allowlists' extensions a person may grant for this run, asked before the scope opens.
    const declined: DeclinedExtension[] = [];
    if (!oversight.policy.empty) tier = await this.extendFirst(number, action, request, tier, context, declined);

    /** Where an asked-about command was asked about as running (see ExecExecutor.judged). */
    let judgedCwd: string | null = null;
    /** Whether a person answered for it; if not, its decision is the monitor's (see logVerdict and decideBeforeEffect). */
    const personAsked = tier !== "allow";
    /** For a piece of a chunked read a person approved (now, or at its first piece): the pattern they were asked about. */
    let streamApprovedAs = streamAskedAs ?? null;
    if (tier !== "allow") {
      const asked = await this.askFirst(number, action, request, tier, context, declined);
      if (!("judgedCwd" in asked)) return asked;
      judgedCwd = asked.judgedCwd;
      streamApprovedAs = asked.pattern;
    }

    // An effect on the world is on file (its request, a person's answer, and the policy's decision: see decideBeforeEffect)
    // before it happens; reads are written in batches.
    const effect = READ_ONLY.has(request.category) || oversight.audit === null ? null : this.decideBeforeEffect(number, personAsked, oversight.audit, context.hostSecrets);
    if (effect !== null) oversight.audit!.flush();
    const started = monotonicMs();
    // Carried out where the rules were applied to it, or not at all (see FileSystemExecutor.judged).
    const judgedPaths = request.subject.kind === "path" ? request.subject.judged() : undefined;
    const judgedReal = judgedPaths === undefined ? null : (judgedPaths[1] ?? judgedPaths[0]!);
    const judged =
      judgedReal === null ? null
      : isFsPathAction(action) ? { scope: action.scope, path: action.path, real: judgedReal }
      : action.kind === "FsOpenScope" ? { scope: "", path: action.root, real: judgedReal }
      : null;
    if (judged !== null) context.files.judged(judged.scope, judged.path, judged.real);
    if (judgedCwd !== null) context.commands.judged(judgedCwd);
    let decision: Decision;
    try {
      decision = await dispatch(action, context, effect?.beforeEffect);
    } finally {
      if (judged !== null) context.files.judged(judged.scope, judged.path, null);
      if (judgedCwd !== null) context.commands.judged(null);
    }
    // Opening an exec or a net scope is asked about only as its extensions: its refusal (by the allowlists, after a
    // no or with nobody to ask) never passed askFirst, and named the flag alone, not the extension nor how to grant it.
    decision = withDeclinedAdvice(decision, declined);
    // The log could not take the decision, so the effect did not happen: the action fails as a log that cannot be
    // written fails any (an executor may have made the error one of its own, which the script would have been told).
    if (effect?.failure !== undefined) throw effect.failure.error;
    if (piece !== null && streamApprovedAs !== null) this.streamRead(piece, decision, streamApprovedAs);
    const durationMs = Math.round((monotonicMs() - started) * 1000) / 1000;
    // What no person answered for was decided by the monitor: allowed (logged before its effect, if it came to one), or
    // refused by the allowlists, the scope or the classified rules. A refusal after a person's yes is a decision too, the
    // policy's over theirs; so is one made at the moment of the effect, after "allow" (a path that changed meanwhile,
    // an address a name resolved to when connecting, a redirect the policy refuses).
    if (isPolicyRefusal(decision) || (!personAsked && !effect?.logged)) this.logVerdict(number, decision, context.hostSecrets);
    // A request's record names the URL the script gave; where redirects took it is known only now.
    const isRequest = action.kind === "HttpRequest" || action.kind === "HttpRequestClassified";
    const redirects = isRequest ? context.network.redirectsOf(action) : [];
    // Whether the server had it: a cancelled POST said "ok: false" whether it went out or not.
    const requestProgress = isRequest ? context.network.progressOf(action) : null;
    // Whether a command ran: one killed by a cancellation said "ok", as one that ran to its end.
    const commandProgress = action.kind === "Exec" ? context.commands.progressOf(action) : null;
    this.logResult(number, decision, durationMs, redirects, context, { commandProgress, requestProgress });
    return decision;
  }

  /**
   * A read of one file (read, a piece of one, stat, size) in a run whose policy has no rules,
   * with a log: what dispatchLogged does for it, which is all the log's. Its path is not resolved
   * here, a second time: the executor reports where it found the path to lead and opened the
   * file (see FileSystemExecutor.watch), and the request is logged with that, once dispatch has
   * carried it out. Nothing of a read is written to the file before it happens anyway.
   *
   * An async function on purpose. Made a plain one returning `decided.then(…)` into a method of its own that
   * logged the decision and result (no await, no try/finally around one: it is the largest optimizing compile
   * a run of reads has only with a log), a run of 1,000 reads with --audit-log cost the host as much on its
   * main thread (-0.4 ms [-11.1 .. 9.7]) and more on all its threads (+20.7 ms [1.1 .. 34.6]; 30 interleaved
   * rounds, paired, load 4-6 on 2 CPUs): V8 then optimized the monitor's dispatch and the continuation apart.
   */
  private async dispatchUnruledRead(
    action: SingleFileRead,
    context: EvaluationContext,
    audit: AuditSink,
    number: number,
    pattern: string,
    subject: PathSubject,
  ): Promise<Decision> {
    const requestedAt = Date.now();
    const started = monotonicMs();
    // Fail closed as for any action: a read whose request cannot be logged is not carried out.
    audit.ready();
    context.files.watch(action.scope, action.path);
    let decision: Decision;
    try {
      const decided = dispatch(action, context);
      // The read was carried out (or refused) within that call, which nothing else can come between: its request
      // is logged now, in its place before its decision and result and with the time it was made, where the
      // executor found its path to lead. Refused before it got that far, its path is resolved for naming only.
      const real = context.files.watched() ?? subject.paths()[1] ?? subject.named;
      this.log(requestedJson(number, this.options.evaluation, action.kind, pattern, real === subject.named ? null : real, "allow"), requestedAt);
      decision = await decided;
    } finally {
      context.files.watched();
    }
    const durationMs = Math.round((monotonicMs() - started) * 1000) / 1000;
    this.logVerdict(number, decision, context.hostSecrets);
    this.logResult(number, decision, durationMs, [], context);
    return decision;
  }

  /** Logs an action's result: what the sandbox is told, by digest and size (see asReceived). */
  private logResult(
    number: number,
    decision: Decision,
    durationMs: number,
    redirects: readonly string[],
    context: EvaluationContext,
    { commandProgress, requestProgress }: { commandProgress: CommandProgress | null; requestProgress: RequestProgress | null } = { commandProgress: null, requestProgress: null },
  ): void {
    const { evaluation } = this.options;
    const secrets = context.hostSecrets;
    // Why it ended without its answer, when for lack of time: its own limit, or the evaluation's, reached while it was under way.
    const ranOutOfTime = decision.ranOutOfTime ?? context.ranOutOfTime;
    // Built when the log writes the line, after the reply has gone to the sandbox.
    this.options.oversight.audit?.append(() => {
      const reply = asReceived(JSON.stringify(decision.ok ? decision.value ?? null : decision.error), secrets);
      // Progress names are from fixed vocabularies, and a limit is a name and a length: never text (see events.ts).
      const extras: ResultExtras | null =
        commandProgress === null && requestProgress === null && redirects.length === 0 && ranOutOfTime === null
          ? null
          : { commandProgress, redirects: redirects.length === 0 ? null : redirects.map((hop) => cutRecorded(secrets.scrubText(hop))), requestProgress, ranOutOfTime };
      return actionResultJson(number, digestOf(reply), durationMs, evaluation, decision.ok, Buffer.byteLength(reply), extras);
    });
  }

  /** A Print: carried out, and logged with the prints around it (see logOutput), or as an action when the host refused it. */
  private async dispatchPrint(action: Extract<Action, { kind: "Print" }>, context: EvaluationContext): Promise<Decision> {
    const decision = await dispatch(action, context);
    if (decision.ok) {
      this.printed.add(action);
      return decision;
    }
    // One the host refused (the sandbox is ended for it) is logged as an action.
    this.logOutput();
    const number = ++this.actions;
    this.log(requestedJson(number, this.options.evaluation, action.kind, "print", null, "allow"));
    this.logVerdict(number, decision, context.hostSecrets);
    return this.refusedWithoutRunning(number, decision, context.hostSecrets);
  }

  /**
   * Asks a person about each extension of the allowlists the action needs; returns its tier after their answers.
   * Those not granted are added to `declined`.
   */
  private async extendFirst(
    number: number,
    action: Action,
    request: ActionRequest,
    tier: Tier,
    context: EvaluationContext,
    declined: DeclinedExtension[],
  ): Promise<Tier> {
    const { policy } = this.options.oversight;
    for (const extension of this.extensionsFor(action)) {
      const extensionTier = policy.beyondTierOf(extension.request);
      if (extensionTier === null || extensionTier === "allow") continue;
      const answer = await this.approve(extension.request, extensionTier, true, extension.detail, context.unanswerable);
      this.logDecision(number, answer, extension.request.pattern);
      if (answer.answer === "yes") {
        extension.grant();
        // The person's yes to the extension answers for the action that asked for it.
        tier = policy.tierOf(request, { extendedBy: this.extensionsOf(action) });
      }
      // A "no" leaves the allowlists as they are: the executor refuses with its usual message.
      else declined.push({ pattern: extension.request.pattern, tier: extensionTier, answer });
    }
    return tier;
  }

  /**
   * Asks a person about an action its tier says to ask about: the refusal (logged) when it is not
   * to be carried out, else where an asked-about command was asked about as running (judgedCwd).
   */
  private async askFirst(
    number: number,
    action: Action,
    request: ActionRequest,
    tier: Exclude<Tier, "allow">,
    context: EvaluationContext,
    declined: readonly DeclinedExtension[],
  ): Promise<Refusal | { judgedCwd: string | null; pattern: string }> {
    // A person is asked only about what the allowlists and the scope would let happen:
    // anything else is refused now, as the monitor would, without a question.
    // A request refused here was never sent, a command never started (see RequestProgress, CommandProgress).
    const unsent = unrunProgress(action);
    const prechecked = this.precheck(action, context);
    const refusal = prechecked === null ? null : withDeclinedAdvice(prechecked, declined);
    if (refusal !== null) return this.deniedBeforeRunning(number, refusal, "allowlists (before asking)", context, unsent);
    // Where an asked-about command runs is part of what the person reads (see execCwdOf), and,
    // when it is not tacit's own working directory, of its pattern: resolved once for both.
    const cwdAsked = execCwdOf(action, this.options.cwd);
    const runsIn = cwdAsked !== null && cwdAsked.real !== this.directory ? cwdAsked.real : null;
    // Asked about, and remembered, under where the path really leads as well (see approvalPattern).
    const asked: ActionRequest = { ...request, pattern: approvalPattern(request, runsIn) };
    const why = indirectReason(this.options.oversight.policy.indirectRuleOf(request, tier, { extendedBy: this.extensionsOf(action) }), request, asked.pattern);
    const room = QUESTION_LIMIT_CHARS - printable(asked.pattern).length - printable(why).length;
    const answer = await this.approve(asked, tier, false, detailOf(action, asked, cwdAsked, room) + why, context.unanswerable);
    if (answer.answer === "no") {
      const message = refusalMessage(asked.pattern, tier, answer) + why;
      this.logDecision(number, answer, null, message, asked.pattern === request.pattern ? null : asked.pattern);
      return this.refusedWithoutRunning(number, refused("SecurityError", message), context.hostSecrets, unsent);
    }
    this.logDecision(number, answer, null, null, asked.pattern === request.pattern ? null : asked.pattern);
    // The script waits while a person is asked, but others need not: a security review had
    // a concurrent call replace docs/ with a link into deploy/ while a person read "fs.write
    // docs/prod.conf", and the yes wrote deploy/prod.conf. A path that leads somewhere else
    // now than when asked is not what the person approved.
    const moved = movedSinceAsked(request, asked.pattern);
    if (moved !== null) {
      const message = `${printable(asked.pattern)}: refused: the path changed while a person was asked (${nowLeadsText(moved, this.boundsOf(action))}); nothing was done. Do not retry it; ask the user.`;
      return this.deniedBeforeRunning(number, refused("SecurityError", message), "path changed after the answer", context);
    }
    // The same for a command's working directory: `rm -r build` in docs/ is not the same
    // command as in deploy/, and a link put in place of docs/ while the person read the
    // question would have it run there.
    const cwdNow = cwdAsked === null ? null : execCwdOf(action, this.options.cwd);
    if (cwdAsked !== null && cwdNow !== null && cwdNow.real !== cwdAsked.real) {
      const message =
        `${printable(asked.pattern)}: refused: the command's working directory changed while a person was asked (` +
        `${nowLeadsText(cwdNow.real, this.boundsOf(action))}, not to ${printable(cwdAsked.real)}); nothing was run. Do not retry it; ask the user.`;
      return this.deniedBeforeRunning(number, refused("SecurityError", message), "path changed after the answer", context);
    }
    return { judgedCwd: cwdAsked?.real ?? null, pattern: asked.pattern };
  }

  /** A piece of an approved chunked read was read (or refused): the read goes on after it, and only there (see approvedStreams). */
  private streamRead(action: Extract<Action, { kind: "FsReadChunk" }>, decision: Decision, pattern: string): void {
    this.approvedStreams.delete(streamPlace(action, action.offset));
    if (!decision.ok) return;
    const piece = decision.value as { base64: string; eof: boolean };
    if (!piece.eof) this.approvedStreams.set(streamPlace(action, action.offset + base64Bytes(piece.base64)), pattern);
  }

  /** Logs tacit's own decision to refuse an action before it ran (`via`: what decided), then its result (see refusedWithoutRunning). */
  private deniedBeforeRunning(number: number, refusal: Refusal, via: string, context: EvaluationContext, unrun: UnrunProgress | null = null): Refusal {
    this.log({ action: number, answer: null, decision: "deny", evaluation: this.options.evaluation, reason: refusal.error.message, type: "decision", via });
    return this.refusedWithoutRunning(number, refusal, context.hostSecrets, unrun);
  }

  /** Logs the result of an action refused before it ran (what the sandbox is told), and returns the refusal. */
  private refusedWithoutRunning(number: number, refusal: Refusal, secrets: HostSecrets, unrun: UnrunProgress | null = null): Refusal {
    const reply = asReceived(JSON.stringify(refusal.error), secrets);
    // A command's says it never started, an HTTP request's that it was not sent.
    const extras: ResultExtras | null =
      unrun === null
        ? null
        : { commandProgress: unrun === "not-started" ? unrun : null, redirects: null, requestProgress: unrun === "not-sent" ? unrun : null, ranOutOfTime: null };
    this.log(actionResultJson(number, digestOf(reply), 0, this.options.evaluation, false, Buffer.byteLength(reply), extras));
    return refusal;
  }

  /**
   * The decision the host's policy (the monitor) made on an action no person was asked about, or refused after a
   * yes: "allow", or "deny" with the refusal the agent was given. Logged before, as "allow" whenever no tier rule
   * asked, the log of a security review said "allow via policy" for `requestExecPermission(["rm"], …)` and
   * `fs.access("/etc/passwd").read()`, both refused by the allowlists: a refusal told only by a failed result's
   * digest, like a missing file's, so a reader of the log could not find what the agent tried and was refused.
   * An action whose executor came to its effect had its "allow" logged then (decideBeforeEffect): only a refusal follows it.
   */
  private logVerdict(number: number, decision: Decision, secrets: HostSecrets): void {
    this.logPolicyDecision(number, isPolicyRefusal(decision) ? secrets.scrubText(decision.error.message) : null);
  }

  /** The policy's decision: "allow", or "deny" with the refusal (`reason`, host secrets masked). */
  private logPolicyDecision(number: number, reason: string | null): void {
    this.log(policyDecisionJson(number, this.options.evaluation, reason));
  }

  /**
   * What the executor of an action with an effect tells once every check it makes before acting has passed (see
   * BeforeEffect): the policy's "allow", unless a person answered (logged already), is logged then and the log written
   * to the file, before the effect. Logged once the monitor had carried the action out, a tacit killed between the two
   * (a crash, SIGKILL, the machine) left a log whose last line was the request of a write that had happened.
   */
  private decideBeforeEffect(number: number, personAsked: boolean, audit: AuditSink, secrets: HostSecrets): DecidedBeforeEffect {
    const effect: DecidedBeforeEffect = {
      logged: false,
      beforeEffect: (redirect) => {
        if (effect.failure !== undefined) throw effect.failure.error;
        try {
          // Logged once; the file is checked at every step that changes the world (see AuditLog.flush): checked at
          // the first only, a request's redirect hop was sent after the log had been moved away since its first hop,
          // its decision in a file no longer at the log's path.
          if (!effect.logged && !personAsked) this.logPolicyDecision(number, null);
          // A redirect hop goes to a URL the server chose: on file before it is sent, not only in the result (a crash
          // after a 307 had re-sent a POST's body elsewhere left a log naming the first URL alone).
          if (redirect !== undefined) {
            this.log({ type: "request-redirected", evaluation: this.options.evaluation, action: number, hop: cutRecorded(secrets.scrubText(redirect.hop)) });
          }
          audit.flush();
          effect.logged = true;
        } catch (error) {
          effect.failure = { error };
          throw error;
        }
      },
    };
    return effect;
  }

  private log(event: AuditEvent | EventJson, at?: number): void {
    this.options.oversight.audit?.append(event, at);
  }

  /** Logs the prints since the last event, if any: before the next action, and at the evaluation's end. */
  logOutput(): void {
    const event = this.printed.take(this.options.evaluation);
    if (event !== null) this.log(event);
  }

  /**
   * `askedAbout`: the pattern the person was asked about (or a remembered yes was found under)
   * when it is not the action's logged pattern: a path through a link is asked about with
   * where it leads, and the log must show what was approved.
   */
  private logDecision(number: number, answer: Answer, extending: string | null, reason: string | null = null, askedAbout: string | null = null): void {
    const decision = answer.fromPerson && !answer.remembered ? "asked" : answer.answer === "yes" ? "allow" : "deny";
    let via = extending ? `${answer.via}; extends the allowlists: ${extending}` : answer.via;
    if (askedAbout !== null) via += `; asked about: ${askedAbout}`;
    this.log({
      type: "decision",
      evaluation: this.options.evaluation,
      action: number,
      decision,
      answer: decision === "asked" ? answer.answer : null,
      via,
      reason,
    });
  }

  /**
   * A remembered yes, or a person's answer (remembered when it is a person's yes to approve-once).
   * `ended`: aborted once nothing can use the answer (see EvaluationContext.unanswerable); the question
   * is then withdrawn, and an answer that comes anyway counts for nothing.
   */
  private async approve(request: ActionRequest, tier: Exclude<Tier, "allow">, beyondAllowlist: boolean, detail: string, ended: AbortSignal): Promise<Answer> {
    const { oversight } = this.options;
    if (tier === "approve-once") {
      let remembered: Approval | null;
      try {
        remembered = oversight.approvals().find(request.pattern, this.directory);
      } catch (error) {
        // A damaged or unsafe approvals file answers nothing: fail closed, and say why.
        return { answer: "no", via: "no-one-to-ask", unavailable: (error as Error).message, fromPerson: false };
      }
      if (remembered) return { answer: "yes", via: `remembered (approved ${remembered.grantedAt} via ${remembered.via})`, fromPerson: true, remembered: true };
    }
    const shownChars = printable(detail).length + shownPattern(request.pattern).length;
    if (shownChars > QUESTION_LIMIT_CHARS) {
      return {
        answer: "no",
        via: "no-one-to-ask",
        unavailable:
          `the action is ${shownChars} characters long as a question would show it, more than a person can be asked to read whole ` +
          `(${QUESTION_LIMIT_CHARS}; a client may cut a long message short, hiding its end). Ask for it in a shorter form: ` +
          "put long data in a file, or split the work into smaller actions",
        fromPerson: false,
      };
    }
    if (ended.aborted) return WITHDRAWN;
    // A person is asked only while the log can take their answer, and a yes is kept (approvals.json) only then: a log
    // moved away before a call had its client's user asked, and the yes remembered, though the log could not hold it;
    // the action was refused, but the next tacit did it unasked, and no log said who granted it. (Throws, as a log
    // that cannot be written fails any action.)
    oversight.audit?.flush();
    const answer = await this.options.whilePaused(oversight.asker.ask({ pattern: request.pattern, tier, beyondAllowlist, detail }, ended));
    // Nothing waits for it: a security review deleted a session while its question was open, and
    // the yes given to it afterwards, for an action that could no longer run, was remembered (the
    // next session did it unasked).
    if (ended.aborted) return WITHDRAWN;
    if (answer.answer === "yes" && answer.fromPerson && tier === "approve-once") {
      // The log again: a person may read a question for minutes, while the log is rotated away or the disk fills.
      oversight.audit?.flush();
      try {
        oversight.approvals().remember(request.pattern, answer.via, this.directory);
      } catch (error) {
        return { ...answer, via: `${answer.via}; not remembered: ${(error as Error).message}` };
      }
    }
    return answer;
  }

  /** The executor's refusal of an action before it would run, or null when it passes. */
  private precheck(action: Action, context: EvaluationContext): Refusal | null {
    try {
      switch (action.kind) {
        case "Exec":
          context.commands.authorize(action.scope, action);
          break;
        case "HttpRequest":
        case "HttpRequestClassified":
          context.network.authorize(action);
          break;
        // A root outside the allowed roots (and those a person extended them to) is refused, asked or not: a
        // review was asked "fs.open X" after a no to "extend fs.open X", and the yes was remembered for nothing.
        case "FsOpenScope":
          context.files.authorizeOpen(action.root);
          break;
        default:
          if (isFsPathAction(action)) context.files.authorize(action.scope, action.path, fsPathUse(action));
          break;
      }
      return null;
    } catch (error) {
      return refusalOf(error);
    }
  }

  /**
   * Where the action may act, for naming where its path now leads in a refusal (see moved-place.ts):
   * a path action's file-system scope; for a scope's root or a command's working directory, the
   * allowed roots and those a person allowed for this run. A scope gone meanwhile has no inside.
   */
  private boundsOf(action: Action): PlaceBounds {
    if (isFsPathAction(action)) {
      const scope = this.scopes.fsScope(action.scope);
      return scope === null ? { what: "this file system scope", roots: [] } : scopeBounds(scope);
    }
    return allowedRootsBounds([...this.options.library.allowedRoots, ...this.options.grants.roots]);
  }

  /**
   * The extensions of the allowlists a person granted this run that cover what the action touches
   * (its command, host or root), as they were asked about: see TierPolicy.tierOf. Said as a yes or
   * no, a yes to opening data/ left out every beyondAllowlist rule on what lies below it, an
   * always-ask one on data/private/** included, and a script read data/private/key.txt unasked.
   */
  private extensionsOf(action: Action): ActionRequest[] {
    const { grants } = this.options;
    switch (action.kind) {
      case "Exec":
        return grants.commandAskedAs(action.command);
      case "HttpRequest":
      case "HttpRequestClassified": {
        try {
          const url = new URL(action.url);
          return grants.hostsAskedAs(url);
        } catch {
          return [];
        }
      }
      case "FsOpenScope": {
        try {
          const real = resolveReal(path.resolve(this.options.cwd, action.root));
          return grants.rootsAskedAs(real);
        } catch {
          return [];
        }
      }
      default:
        if (isFsPathAction(action)) {
          const root = this.options.capabilities.fsScope(action.scope)?.root ?? null;
          return root === null ? [] : grants.rootsAskedAs(path.resolve(root, action.path));
        }
        return [];
    }
  }

  private extensionsFor(action: Action): Extension[] {
    const { library, grants, cwd } = this.options;
    switch (action.kind) {
      case "ExecOpenScope":
        return action.commands
          .filter((command) => !grants.commands.has(command) && !command.includes("/") && command !== "")
          .filter((command) => commandRefusal(command, { commandPermissions: library.commandPermissions, strictMode: library.strictMode }) !== null)
          .map((command) => {
            const request: ActionRequest = { category: "exec", pattern: `extend exec ${command}`, subject: { kind: "command", command, args: [] } };
            return {
              request,
              detail: `let scripts run the command "${backslashesDoubled(command)}" (not permitted by --command-permissions / --strict)`,
              grant: () => grants.grantCommand(command, request),
            };
          });
      case "NetOpenScope":
        return action.hosts.flatMap((source): Extension[] => {
          let pattern: HostPattern;
          try {
            pattern = parseHostPattern(source);
          } catch {
            return [];
          }
          const host = pattern.literalHost;
          if (host === null || pattern.port === "*") return [];
          const permitted = [...(library.networkPermissions?.map(parseHostPattern) ?? []), ...grants.hosts];
          // Permitted already (host and port), so nothing to extend.
          const samePort = (permission: HostPattern) => permission.port === "*" || permission.port === pattern.port;
          if (permitted.some((permission) => permission.host.test(host) && samePort(permission))) return [];
          const port = pattern.port === null ? "" : `:${pattern.port}`;
          // An IPv6 host keeps its brackets, as in a request's pattern (see urlPattern): without them [::1]:8080 and
          // [::1:8080] (another address, default ports) were both "extend net ::1:8080", and a yes to one was remembered for the other.
          const named = host.includes(":") ? `[${host}]` : host;
          const url = new URL(`https://${named}${port}`);
          const request: ActionRequest = { category: "net", pattern: `extend net ${named}${port}`, subject: { kind: "url", method: "*", url } };
          return [{
            request,
            detail: `let scripts reach ${named}${port || " (default ports)"} (not permitted by --network-permissions)`,
            grant: () => grants.grantHost(pattern, request),
          }];
        });
      case "FsOpenScope": {
        const named = path.resolve(cwd, action.root);
        let real: string;
        try {
          real = resolveReal(named);
        } catch {
          return [];
        }
        if ([...library.allowedRoots, ...grants.roots].some((root) => isWithin(real, root))) return [];
        const request: ActionRequest = { category: "fs.open", pattern: `extend fs.open ${real}`, subject: pathSubject(named) };
        return [{
          request,
          detail: `let scripts open ${backslashesDoubled(real)} with requestFileSystem (outside --allowed-roots)`,
          grant: () => grants.grantRoot(real, request),
        }];
      }
      default:
        return [];
    }
  }
}

/** Where a chunked read goes on: its scope, its path as the script named it, and the offset of the piece it reads next. */
function streamPlace(action: Extract<Action, { kind: "FsReadChunk" }>, offset: number): string {
  return `${action.scope}\0${action.path}\0${offset}`;
}

/** How many bytes a base64 text holds (a piece's length, as the stub counts it), without decoding it. */
function base64Bytes(text: string): number {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/** A refusal by the host's policy (a SecurityError), not a failure of an allowed action (a missing file, a command not found). */
function isPolicyRefusal(decision: Decision): decision is Refusal {
  return !decision.ok && decision.error.name === "SecurityError";
}

/** Where a path action's path leads now, when that is not what `askedPattern` named; null when unchanged (or not a path). */
function movedSinceAsked(request: ActionRequest, askedPattern: string): string | null {
  if (request.subject.kind !== "path") return null;
  const named = request.subject.paths()[0]!;
  const now: ActionRequest = { ...request, subject: pathSubject(named, request.subject.tree, request.subject.realOf) };
  return approvalPattern(now) === askedPattern ? null : resolveRealOrSelf(named);
}

/**
 * The working directory a command asks for (exec's cwd): as named (resolved against tacit's
 * working directory, as the executor does) and where it really leads, symlinks resolved. Null
 * for any other action, and for a command with no cwd of its own (it runs in tacit's).
 */
function execCwdOf(action: Action, cwd: string): { named: string; real: string } | null {
  if (action.kind !== "Exec" || !action.cwd) return null;
  const named = path.resolve(cwd, action.cwd);
  return { named, real: resolveRealOrSelf(named) };
}

/**
 * What a question shows of an action. `room`: the characters (as shown) a question has left for
 * it; what an action carries (a file's content, a request's body) is cut to fit, the question
 * saying so. An action longer than that on its own is refused without asking (see approve). A
 * pattern, path or URL is shown with its backslashes doubled, as the question's pattern line and
 * `tacit approvals list` show them (see backslashesDoubled); a JSON string escapes its own.
 */
function detailOf(action: Action, request: ActionRequest, cwd: { named: string; real: string } | null, room: number): string {
  switch (action.kind) {
    case "Exec": {
      // The directory as the command will run in it: a security review's "(in docs)" was a link to deploy/.
      const where = cwd === null ? "" : ` (in ${shownWord(cwd.named)}${cwd.real === cwd.named ? "" : ` -> ${shownWord(cwd.real)}`})`;
      // What it reads on standard input is part of what it does (`tee -a .bashrc`, `git apply`,
      // `crontab`, `psql`): a security review's question said "run: tee -a .bashrc", and nothing
      // of the line it appended. Shown whole, as a JSON string (line breaks as \n); a long one
      // makes the question too long to ask (see approve), like any long action.
      const input = action.input === null ? "" : `, with standard input (${action.input.length} characters): ${JSON.stringify(action.input)}`;
      return `run: ${[action.command, ...action.args].map(shownWord).join(" ")}${where}${input}`;
    }
    case "HttpRequest":
    case "HttpRequestClassified":
      // As the request will be sent (the parser's serialization: the host in its ASCII form, the
      // rest percent-encoded), never as the script spelled it: a security review had a person
      // approve "POST https://myteаm.pages.example/upload" (a Cyrillic "а") and
      // "https://docs∕evil.pages.example/" (a division slash, which reads as "/"), both of which
      // went to other names under the allowed domain than the one the question seemed to show.
      return httpDetail(action, backslashesDoubled(`${action.method.toUpperCase()} ${request.subject.kind === "url" ? request.subject.url.href : action.url}`), room);
    case "FsWrite":
      // What is written decides as much as where: a security review's question read
      // "fs.write /work/app/.bashrc" and the yes wrote a line that fetches and runs a script.
      return headThenShown(backslashesDoubled(request.pattern), action.append ? "appending" : "writing", action.content, room);
    case "FsWriteClassified":
      return `${backslashesDoubled(request.pattern)}, writing classified content (a secret: not shown)`;
    // What is sent to the model is the point of asking about it (the eleventh review: "chat" alone).
    case "Chat":
      return headThenShown(backslashesDoubled(request.pattern), "asking", action.message, room);
    case "ChatClassified":
      return `${backslashesDoubled(request.pattern)}, asking with a classified message (a secret: not shown)`;
    default:
      return backslashesDoubled(request.pattern);
  }
}

/** A request as a question shows it: method and URL, the headers it sends, and its body. */
function httpDetail(action: Extract<Action, { kind: "HttpRequest" | "HttpRequestClassified" }>, line: string, room: number): string {
  const headers = Object.keys(action.headers).length === 0 ? "" : `, headers ${JSON.stringify(action.headers)}`;
  const secretNames = Object.keys(action.secretHeaders);
  const secret = secretNames.length === 0 ? "" : `, secret headers ${JSON.stringify(secretNames)} (values not shown)`;
  const head = line + headers + secret;
  if (action.classifiedBody !== null) return `${head}, with a classified body (a secret: not shown)`;
  if (action.body === null) return head;
  return headThenShown(head, "with a body", action.body, room);
}

/**
 * A pattern as one shell word, so a refusal's suggested command is safe to paste: single-quoted,
 * or, when it holds characters printable() would escape (a right-to-left override reverses what
 * follows it on screen), as bash's $'…' with each of them as \uXXXX or \UXXXXXXXX, so that what
 * a person reads is what the shell passes on.
 */
function shellQuoted(text: string): string {
  if (printable(text) === text) return singleQuoted(text);
  let quoted = "";
  for (const c of text) {
    if (c === "\\" || c === "'") quoted += `\\${c}`;
    else if (printable(c) === c) quoted += c;
    else {
      const code = c.codePointAt(0)!;
      quoted += code > 0xffff ? `\\U${code.toString(16).padStart(8, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
    }
  }
  return `$'${quoted}'`;
}

/**
 * Why an action no rule names as written is asked about (see TierPolicy.indirectRuleOf), or "":
 * which rule asked, and how it reached the action. Shown the tier alone, a person (or an agent
 * refused with no one to ask) could not tell why `gmake` or a request to 127.0.0.1 was asked
 * about under a policy whose rules name only `make` and `localhost`.
 */
function indirectReason(indirect: IndirectRule | null, request: ActionRequest, askedPattern: string): string {
  if (indirect === null) return "";
  const { rule, through } = indirect;
  const subject = request.subject;
  const named = printable([rule.command ?? rule.host, rule.args].filter((part) => part !== undefined).join(" "));
  const ruleText = `the rule on \`${named}\` (${rule.tier})`;
  if (through === "runner") {
    if (subject.kind !== "command") return "";
    return ` (${printable(subject.command)} is asked about under ${ruleText}: it runs code or other programs, which could run that command)`;
  }
  // A grant is remembered for the pattern asked about (ApprovalStore matches it exactly): one
  // for the rule's own name does not answer for this one. Said here too because the question a
  // person reads carries no grant command.
  const preApprove =
    rule.tier === "approve-once"
      ? `; a grant under the rule's name does not cover this one: pre-approve it as named here, \`tacit approvals grant ${shellQuoted(askedPattern)}\``
      : "; always-ask holds under every name: no grant pre-approves it";
  if (subject.kind === "command") {
    return (
      ` (${printable(subject.command)} is asked about under ${ruleText}: on this PATH it runs the same program as \`${printable(rule.command ?? "")}\`, ` +
      `another name for it (a link, a hard link or a versioned name)${preApprove})`
    );
  }
  if (subject.kind === "url") {
    const host = printable(subject.url.host);
    return (
      ` (${host} is asked about under ${ruleText}: it leads to the same place as \`${printable(rule.host ?? "")}\`, ` +
      `another name or address for that host (this machine's loopback or own addresses, or the hosts file)${preApprove})`
    );
  }
  return "";
}

/**
 * The allowlists' refusal (it names a flag to change) with, for each extension of them a beyondAllowlist
 * rule made askable and nobody granted, how to grant it; any other decision as it is. Told only to grant
 * "fs.open X", a person pre-approved an open the allowlists refuse whatever is remembered; told only the
 * flag, one refused "extend exec X" or "extend net H" did not learn it could be pre-approved.
 */
function withDeclinedAdvice<D extends Decision>(decision: D, declined: readonly DeclinedExtension[]): D | Refusal {
  if (declined.length === 0 || !isPolicyRefusal(decision)) return decision;
  // The commands' and hosts' refusals end without a full stop, unlike a root's: the advice is a sentence of its own.
  const { message } = decision.error;
  return { ...decision, error: { ...decision.error, message: (/[.!?]$/.test(message) ? message : `${message}.`) + declinedAdvice(declined) } };
}

/** What withDeclinedAdvice adds: each extension by its pattern (a scope may name several commands or hosts), its tier, why nobody granted it, and how to. */
function declinedAdvice(declined: readonly DeclinedExtension[]): string {
  return declined
    .map(({ pattern, tier, answer }) => {
      const asked = ` A beyondAllowlist rule lets a person extend the allowlists (\`${printable(pattern)}\`, ${tier})`;
      const why = answer.unavailable ?? answer.askFailed ?? answer.malformed;
      if (why === undefined) return `${asked}, and a person was asked (${answer.via}) and did not approve it.`;
      const how =
        tier === "approve-once"
          ? `Pre-approve it with \`tacit approvals grant ${shellQuoted(pattern)}\` in this directory (remembered 30 days), answer yes once when tacit can ask (a terminal, or an MCP client with elicitation), or run with --yes.`
          : "It is asked every time (always-ask): run tacit where it can ask (a terminal, or an MCP client with elicitation), or with --yes.";
      return `${asked}, and no one could answer: ${why}. ${how}`;
    })
    .join("");
}

function refusalMessage(rawPattern: string, tier: Exclude<Tier, "allow">, answer: Answer): string {
  const pattern = printable(rawPattern);
  if (answer.malformed !== undefined) {
    return (
      `${pattern}: refused: the policy requires a person's approval (${tier}), and the MCP client answered the question with something that is ` +
      `no answer (${answer.malformed}), which counts as no. Do not retry it; ask the user, whose client may need fixing.`
    );
  }
  if (answer.askFailed !== undefined) {
    const instead = tier === "approve-once" ? `, or pre-approve it with \`tacit approvals grant ${shellQuoted(rawPattern)}\` in this directory (remembered 30 days)` : "";
    return (
      `${pattern}: refused: the policy requires a person's approval (${tier}), and asking the user through the MCP client failed ` +
      `(${answer.askFailed}), which counts as no. Do not retry it at once; tell the user, whose client could not put the question to them${instead}.`
    );
  }
  if (answer.unavailable === undefined) {
    return `${pattern}: refused: a person was asked (${answer.via}) and did not approve it. Do not retry it; do the work another way or ask the user.`;
  }
  const how =
    tier === "approve-once"
      ? `Pre-approve it with \`tacit approvals grant ${shellQuoted(rawPattern)}\` in this directory (remembered 30 days), answer yes once when tacit can ask (a terminal, or an MCP client with elicitation), or run with --yes.`
      : "It is asked every time (always-ask): run tacit where it can ask (a terminal, or an MCP client with elicitation), or with --yes.";
  return `${pattern}: refused: the policy requires a person's approval (${tier}), and no one could be asked: ${answer.unavailable}. ${how}`;
}

/**
 * A reply as the sandbox receives it, which is what the audit log digests (the README: results
 * "as the script saw them"): with the host's own secrets (the LLM key) masked, as sandbox.ts masks
 * every reply frame. Digested before, a result holding the key was logged by a digest of it.
 */
function asReceived(reply: string, secrets: HostSecrets): string {
  return secrets.scrubLine(reply);
}

/** How far an action refused before it ran got, for the kinds whose results say (see CommandProgress, RequestProgress). */
type UnrunProgress = "not-started" | "not-sent";

function unrunProgress(action: Action): UnrunProgress | null {
  if (action.kind === "Exec") return "not-started";
  return action.kind === "HttpRequest" || action.kind === "HttpRequestClassified" ? "not-sent" : null;
}
