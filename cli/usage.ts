// What the CLI modules share: the flags every script command takes, usage errors, and the
// objects --json prints.

import type { EvaluationResult } from "../runner/evaluate.js";

/** The object `tacit run --json` prints: one shape for a run and for a refusal before it (cli/main.ts). */
export type RunJsonResult = Pick<EvaluationResult, "stdout" | "error" | "exitCode" | "durationMs" | "truncated" | "outcome" | "warnings">;

/** The object `tacit check --json` prints: one shape for a check and for a refusal before it (cli/main.ts). */
export interface CheckJsonResult {
  ok: boolean;
  errors: string[];
  error: string | null;
  exitCode: number;
  durationMs: number;
}

export interface CommonFlags {
  config?: string;
  check: boolean;
  execTimeoutMs?: number;
  memoryLimitMb?: number;
  quiet?: boolean;
  json?: boolean;
  record?: string;
  /** serve: false with --no-session. */
  session?: boolean;
  /** serve: --sessions-memory-limit-mb. */
  sessionsMemoryLimitMb?: number;
  /** serve: --evaluators-memory-limit-mb. */
  evaluatorsMemoryLimitMb?: number;
  allowedRoots?: string[];
  classifiedPaths?: string[];
  secureOutput?: string;
  commandPermissions?: string[];
  networkPermissions?: string[];
  llmBaseUrl?: string;
  llmApiKey?: string;
  llmModel?: string;
  strict?: boolean;
  confineCommands?: boolean;
  auditLog?: string;
  requireNetworkNamespace?: boolean;
  /** false with --no-network-namespace (commander's default is true: see loadConfig). */
  networkNamespace?: boolean;
  /** --yes: answer every approval yes for this run. */
  yes?: boolean;
}

/** A mistake in how tacit was invoked: exit code 2, message on stderr. */
export class UsageError extends Error {
  override name = "UsageError";
}

/**
 * An audit log that could not be opened or written, as tacit says it on stderr, with why it exits
 * 2: the log is output of tacit's own, like standard output on a full disk (README: exit codes).
 */
export function auditLogFailure(message: string): string {
  // A message that ends a sentence of its own ("… to start a new log under this name.") was shown "name.. tacit exits 2".
  return `${message.replace(/\.$/, "")}. tacit exits 2: it could not write its audit log`;
}
