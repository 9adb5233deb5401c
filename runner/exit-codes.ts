// How an evaluation ended, and the process exit code each ending maps to (documented in
// `tacit --help` and the README).

export const EXIT_CODES = {
  ok: 0,
  threw: 1,
  "protocol-error": 1,
  usage: 2,
  rejected: 3,
  timeout: 124,
  "resource-limit": 125,
} as const;

export type Outcome = keyof typeof EXIT_CODES;
