// The reference monitor: every request from the sandbox is one Action, and this is the one
// place that decides and carries out each. The switch is exhaustive; a new Action variant
// without a decision here does not compile.

import { type Action, type ActionResults, CLASSIFIED_MASK, isSuccessStatus, type PrintPart, type RefusalError } from "../library/protocol.js";
import { type ClassifiedStore, plaintextOf } from "./classified/store.js";
import type { ExecExecutor } from "./exec/executor.js";
import { chatCompletion, type LlmConfig } from "./llm/chat-client.js";
import { NetworkExecutor } from "./net/executor.js";
import type { FileSystemExecutor } from "./fs/file-system.js";
import type { OutputBuffer } from "./output.js";
import type { HostSecrets } from "./host-secrets.js";
import type { SinkWriter } from "./secure-sink.js";
import { EffectFailure, PolicyDenial, ranOutOfTimeOf } from "./refusals.js";
import type { RanOutOfTime } from "./audit/events.js";
import { MapRequestBudget } from "./classified/budget.js";
import type { ConcurrencyLimit } from "./concurrency-limit.js";
import { type BeforeEffect, NOTHING_TO_LOG } from "./before-effect.js";

/** `ranOutOfTime`: for the audit log only (never sent to the sandbox): the action ran out of time, against which limit. */
export type Decision<T = unknown> = { ok: true; value: T; ranOutOfTime?: RanOutOfTime } | Refusal;
export type Refusal = { ok: false; error: RefusalError; ranOutOfTime?: RanOutOfTime };

/**
 * Where readInput() gets its data: piped stdin, or nothing, with the reason. `read` gives up
 * (rejects) once `signal` is aborted: a producer that never closes the pipe must not keep an
 * evaluation that has been killed waiting.
 */
export type InputSource = { kind: "piped"; read: (signal: AbortSignal) => Promise<string> } | { kind: "unavailable"; reason: string };

export interface EvaluationContext {
  output: OutputBuffer;
  input: InputSource;
  files: FileSystemExecutor;
  commands: ExecExecutor;
  network: NetworkExecutor;
  /** The operator's model for chat(); null when none is configured. */
  llm: LlmConfig | null;
  /** Aborted when the evaluation ends (a pending chat is cancelled). */
  lifetime: AbortSignal;
  /**
   * Aborted when the sandbox was killed (timeout, cancellation, memory), or when the work left
   * after a normal end outran the time limit: this evaluation's map/flatMap jobs stop, in a
   * session too, whose evaluator outlives the evaluation.
   */
  abandoned: AbortSignal;
  /**
   * Aborted when nothing can use an answer any more: the evaluation was abandoned, or its
   * sandbox ended without reporting. A question open for it is withdrawn.
   */
  unanswerable: AbortSignal;
  classified: ClassifiedStore;
  /** Classified chats being asked of the model, at most CLASSIFIED_CHATS_AT_ONCE at a time. */
  classifiedChats: ConcurrencyLimit;
  /** What this evaluation's map/flatMap requests have brought into the host (see MapRequestBudget). */
  mapRequests: MapRequestBudget;
  /** Where plaintext output goes (--secure-output), this evaluation's share; null when none is configured. */
  sink: SinkWriter | null;
  /**
   * Classified work that finishes after its request was answered (awaited at the end), while it
   * is pending: each removes itself once settled, so a loop of writeClassified calls leaves
   * nothing behind, and a classified read waits only for the writes still pending.
   */
  background: Set<Promise<unknown>>;
  /**
   * Settles once every value the classified writes so far wrote is settled (see MAP_SETTLE_MS in
   * classified/store.ts); null before the first: a classified read after a classified write is
   * settled after that, never when it was read.
   */
  classifiedWritesSettled: Promise<void> | null;
  /**
   * The last classified write asked for (in a session, by this snippet or an earlier one),
   * settling once it has landed: each write lands after the one before it, so the last write of
   * a file is what it keeps, whichever value took longer to compute (a session's next snippet
   * no longer waits for the last one's writes before it starts; see SessionState.pending).
   */
  lastClassifiedWrite: Promise<unknown>;
  /** The host's own secrets (the LLM key), scrubbed from whatever goes back to the script. */
  hostSecrets: HostSecrets;
  /** Set once the evaluation's own time limit has ended it: the actions under way then are logged as having run out of it. */
  ranOutOfTime: RanOutOfTime | null;
}

/**
 * Said once a run (counted after that) when a print holds a Classified value and no secure output
 * is set: its plaintext, and why a value could not be computed, went nowhere without a word. It
 * depends on the print call alone (which values it was given are Classified is the script's own
 * knowledge), never on a value's plaintext, whether it is computed yet, or whether it could be:
 * it is given as the print is decided, before anything waits for a value.
 */
export const CLASSIFIED_PRINTED_NOWHERE =
  "a Classified value was printed (shown as Classified(***)) and its plaintext went nowhere: no secure output is set. " +
  "Give --secure-output FILE (config libraryConfig.secureOutput) to have tacit append what is printed there with the " +
  "plaintext in place, and why any classified value could not be computed";

/** The agent sees classified parts masked; the sink, if any, gets the whole text in plaintext. */
function print(parts: readonly PrintPart[], context: EvaluationContext): void {
  const values = parts.map((part) => (typeof part === "string" ? part : context.classified.get(part.classified)));
  if (context.sink === null && values.some((value) => typeof value !== "string")) context.output.warn(CLASSIFIED_PRINTED_NOWHERE);
  context.output.write(parts.map((part) => (typeof part === "string" ? part : CLASSIFIED_MASK)).join(""));
  // Each value is read as text only when the sink gets to it (see SinkQuota.appendParts).
  context.sink?.appendParts(values);
}

function granted<K extends Action["kind"]>(_kind: K, value: ActionResults[K]): Decision<ActionResults[K]> {
  return { ok: true, value };
}

export function refused(name: RefusalError["name"], message: string): Refusal {
  return { ok: false, error: { name, message } };
}

function requireLlm(context: EvaluationContext): LlmConfig {
  if (context.llm) return context.llm;
  throw new EffectFailure(
    "chat: no model is configured; the operator sets one with --llm-base-url, --llm-api-key and --llm-model (config libraryConfig.llm)",
  );
}

function assertNever(action: never): never {
  throw new Error(`tacit: no policy for action ${JSON.stringify(action)}`);
}

/** The refusal an executor's error stands for; anything else is the host's own failure (rethrown). */
export function refusalOf(error: unknown): Refusal {
  if (error instanceof PolicyDenial) return refused("SecurityError", error.message);
  if (error instanceof EffectFailure) {
    const refusal = refused("Error", error.message);
    return error.ranOutOfTime === null ? refusal : { ...refusal, ranOutOfTime: error.ranOutOfTime };
  }
  throw error;
}

/**
 * Decides one action: carries it out, or refuses it with a message for the agent. `beforeEffect`:
 * told, for an action with an effect, once it is decided and before the effect (see BeforeEffect).
 */
export async function dispatch(action: Action, context: EvaluationContext, beforeEffect: BeforeEffect = NOTHING_TO_LOG): Promise<Decision> {
  try {
    const decision = decide(action, context, beforeEffect);
    return decision instanceof Promise ? await decision : decision;
  } catch (error) {
    return refusalOf(error);
  }
}

/** The actions that wait for something (input, a search, a model, a server, a command): decided by decideWaiting. */
type WaitingAction = Extract<Action, { kind: "ReadInput" | "FsList" | "FsFind" | "FsGrep" | "FsGrepRecursive" | "Chat" | "HttpRequest" | "HttpRequestClassified" | "Exec" }>;

/**
 * Decides an action there and then, or (a WaitingAction) hands it to decideWaiting. Most actions a
 * script sends (a read, a stat, a print) are answered at once: as one async function, each paid
 * for a promise of its own and a turn of the microtask queue before dispatch had its answer, a
 * share of every small read's host time.
 */
function decide(action: Action, context: EvaluationContext, beforeEffect: BeforeEffect): Decision | Promise<Decision> {
  const { files } = context;
  switch (action.kind) {
    case "Print":
      print(action.parts, context);
      return granted(action.kind, null);
    case "Classify":
      return granted(action.kind, context.classified.classify(action.value));
    case "ClassifiedMap":
      context.classified.reserve(action.flat ? "flatMap" : "map");
      context.mapRequests.charge(action.flat ? "flatMap" : "map", action.source, action.captures);
      return granted(action.kind, context.classified.map(action.handle, action.source, action.captures, action.flat, context.abandoned));
    // No answer to the script waits for a classified value: how long one takes to compute, or
    // whether it could be, would otherwise show in the time a later call takes. A classified
    // read of a file a classified write still pending will fill is read after the writes
    // still pending, for the store only; any other is read at once, and refused if it is not
    // UTF-8 (see FileSystemExecutor.openClassifiedRead).
    case "FsReadClassified": {
      context.classified.reserve(`readClassified(${action.path})`);
      const read = files.openClassifiedRead(action.scope, action.path);
      const pendingWrites = Promise.all([...context.background]);
      // Read once the writes before it have landed, but, after any classified write, settled on
      // the schedule of the values written: read as soon as they landed, a request sending it
      // waited for the functions that computed them (a write still pending, its value late, too).
      const writes = context.classifiedWritesSettled;
      return granted(action.kind, context.classified.later(pendingWrites.then(read), `readClassified(${action.path})`, writes && { after: writes }));
    }
    case "FsWriteClassified": {
      const value = context.classified.get(action.handle);
      // The file is created or emptied now and filled once the value is computed; a value
      // that failed leaves it empty (the failure went to the secure sink), which looks, to
      // agent code, like any other.
      const fill = files.openClassifiedWrite(action.scope, action.path, beforeEffect);
      // A classified read after this write is settled after the value written is (see FsReadClassified).
      const due = context.classified.dueOf(action.handle);
      const before = context.classifiedWritesSettled;
      context.classifiedWritesSettled = before === null ? due : Promise.all([before, due]).then(() => undefined);
      const write: Promise<unknown> = Promise.all([value, context.lastClassifiedWrite])
        .then(([result]) => fill(result.ok ? plaintextOf(result) : null))
        .catch((error: unknown) => context.sink?.append(`[tacit] writeClassified(${action.path}) failed: ${String(error)}\n`))
        .finally(() => context.background.delete(write));
      context.background.add(write);
      context.lastClassifiedWrite = write;
      return granted(action.kind, null);
    }
    case "FsOpenScope":
      return granted(action.kind, files.openScope(action.root));
    case "CloseScope":
      files.closeScope(action.scope);
      return granted(action.kind, null);
    case "FsStat":
      return granted(action.kind, files.stat(action.scope, action.path));
    case "FsSize":
      return granted(action.kind, files.size(action.scope, action.path));
    case "FsRead": {
      const content = files.read(action.scope, action.path, action.as);
      return granted(action.kind, action.as === "bytes" ? context.hostSecrets.scrubBase64(content) : content);
    }
    case "FsReadChunk": {
      const { chunk, before, after, eof } = files.readChunk(action.scope, action.path, action.offset, context.hostSecrets.margin);
      return granted(action.kind, { base64: context.hostSecrets.scrubChunk(chunk, before, after).toString("base64"), eof });
    }
    case "FsWrite":
      files.write(action.scope, action.path, action.content, action.append, beforeEffect);
      return granted(action.kind, null);
    case "FsDelete":
      files.delete(action.scope, action.path, beforeEffect);
      return granted(action.kind, null);
    case "FsMkdir":
      files.mkdir(action.scope, action.path, beforeEffect);
      return granted(action.kind, null);
    case "ChatClassified": {
      const llm = requireLlm(context);
      // Asked once the value is computed, after the reply: decided now.
      beforeEffect();
      const asText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));
      // Asked a few at a time (CLASSIFIED_CHATS_AT_ONCE); one still waiting when the evaluation ends is never asked.
      // The answer comes masked of the key as a plain one does (chatCompletion): it never reaches the
      // sandbox, whose replies are scrubbed, yet a script can send it on (a classified body, a secret header).
      const ask = (plaintext: unknown): Promise<string> =>
        context.classifiedChats.run(
          () => chatCompletion(llm, asText(plaintext), context.lifetime, context.hostSecrets),
          context.lifetime,
          () => new EffectFailure("chat: the evaluation ended before the model was asked"),
        );
      return granted(action.kind, context.classified.derive(action.handle, ask, "chat"));
    }
    case "NetOpenScope":
      return granted(action.kind, context.network.openScope(action.hosts));
    case "ExecOpenScope":
      return granted(action.kind, context.commands.openScope(action.commands));
    case "ReadInput":
    case "FsList":
    case "FsFind":
    case "FsGrep":
    case "FsGrepRecursive":
    case "Chat":
    case "HttpRequest":
    case "HttpRequestClassified":
    case "Exec":
      return decideWaiting(action, context, beforeEffect);
    default:
      return assertNever(action);
  }
}

/** A WaitingAction decided (see decide). */
async function decideWaiting(action: WaitingAction, context: EvaluationContext, beforeEffect: BeforeEffect): Promise<Decision> {
  const { files } = context;
  switch (action.kind) {
    case "ReadInput":
      if (context.input.kind === "unavailable") return refused("Error", context.input.reason);
      try {
        return granted(action.kind, await context.input.read(context.lifetime));
      } catch (error) {
        // A SecurityError: standard input is a file the policy keeps from scripts (cli/commands.ts).
        return refused(error instanceof Error && error.name === "SecurityError" ? "SecurityError" : "Error", error instanceof Error ? error.message : String(error));
      }
    case "FsList":
      return granted(action.kind, await files.list(action.scope, action.path, action.recursive));
    case "FsFind":
      return granted(action.kind, await files.find(action.scope, action.path, action.glob));
    case "FsGrep":
      return granted(action.kind, await files.grepFile(action.scope, action.path, action.pattern));
    case "FsGrepRecursive":
      return granted(action.kind, await files.grepRecursive(action.scope, action.path, action.pattern, action.glob));
    case "Chat": {
      const llm = requireLlm(context);
      beforeEffect();
      return granted(action.kind, await chatCompletion(llm, action.message, context.lifetime, context.hostSecrets));
    }
    case "HttpRequest":
      return granted(action.kind, NetworkExecutor.visible(await context.network.request(action, beforeEffect), context.hostSecrets));
    case "HttpRequestClassified": {
      context.classified.reserve("httpPostClassified");
      const answer = await context.network.request(action, beforeEffect);
      // How the server answered is not the script's to see: a map can make the body valid or not
      // depending on a bit of the secret, and an API that checks it answers 200 or 400 (or fails).
      // An answer that is no success, or that failed once its connection was up, is classified as any other, and
      // said in the secure output, for the person.
      if (answer.failedAfterSending !== null) {
        context.sink?.append(`[tacit] httpPostClassified: POST ${action.url}: ${answer.failedAfterSending}; its answer, classified as any other, is empty\n`);
      } else if (!isSuccessStatus(answer.status)) {
        const unfollowed = answer.unfollowedRedirect === null ? "" : ` (a redirect tacit did not follow: ${answer.unfollowedRedirect})`;
        context.sink?.append(`[tacit] httpPostClassified: POST ${action.url} answered ${answer.status}${unfollowed}: its answer, classified as any other, is not a success\n`);
      }
      return granted(action.kind, context.classified.hold(NetworkExecutor.classifiedText(answer), "httpPostClassified"));
    }
    case "Exec": {
      const result = await context.commands.exec(action.scope, action, beforeEffect);
      const ranOutOfTime = ranOutOfTimeOf(result);
      return ranOutOfTime === null ? granted(action.kind, result) : { ok: true, value: result, ranOutOfTime };
    }
    default:
      return assertNever(action);
  }
}
