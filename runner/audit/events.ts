// The audit log's vocabulary: one typed event per line. Events carry kinds, canonical
// patterns, decisions and digests — never classified plaintext or secret header values
// (a digest of a short secret could be brute-forced, so not even digests of those: results
// are digested as the sandbox saw them, where classified values are opaque handles).

import { canonicalJson } from "./digest.js";

/** How much a person is involved before an action runs; decided by the host's policy. */
export type Tier = "allow" | "approve-once" | "always-ask";

/**
 * The time limit an action ran out of (see RanOutOfTime): a command's own timeoutMs (it was killed,
 * exit code 124), the HTTP request timeout (libraryConfig.networkTimeoutMs), the model's answer
 * timeout, or the evaluation's own limit (executionTimeoutMs), reached while the action was under
 * way (the sandbox was killed, and the action stopped where it could be: a command killed, a
 * request aborted). A fixed vocabulary: no text of the script's or the host's rides along.
 */
export type TimeLimit = "command-timeout" | "http-timeout" | "chat-timeout" | "evaluation-time-limit";

/** An action that ran out of time: which limit, and how long it was, in milliseconds. */
export interface RanOutOfTime {
  limit: TimeLimit;
  ms: number;
}

/**
 * How far an HTTP request got (its last hop's, when it followed redirects: each hop before it was
 * answered with a redirect): "not-sent", no connection to the server was made (refused before
 * sending, or cancelled before it connected), so the server got none of it; "connected", the
 * connection was up and bytes of the request may have reached the server, not all of it was
 * written; "sent", the whole request was written and no answer came (cancelled, timed out, or
 * the connection failed while waiting); "answered", the server's answer began (its status line
 * and headers arrived). A cancelled POST or DELETE read "ok: false" in the log whether the server
 * had it or not. A fixed vocabulary: no text of the script's or the server's rides along.
 */
export type RequestProgress = "not-sent" | "connected" | "sent" | "answered";

/**
 * How far a command got: "not-started", no process of it was started (refused, not found, or its
 * confinement failed to set up); "started", it started and had not ended when its result was
 * logged; "killed", it started and tacit killed it before it exited (its
 * timeoutMs, the evaluation's time limit, or a cancellation: a signal to tacit, a cancelled MCP
 * call); "exited", it started and exited by itself (its exit code says how). A command killed
 * by a cancellation read "ok" in the log, as one that ran to its end. A fixed vocabulary.
 */
export type CommandProgress = "not-started" | "started" | "killed" | "exited";

/** An action's decision: allowed by policy, refused, or put to a person (with the answer). */
export type DecisionKind = "allow" | "deny" | "asked";

export type AuditEvent =
  | {
      type: "evaluation-started";
      evaluation: string;
      /** The REPL session the snippet belongs to; null for one-shot runs. */
      session: string | null;
      displayName: string;
      /** "sha256:<hex>" of the agent's code. */
      codeDigest: string;
      /** "sha256:<hex>" of the effective policy (secrets such as the LLM key left out). */
      policyDigest: string;
    }
  | {
      type: "action-requested";
      evaluation: string;
      /** 1, 2, … within the evaluation. */
      action: number;
      /** The protocol's Action kind, e.g. "FsWrite". */
      kind: string;
      /** The canonical pattern approvals are keyed by, e.g. "fs.delete /work/app/a.txt". */
      pattern: string;
      /** For a file action whose path leads elsewhere through a link: where it really leads (what was acted on). */
      realPath?: string;
      tier: Tier;
      /** For a command (Exec), what ran beyond its pattern's shape: see action-record.ts. */
      commandDigest?: string;
      commandLine?: string;
      commandWords?: string[];
      cwd?: string;
      input?: string | null;
      /** For an HTTP request, what was sent beyond its pattern's host: see action-record.ts. */
      url?: string;
      wholeUrl?: string;
      headers?: string;
      headersDigest?: string;
      secretHeaders?: string;
      body?: string | null;
      /** For a file write or a chat, the digest of what it writes or asks ("classified" for a classified value): see action-record.ts. */
      content?: string;
      /** For a file write that appends rather than replaces: see action-record.ts. */
      append?: true;
    }
  | {
      type: "decision";
      evaluation: string;
      action: number;
      decision: DecisionKind;
      /** For "asked": the person's answer. */
      answer: "yes" | "no" | null;
      /** How the decision was reached: "policy", "remembered", "terminal", "elicitation", "--yes", "no-one-to-ask", … */
      via: string;
      /** For a denial: the message the agent was given. */
      reason: string | null;
    }
  | {
      type: "action-result";
      evaluation: string;
      action: number;
      ok: boolean;
      /** "sha256:<hex>" of the reply as the sandbox received it. */
      digest: string;
      /** Its size in bytes (UTF-8 of its JSON form). */
      size: number;
      durationMs: number;
      /** For an HTTP request that followed redirects: each hop, "METHOD URL", as sent (see NetworkExecutor.redirectsOf). */
      redirects?: string[];
      /** For a command (Exec): how far it got (absent in logs of an earlier tacit; see CommandProgress). */
      commandProgress?: CommandProgress;
      /** For an HTTP request: how far it got (absent in logs of an earlier tacit; see RequestProgress). */
      requestProgress?: RequestProgress;
      /** For an action that ran out of time: how long its limit was (ms), and which limit (absent in logs of an earlier tacit). */
      timeLimitMs?: number;
      timedOut?: TimeLimit;
    }
  | {
      /** The prints carried out since the evaluation's previous event (see printed-output.ts). */
      type: "output";
      evaluation: string;
      prints: number;
      /** Bytes of the Print actions' JSON, one per line, as the sandbox sent them. */
      size: number;
      /** "sha256:<hex>" of those lines (classified parts are handles, never plaintext). */
      digest: string;
    }
  | {
      type: "evaluation-ended";
      evaluation: string;
      outcome: string;
      exitCode: number;
      durationMs: number;
    }
  | {
      /**
       * A request's redirect hop, as it is about to be sent ("METHOD URL", a secret the server echoed into it
       * redacted): each hop goes to a URL the server chose, and is on file before it goes out, as the
       * request's first was. The result's `redirects` lists them again, as before.
       */
      type: "request-redirected";
      evaluation: string;
      action: number;
      hop: string;
    }
  | { type: "session-started"; session: string }
  | { type: "session-ended"; session: string; reason: string };

type ActionResultEvent = Extract<AuditEvent, { type: "action-result" }>;

/** What only some actions' results say; null (none) where it does not apply, and then absent from the event. */
export interface ResultExtras {
  commandProgress: CommandProgress | null;
  /** Each hop as logged (already cut and scrubbed); null for a request that followed none, and for any other action. */
  redirects: string[] | null;
  requestProgress: RequestProgress | null;
  ranOutOfTime: RanOutOfTime | null;
}

/**
 * An "action-result" event with optional fields (see actionResultJson), as an object: its keys set
 * in sorted order, none by a spread, so that canonicalJson takes its flat fast path (unless it
 * lists redirects, an array). Conditional spreads made a result cost about 1.5 µs more to build
 * cold (as a 1,000-read run's code stays) than one literal.
 */
function actionResultEvent(
  action: number,
  digest: string,
  durationMs: number,
  evaluation: string,
  ok: boolean,
  size: number,
  extras: ResultExtras,
): ActionResultEvent {
  const { commandProgress, redirects, requestProgress, ranOutOfTime } = extras;
  const event: Partial<ActionResultEvent> = { action };
  if (commandProgress !== null) event.commandProgress = commandProgress;
  event.digest = digest;
  event.durationMs = durationMs;
  event.evaluation = evaluation;
  event.ok = ok;
  if (redirects !== null) event.redirects = redirects;
  if (requestProgress !== null) event.requestProgress = requestProgress;
  event.size = size;
  if (ranOutOfTime !== null) {
    event.timeLimitMs = ranOutOfTime.ms;
    event.timedOut = ranOutOfTime.limit;
  }
  event.type = "action-result";
  // Every field the type requires was set above.
  return event as ActionResultEvent;
}

declare const eventJsonBrand: unique symbol;
/**
 * An event's canonical JSON (digest.ts's canonicalJson of it, exactly), made by one of the
 * encoders below for the events every action logs. The log takes it as the line's event text.
 */
export type EventJson = string & { readonly [eventJsonBrand]: true };

// The encoders below write the events a loop of reads logs by the thousand straight as text: built
// as objects and made canonical (sorted-key check, then JSON.stringify), a read's three events cost
// about 6.5 µs more cold (a 1,000-read run's code stays cold) than these templates, measured alone.
// Each lists its keys in sorted order, every string and number through JSON.stringify (so nothing a
// script named can end a string early), and equals canonicalJson of the same event
// (test/audit/event-json.test.ts checks each against it, hostile text included).

/** JSON.stringify of a string, a number (not finite: null, as canonicalJson writes it) or null: a value inside an encoder's template. */
const json = JSON.stringify as (value: string | number | null) => string;

/** An "action-requested" event with no record beside its pattern (see action-record.ts): a read, say. */
export function requestedJson(action: number, evaluation: string, kind: string, pattern: string, realPath: string | null, tier: Tier): EventJson {
  const head = `{"action":${json(action)},"evaluation":${json(evaluation)},"kind":${json(kind)},"pattern":${json(pattern)}`;
  const where = realPath === null ? "" : `,"realPath":${json(realPath)}`;
  return `${head}${where},"tier":${json(tier)},"type":"action-requested"}` as EventJson;
}

/** The policy's "decision" on an action no person answered for: "allow", or "deny" with the refusal (`reason`). */
export function policyDecisionJson(action: number, evaluation: string, reason: string | null): EventJson {
  const decision = reason === null ? "allow" : "deny";
  return `{"action":${json(action)},"answer":null,"decision":"${decision}","evaluation":${json(evaluation)},"reason":${json(reason)},"type":"decision","via":"policy"}` as EventJson;
}

/** An "action-result" event (see actionResultEvent); `extras` null: none applies (a file action, say). */
export function actionResultJson(
  action: number,
  digest: string,
  durationMs: number,
  evaluation: string,
  ok: boolean,
  size: number,
  extras: ResultExtras | null,
): EventJson {
  // A command's, a request's, or one that ran out of time: rarer, and slower to carry out than to log.
  if (extras !== null) return canonicalJson(actionResultEvent(action, digest, durationMs, evaluation, ok, size, extras)) as EventJson;
  return `{"action":${json(action)},"digest":${json(digest)},"durationMs":${json(durationMs)},"evaluation":${json(evaluation)},"ok":${ok},"size":${json(size)},"type":"action-result"}` as EventJson;
}
