// Remembered approvals: a person's "yes" to an approve-once pattern, kept for 30 days in an
// owner-only file in tacit's home, listable and revocable (`tacit approvals list|revoke`).
// A yes holds in the working directory it was given in: `exec git push *` approved in one
// project is not approved in another.
// Written whole to a temporary file and renamed, so a reader never sees half a file; every
// change reads and writes it under a lock file, so a revoke and a yes remembered by another
// tacit at the same moment cannot undo each other (the later write used to put back what the
// earlier one had removed).

import path from "node:path";
import { z } from "zod";
import { ownFileProblemText, readOwnFile, replaceOwnFile } from "../audit/own-file.js";
import { FileLock } from "../file-lock.js";
import { onFirstUse } from "../on-first-use.js";
import { ensureTacitHome, tacitHome } from "../tacit-home.js";

export const APPROVAL_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
/** How long a change waits for another process's change to the file to finish. */
const LOCK_WAIT_MS = 5000;

function buildApprovalsFileSchema() {
  const ApprovalSchema = z
    .object({
      pattern: z.string().min(1),
      /** The working directory (real path) the approval holds in. */
      directory: z.string().min(1),
      grantedAt: z.string().datetime(),
      expiresAt: z.string().datetime(),
      /** Who said yes: "terminal", "elicitation" or "tacit approvals grant". */
      via: z.string(),
    })
    .strict();
  return z.object({ version: z.literal(1), approvals: z.array(ApprovalSchema) }).strict();
}
/** Built on first use: most runs never read the approvals file. */
const approvalsFileSchema = onFirstUse(buildApprovalsFileSchema);

export type Approval = z.infer<ReturnType<typeof buildApprovalsFileSchema>>["approvals"][number];

export class ApprovalStoreError extends Error {
  override name = "ApprovalStoreError";
}

export function defaultApprovalsFile(): string {
  return path.join(tacitHome(), "approvals.json");
}

export class ApprovalStore {
  constructor(
    readonly file: string = defaultApprovalsFile(),
    private readonly now: () => number = Date.now,
  ) {}

  /** Every approval on file, expired ones included (list shows them as expired). */
  all(): Approval[] {
    // Read as the key and the anchors are: a regular file (no link followed), the user's, that
    // nobody else can write, in directories nobody else can write, up to tacit's home. Another
    // user who could plant this file (or a link to one of theirs) would grant a script what a
    // person is asked about. Anything wrong: no approval is used (the caller fails closed).
    const text = readOwnFile(
      this.file,
      0o022,
      (problem) => new ApprovalStoreError(ownFileProblemText(`the approvals file ${this.file}`, this.file, problem, "its approvals are not trusted")),
      tacitHome(),
    );
    if (text === null) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ApprovalStoreError(`${this.file} is not valid JSON; fix or remove it (tacit approvals revoke --all rewrites it)`);
    }
    const result = approvalsFileSchema().safeParse(parsed);
    if (!result.success) {
      throw new ApprovalStoreError(`${this.file} is not an approvals file (${result.error.issues[0]?.message ?? "bad shape"}); fix or remove it`);
    }
    return result.data.approvals;
  }

  isLive(approval: Approval): boolean {
    return Date.parse(approval.expiresAt) > this.now() && this.untrusted(approval) === null;
  }

  /**
   * Why an entry tacit could not have written is not used, or null: tacit remembers a yes for
   * APPROVAL_LIFETIME_MS from when it was given, never longer and never from a time to come. An
   * entry granted "until 2100" (written by hand, or by a command with the user's authority) went
   * on granting what it names for 75 years, past every 30-day expiry the person was told of.
   */
  untrusted(approval: Approval): string | null {
    const granted = Date.parse(approval.grantedAt);
    if (granted > this.now()) return `granted at a time still to come (${approval.grantedAt})`;
    if (Date.parse(approval.expiresAt) - granted > APPROVAL_LIFETIME_MS) return "it would last longer than the 30 days tacit remembers a yes for";
    return null;
  }

  /** The live approval for a pattern in a directory, if a person gave one. */
  find(pattern: string, directory: string): Approval | null {
    return this.all().find((approval) => approval.pattern === pattern && approval.directory === directory && this.isLive(approval)) ?? null;
  }

  remember(pattern: string, via: string, directory: string): Approval {
    const now = this.now();
    const approval: Approval = {
      pattern,
      directory,
      grantedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + APPROVAL_LIFETIME_MS).toISOString(),
      via,
    };
    // Expired entries are dropped on every write; a pattern has at most one entry.
    this.locked(() => this.save([...this.all().filter((a) => !(a.pattern === pattern && a.directory === directory) && this.isLive(a)), approval]));
    return approval;
  }

  /** Removes the approvals whose pattern is one of `patterns` (in `directory`, or in any); returns those removed. */
  revoke(patterns: readonly string[], directory: string | null = null): Approval[] {
    return this.locked(() => {
      const all = this.all();
      const matches = (a: Approval) => patterns.includes(a.pattern) && (directory === null || a.directory === directory);
      const removed = all.filter(matches);
      if (removed.length > 0) this.save(all.filter((a) => !matches(a)));
      return removed;
    });
  }

  revokeAll(): Approval[] {
    return this.locked(() => {
      let all: Approval[] = [];
      try {
        all = this.all();
      } catch {
        // An unreadable file is replaced by an empty one.
      }
      this.save([]);
      return all;
    });
  }

  /** Runs a read-modify-write of the file holding its lock (FILE.lock). */
  private locked<T>(change: () => T): T {
    if (this.file === defaultApprovalsFile()) ensureTacitHome();
    const lockFile = `${this.file}.lock`;
    let attempt;
    try {
      attempt = FileLock.acquireWaiting(lockFile, LOCK_WAIT_MS);
    } catch (error) {
      throw new ApprovalStoreError(`cannot create the lock file ${lockFile} for ${this.file}: ${(error as Error).message}`);
    }
    if (!attempt.ok) {
      const holder = attempt.heldBy === null ? "other processes keep taking it" : `process ${attempt.heldBy} holds it`;
      throw new ApprovalStoreError(
        `${this.file} is being changed by another process (lock file ${lockFile}: ${holder}); nothing was changed. ` +
          `Try again; if ${attempt.heldBy === null ? "this persists" : `process ${attempt.heldBy} is not a tacit`}, delete ${lockFile}.`,
      );
    }
    try {
      return change();
    } finally {
      attempt.lock.release();
    }
  }

  private save(approvals: Approval[]): void {
    replaceOwnFile(this.file, JSON.stringify({ version: 1, approvals }, null, 2) + "\n");
  }
}
