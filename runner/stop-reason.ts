// Why an evaluation was cancelled, as its error and the logs say it: by its caller (an MCP
// client's cancellation, its session ended), or because tacit itself was stopped by a signal.
// The CLI aborts with a StoppedBySignal (cli/stop-signals.ts); any other abort reason, such as
// the reason an MCP client gave for its cancellation, is the caller's text and is not shown.

import { constants } from "node:os";
import { EXIT_CODES } from "./exit-codes.js";

export type StopSignal = "SIGINT" | "SIGTERM" | "SIGHUP" | "SIGQUIT";

export class StoppedBySignal {
  constructor(readonly signal: StopSignal) {}

  /** "tacit was stopped by SIGTERM". */
  get text(): string {
    return `tacit was stopped by ${this.signal}`;
  }

  /** 128 + the signal's number, what a process stopped by it exits with: 143 for SIGTERM. */
  get exitCode(): number {
    return 128 + constants.signals[this.signal];
  }
}

/** Why an evaluation whose signal was aborted with `reason` was cancelled. */
export function cancelledBecause(reason: unknown): string {
  return reason instanceof StoppedBySignal ? reason.text : "the evaluation was cancelled by its caller";
}

/**
 * The exit code of an evaluation cancelled with `reason`: a signal's (tacit run exits with it,
 * and its audit log's evaluation-ended and its --json say the same), else a caller's cancellation's.
 */
export function cancelledExitCode(reason: unknown): number {
  return reason instanceof StoppedBySignal ? reason.exitCode : EXIT_CODES.cancelled;
}
