// How an evaluation ended, and the process exit code each ending maps to (documented in
// `tacit --help` and the README).

export const EXIT_CODES = {
  ok: 0,
  threw: 1,
  /**
   * Stopped before its end: by its caller (an MCP client's cancellation, its session ended), or
   * tacit stopped by a signal, whose stop's exit code (128 + its number) it takes instead (see
   * StoppedBySignal.exitCode), as `tacit run` exits with it.
   */
  cancelled: 1,
  "protocol-error": 1,
  usage: 2,
  rejected: 3,
  timeout: 124,
  "resource-limit": 125,
  /** tacit could not write its audit log (--audit-log), so it ran nothing more: 2, as for any output of its own it cannot write. */
  "audit-log-failed": 2,
} as const;

export type Outcome = keyof typeof EXIT_CODES;
