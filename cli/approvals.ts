// `tacit approvals list|grant|revoke`: the remembered answers to approve-once questions.

import { ApprovalStore } from "../runner/approval/store.js";
import { UsageError } from "./usage.js";

function store(): ApprovalStore {
  return new ApprovalStore();
}

export function listApprovals(json: boolean): number {
  const approvals = store().all();
  const now = Date.now();
  if (json) {
    process.stdout.write(JSON.stringify(approvals.map((a) => ({ ...a, expired: Date.parse(a.expiresAt) <= now }))) + "\n");
    return 0;
  }
  if (approvals.length === 0) {
    process.stderr.write(`no remembered approvals (${store().file})\n`);
    return 0;
  }
  for (const approval of approvals) {
    const state = Date.parse(approval.expiresAt) <= now ? "expired" : `until ${approval.expiresAt}`;
    process.stdout.write(`${approval.pattern}\t${state}\tgranted ${approval.grantedAt} via ${approval.via}\n`);
  }
  return 0;
}

export function grantApprovals(patterns: readonly string[]): number {
  const approvals = store();
  for (const pattern of patterns) {
    if (pattern.trim() !== pattern || pattern === "") throw new UsageError(`"${pattern}" is not a pattern: copy it exactly from the refusal message`);
    const approval = approvals.remember(pattern, "tacit approvals grant");
    process.stderr.write(`approved ${approval.pattern} until ${approval.expiresAt}\n`);
  }
  return 0;
}

export function revokeApprovals(patterns: readonly string[], all: boolean): number {
  const approvals = store();
  if (all) {
    const removed = approvals.revokeAll();
    process.stderr.write(`revoked ${removed.length} approval${removed.length === 1 ? "" : "s"}\n`);
    return 0;
  }
  if (patterns.length === 0) throw new UsageError("name the patterns to revoke (as tacit approvals list prints them), or pass --all");
  const removed = approvals.revoke(patterns);
  for (const approval of removed) process.stderr.write(`revoked ${approval.pattern}\n`);
  const missing = patterns.filter((pattern) => !removed.some((a) => a.pattern === pattern));
  if (missing.length > 0) {
    process.stderr.write(`no remembered approval for: ${missing.join(", ")} (see tacit approvals list)\n`);
    return 1;
  }
  return 0;
}
