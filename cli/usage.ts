// What the CLI modules share: the flags every script command takes, and usage errors.

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
  /** --yes: answer every approval yes for this run. */
  yes?: boolean;
}

/** A mistake in how tacit was invoked: exit code 2, message on stderr. */
export class UsageError extends Error {
  override name = "UsageError";
}
