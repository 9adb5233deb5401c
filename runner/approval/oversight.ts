// Builds what watches over evaluations for one run or server: the tier policy, who is asked,
// remembered approvals, and the audit log (opened only when configured).

import { ConfigError, type RunnerConfig } from "../config.js";
import { digestOf } from "../audit/digest.js";
import { secureOutputClash } from "../audit/secure-output-clash.js";
import { type Asker, noOneToAsk, yesToAll } from "./askers.js";
import type { Oversight } from "./gate.js";
import { TierPolicy } from "./policy.js";
import { ApprovalStore } from "./store.js";

/** The configuration a run's decisions depend on, without secrets (the LLM key) or cosmetics. */
function policyView(config: RunnerConfig): unknown {
  const { llm, ...library } = config.library;
  return {
    executionTimeoutMs: config.executionTimeoutMs,
    memoryLimitMb: config.memoryLimitMb,
    typeCheck: config.typeCheck,
    policy: config.policy,
    assumeYes: config.assumeYes,
    library: { ...library, llm: llm ? { baseUrl: llm.baseUrl, model: llm.model } : null },
  };
}

/** The policy, who is asked (everyone at once with --yes) and remembered approvals, opened on first need. */
function oversightOf(config: RunnerConfig, cwd: string, asker: Asker): Omit<Oversight, "audit" | "policyDigest"> {
  let store: ApprovalStore | undefined;
  return {
    policy: new TierPolicy(config.policy, cwd),
    asker: config.assumeYes ? yesToAll : asker,
    approvals: () => (store ??= new ApprovalStore()),
  };
}

export async function createOversight(config: RunnerConfig, cwd: string, asker: Asker): Promise<Oversight> {
  // Before the log opens: a secure output that is the log (or another one) would put plaintext in it.
  const clash = secureOutputClash(config.library.secureOutput, config.auditLog);
  if (clash !== null) throw new ConfigError(clash);
  let audit: Oversight["audit"] = null;
  if (config.auditLog) {
    const { AuditLog } = await import("../audit/log.js");
    audit = AuditLog.open(config.auditLog);
  }
  // The policy's digest is for the log's events only.
  return { ...oversightOf(config, cwd, asker), audit, policyDigest: audit ? digestOf(policyView(config)) : "" };
}

/** For callers that bring no oversight (the runner's API in tests): the policy, no log, no one to ask. */
export function unattendedOversight(config: RunnerConfig, cwd: string): Oversight {
  const nobody = noOneToAsk("this evaluation has no one to ask (it was started without a terminal or MCP client)");
  return { ...oversightOf(config, cwd, nobody), audit: null, policyDigest: "" };
}
