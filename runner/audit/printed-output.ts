// Printing, as the audit log records it. A print changes nothing outside tacit, no rule can
// raise it and it waits for no answer, so the log does not give each one the three lines of an
// action (requested, decided, result): a loop of prints made the log grow three lines per
// print, as fast as the pipe took them. The prints between two other events are one "output"
// event: how many, their size, and one digest over them all.

import { createHash, type Hash } from "node:crypto";
import type { PostedAction } from "../../library/protocol.js";
import type { AuditEvent } from "./events.js";

export class PrintedOutput {
  private prints = 0;
  private size = 0;
  private hash: Hash | null = null;

  /** A print carried out (as the sandbox sent it: classified parts are handles, never plaintext). */
  add(action: PostedAction): void {
    const line = `${JSON.stringify(action)}\n`;
    (this.hash ??= createHash("sha256")).update(line);
    this.prints++;
    this.size += Buffer.byteLength(line);
  }

  /** The event for the prints since the last one taken, or null if there were none. */
  take(evaluation: string): Extract<AuditEvent, { type: "output" }> | null {
    if (this.hash === null) return null;
    const event = { digest: `sha256:${this.hash.digest("hex")}`, evaluation, prints: this.prints, size: this.size, type: "output" as const };
    this.hash = null;
    this.prints = 0;
    this.size = 0;
    return event;
  }
}
