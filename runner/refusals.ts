// The two ways the host says no to a request. Executors throw these; the monitor turns them
// into refusals the sandbox rethrows to the agent's code. Messages say what was refused, why,
// and what to do instead.

import type { RanOutOfTime } from "./audit/events.js";

/** A policy decision: the agent's code sees a SecurityError. */
export class PolicyDenial extends Error {
  override name = "PolicyDenial";
}

/**
 * The effect was allowed but failed (no such file, not a directory, …): a plain Error.
 * `ranOutOfTime`: it failed for lack of time, against which limit (for the audit log only; the
 * script is told by the message).
 */
export class EffectFailure extends Error {
  override name = "EffectFailure";
  constructor(
    message: string,
    readonly ranOutOfTime: RanOutOfTime | null = null,
  ) {
    super(message);
  }
}

/**
 * Answers that ran out of time without failing (a command killed at its own timeoutMs answers with
 * exit code 124): marked here, by the executor that gave them, for the audit log. Kept beside the
 * answer, not in it: what is sent to the sandbox, and digested, stays the answer alone.
 */
const ranOutOfTimeAnswers = new WeakMap<object, RanOutOfTime>();

export function markRanOutOfTime<T extends object>(answer: T, ranOutOfTime: RanOutOfTime): T {
  ranOutOfTimeAnswers.set(answer, ranOutOfTime);
  return answer;
}

/** How `answer` ran out of time, if it was marked so (markRanOutOfTime). */
export function ranOutOfTimeOf(answer: unknown): RanOutOfTime | null {
  return typeof answer === "object" && answer !== null ? (ranOutOfTimeAnswers.get(answer) ?? null) : null;
}
