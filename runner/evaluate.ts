// One evaluation, end to end: check the script (validator, then type checker), run it in a
// fresh sandbox under the monitor, and say how it ended. The sandbox boots while the checks
// run, so the checks cost little wall time; it is killed unused if they fail.

import type { Action, SandboxFrame, ScriptFailure } from "../library/protocol.js";
import type { RunnerConfig } from "./config.js";
import { EXIT_CODES, type Outcome } from "./exit-codes.js";
import { CapabilityTable } from "./capabilities.js";
import { PureEvaluator } from "./classified/pure-evaluator.js";
import { ClassifiedStore } from "./classified/store.js";
import { SecureSink } from "./secure-sink.js";
import { ClassifiedPaths } from "./fs/classified-paths.js";
import { ExecExecutor } from "./exec/executor.js";
import { NetworkExecutor } from "./net/executor.js";
import { parseHostPattern } from "./net/host-policy.js";
import { FileSystemExecutor } from "./fs/file-system.js";
import { GrepRunner } from "./fs/grep-runner.js";
import { protectedPathsOf } from "./fs/protected-paths.js";
import { type Decision, type EvaluationContext, type InputSource } from "./monitor.js";
import { OUTPUT_LIMIT_BYTES, OutputBuffer } from "./output.js";
import { rewriteForSandbox } from "./rewrite-imports.js";
import type { PureFunctionSite } from "./pure-functions.js";
import { Sandbox, type SandboxEnd } from "./sandbox.js";
import { SandboxProcess } from "./sandbox-process.js";
import { type CheckResult, checkScript, type TypeChecker } from "./checks.js";
import type { TacitImport } from "./validator.js";
import { ApprovalGate, type Oversight } from "./approval/gate.js";
import { RunGrants } from "./approval/grants.js";
import { unattendedOversight } from "./approval/oversight.js";
import { digestOf } from "./audit/digest.js";
import { HostSecrets } from "./host-secrets.js";
import { PausableTimer } from "./pausable-timer.js";
import { randomToken } from "./random-token.js";

export { type CheckResult, checkScript, EXIT_CODES, type Outcome };

export interface EvaluationResult {
  outcome: Outcome;
  exitCode: number;
  stdout: string;
  /** What went wrong, in the agent's terms; null on success. */
  error: string | null;
  durationMs: number;
  truncated: boolean;
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
}

/** One exchange with the monitor, as a session records it for replay. */
export interface RecordedExchange {
  action: Action;
  decision: Decision;
}

/** What lives across a session's evaluations. */
export interface SessionState {
  classified: ClassifiedStore;
  pure: PureEvaluator;
  sink: SecureSink | null;
}

export interface SessionPart {
  /** The session's id, for the audit log. */
  id: string;
  state: SessionState;
  /** The requests of earlier snippets, answered from here instead of being performed again. */
  replay: readonly RecordedExchange[];
  /** This evaluation's own exchanges are appended here. */
  record: RecordedExchange[];
  /** The session's seed for Math.random (see StartFrame.randomSeed). */
  randomSeed: number;
  /** Edits to the code for the sandbox beyond the usual (the echo of a final expression). */
  extraEdits: readonly { at: number; length: number; text: string }[];
}

function sandboxFor(options: EvaluateOptions): Sandbox {
  const wanted = { memoryLimitMb: options.config.memoryLimitMb };
  const early = options.prestarted;
  if (early && !early.isKilled && early.options.memoryLimitMb === wanted.memoryLimitMb) return new Sandbox(early);
  early?.kill("cancelled", "started with other limits");
  return new Sandbox(new SandboxProcess(wanted));
}

function result(outcome: Outcome, output: OutputBuffer, error: string | null, startedAt: number): EvaluationResult {
  return {
    outcome,
    exitCode: EXIT_CODES[outcome],
    stdout: output.text(),
    error,
    durationMs: Math.round(performance.now() - startedAt),
    truncated: output.truncated,
  };
}

/** Runs one evaluation, logged (when an audit log is configured) from start to end and signed. */
export async function evaluate(options: EvaluateOptions): Promise<EvaluationResult> {
  const oversight = options.oversight ?? unattendedOversight(options.config, options.cwd ?? process.cwd());
  const evaluation = randomToken(9);
  const audit = oversight.audit;
  audit?.append({
    type: "evaluation-started",
    evaluation,
    session: options.session?.id ?? null,
    displayName: options.displayName,
    codeDigest: digestOf(options.code),
    policyDigest: oversight.policyDigest,
  });
  let ended: EvaluationResult | undefined;
  try {
    ended = await runEvaluation(options, oversight, evaluation);
    return ended;
  } finally {
    if (audit) {
      audit.append({
        type: "evaluation-ended",
        evaluation,
        outcome: ended?.outcome ?? "internal-error",
        exitCode: ended?.exitCode ?? EXIT_CODES.threw,
        durationMs: ended?.durationMs ?? 0,
      });
      audit.signHead();
    }
  }
}

async function runEvaluation(options: EvaluateOptions, oversight: Oversight, evaluation: string): Promise<EvaluationResult> {
  const startedAt = performance.now();
  const { config } = options;
  const output = new OutputBuffer(OUTPUT_LIMIT_BYTES, options.onOutput);
  const sandbox = sandboxFor(options);

  let tacitImports: TacitImport[] = [];
  let pureFunctions: PureFunctionSite[] = [];
  if (!options.unsafeSkipValidation) {
    let check: CheckResult;
    try {
      const early = options.precheck;
      check = await (early && early.typeChecked === config.typeCheck
        ? early.result
        : checkScript(options.code, options.displayName, config.typeCheck, options.typeChecker));
    } catch (error) {
      sandbox.kill("cancelled", "the checks failed");
      await sandbox.ended;
      throw error;
    }
    if (!check.ok) {
      sandbox.kill("cancelled", "rejected before running");
      await sandbox.ended;
      return result("rejected", output, check.errors.join("\n"), startedAt);
    }
    tacitImports = check.tacitImports;
    pureFunctions = check.pureFunctions;
  }

  // Set from the frame handler; an object so the narrowing below sees the assignment.
  const reported: { outcome: { kind: "done" } | { kind: "failed"; error: ScriptFailure } | null } = { outcome: null };
  let queue: Promise<void> = Promise.resolve();
  // Ends host-side work still running for this evaluation (a long search) when it stops.
  const lifetime = new AbortController();
  const { context, capabilities, pure, sink, grants } = createEvaluationContext(config, options, output, lifetime.signal);
  const replay = replayer(options.session?.replay ?? []);
  sandbox.scrubReplies(context.hostSecrets);
  const clock = new PausableTimer(config.executionTimeoutMs, () =>
    sandbox.kill("timeout", `the script ran longer than ${config.executionTimeoutMs} ms`),
  );
  const gate = new ApprovalGate({
    oversight,
    evaluation,
    library: config.library,
    capabilities,
    grants,
    cwd: options.cwd ?? process.cwd(),
    whilePaused: (work) => clock.whilePaused(work),
  });

  // Once the sandbox has reported and every request is answered, the evaluation is over: the
  // process is killed, and its exit (Deno's teardown takes milliseconds) is not waited for.
  let reportedAndAnswered: (end: SandboxEnd) => void = () => undefined;
  const whenReported = new Promise<SandboxEnd>((resolve) => (reportedAndAnswered = resolve));
  const finishReported = (how: "done" | "failed"): void => {
    sandbox.kill("finished", how);
    reportedAndAnswered(sandbox.killed!); // the first reason, if it was killed for another before
  };

  sandbox.onFrame((frame: SandboxFrame) => {
    switch (frame.type) {
      case "request": {
        // The stub waits for each reply, so requests are answered strictly in order.
        const { id, action } = frame;
        const replayed = replay.next(action);
        queue = queue.then(async () => {
          let decision: Decision;
          if (replayed === "diverged") {
            sandbox.kill(
              "protocol",
              "replaying the session's earlier snippets asked for something else than they did the first time " +
                "(an earlier snippet depends on something that changes between runs, such as the clock or crypto.getRandomValues, " +
                "and it changed what the snippet did). The session cannot go on from here: create a new session, and keep such " +
                "values out of what later snippets build on (each snippet is re-run, with its effects answered from a recording)",
            );
            return;
          } else if (replayed) {
            decision = replayed;
          } else {
            decision = await gate.dispatch(action, context);
            options.session?.record.push({ action, decision });
          }
          sandbox.send(decision.ok ? { type: "reply", id, ok: true, value: decision.value } : { type: "reply", id, ok: false, error: decision.error });
        });
        queue.catch((error: unknown) => sandbox.kill("protocol", `the host failed to answer a request: ${String(error)}`));
        return;
      }
      case "done":
        reported.outcome = { kind: "done" };
        void queue.then(() => finishReported("done"));
        return;
      case "failed":
        reported.outcome = { kind: "failed", error: frame.error };
        void queue.then(() => finishReported("failed"));
        return;
    }
  });

  sandbox.send({
    type: "start",
    protocol: 1,
    code: rewriteForSandbox(options.code, tacitImports, pureFunctions, options.session?.extraEdits),
    displayName: options.displayName,
    hideRuntime: !options.unsafeKeepRuntime,
    randomSeed: options.session?.randomSeed ?? null,
  });
  const cancel = (): void => sandbox.kill("cancelled", "the evaluation was cancelled by its caller");
  options.signal?.addEventListener("abort", cancel, { once: true });
  if (options.signal?.aborted) cancel();
  const end = await Promise.race([sandbox.ended, whenReported]);
  options.signal?.removeEventListener("abort", cancel);
  const remaining = clock.left();
  clock.stop();
  // After a kill, host-side work stops at once; after a normal end, classified values still
  // being computed (for the sink, a pending write, a classified chat) are let finish first.
  const abandoned = end.kind === "killed" && end.reason !== "finished";
  if (abandoned) lifetime.abort();
  capabilities.revokeAll();
  await queue.catch(() => undefined);
  // Background classified work is bounded by what remains of the evaluation's time limit.
  let overtime: NodeJS.Timeout | undefined;
  await Promise.race([
    finishClassifiedWork(context, pure, sink, abandoned, options.session !== undefined),
    new Promise<void>((resolve) => {
      overtime = setTimeout(() => {
        lifetime.abort();
        void finishClassifiedWork(context, pure, sink, true, options.session !== undefined).then(resolve);
      }, remaining);
    }),
  ]);
  clearTimeout(overtime);
  lifetime.abort();

  const outcome = reported.outcome;
  // The sandbox may exit by itself right after reporting, before the host's kill lands.
  const endedNormally = end.kind === "exited" || end.reason === "finished";
  if (outcome && endedNormally) {
    return outcome.kind === "done"
      ? result("ok", output, null, startedAt)
      : result("threw", output, outcome.error.stack || `${outcome.error.name}: ${outcome.error.message}`, startedAt);
  }
  return describeAbnormalEnd(end, config, options.displayName, output, startedAt);
}

/**
 * Answers a session's earlier requests from their recording: each must be exactly what it was
 * the first time ("diverged" otherwise); past the recording, null (perform it).
 */
function replayer(recording: readonly RecordedExchange[]) {
  let next = 0;
  return {
    next(action: Action): Decision | "diverged" | null {
      if (next >= recording.length) return null;
      const expected = recording[next++]!;
      return JSON.stringify(expected.action) === JSON.stringify(action) ? expected.decision : "diverged";
    },
  };
}

/** Everything the monitor decides with, for one evaluation: policy, executors, stores. */
function createEvaluationContext(config: RunnerConfig, options: EvaluateOptions, output: OutputBuffer, lifetime: AbortSignal) {
  const cwd = options.cwd ?? process.cwd();
  const capabilities = new CapabilityTable();
  const grants = new RunGrants();
  const protectedPaths = protectedPathsOf(config);
  const shared = options.session?.state;
  const sink = shared ? shared.sink : config.library.secureOutput ? new SecureSink(config.library.secureOutput) : null;
  const pure = shared?.pure ?? new PureEvaluator();
  const classified = shared?.classified ?? new ClassifiedStore(pure, (reason) => sink?.append(`[tacit] ${reason}\n`));
  const context: EvaluationContext = {
    output,
    hostSecrets: new HostSecrets([config.library.llm?.apiKey]),
    input: options.input,
    classified,
    sink,
    background: [],
    files: new FileSystemExecutor(
      {
        allowedRoots: config.library.allowedRoots,
        grantedRoots: grants.roots,
        classified: new ClassifiedPaths(config.library.classifiedPaths),
        classifiedWrite: config.library.classifiedWrite,
        protectedPaths,
      },
      capabilities,
      new GrepRunner(lifetime),
      cwd,
    ),
    network: new NetworkExecutor(
      {
        permissions: config.library.networkPermissions?.map(parseHostPattern) ?? null,
        grantedHosts: grants.hosts,
        maxResponseBytes: config.library.networkResponseLimitBytes,
        timeoutMs: config.library.networkTimeoutMs,
      },
      capabilities,
      classified,
      lifetime,
    ),
    llm: config.library.llm,
    lifetime,
    commands: new ExecExecutor(
      { commandPermissions: config.library.commandPermissions, strictMode: config.library.strictMode },
      config.library.allowedRoots,
      capabilities,
      cwd,
      lifetime,
      grants.commands,
      protectedPaths,
    ),
  };
  return { context, capabilities, pure, sink, grants };
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
  await Promise.all(context.background.splice(0)).catch(() => undefined);
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
  output: OutputBuffer,
  startedAt: number,
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
        );
      case "memory":
        return result(
          "resource-limit",
          output,
          `killed: ${end.detail}. Raise the limit with --memory-limit-mb <MiB> (config "memoryLimitMb", now ${config.memoryLimitMb}) ` +
            "or process the data in smaller pieces.",
          startedAt,
        );
      case "cancelled":
        return result("threw", output, `cancelled: ${end.detail}`, startedAt);
      case "protocol":
      case "finished":
        return result("protocol-error", output, `protocol violation: ${end.detail}; the evaluation was ended`, startedAt);
    }
  }
  const heapExhausted = /out of memory|Reached heap limit/i.test(end.stderr) || end.signal === "SIGTRAP" || end.signal === "SIGABRT";
  if (heapExhausted) {
    return result(
      "resource-limit",
      output,
      `killed: the script ran out of memory (V8 heap limit ${config.memoryLimitMb} MiB). Raise it with --memory-limit-mb <MiB> ` +
        '(config "memoryLimitMb") or process the data in smaller pieces.',
      startedAt,
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
    );
  }
  const how = end.signal ? `signal ${end.signal}` : `exit code ${end.code}`;
  return result(
    "protocol-error",
    output,
    `protocol violation: the sandbox ended (${how}) without reporting a result; the script must not exit the runtime or write to stdout itself`,
    startedAt,
  );
}
