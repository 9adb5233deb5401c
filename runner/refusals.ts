// The two ways the host says no to a request. Executors throw these; the monitor turns them
// into refusals the sandbox rethrows to the agent's code. Messages say what was refused, why,
// and what to do instead.

/** A policy decision: the agent's code sees a SecurityError. */
export class PolicyDenial extends Error {
  override name = "PolicyDenial";
}

/** The effect was allowed but failed (no such file, not a directory, …): a plain Error. */
export class EffectFailure extends Error {
  override name = "EffectFailure";
}
