// `tacit approvals list|grant|revoke`: the remembered answers to approve-once questions.
// A pattern holds text agent code chose (a path), so it is shown through printable(): a yes
// to a file name holding "\x1b[2K\r…" otherwise wiped its own line off the operator's
// terminal and put a made-up one there. revoke takes a pattern as list shows it, too.

import { realpathSync } from "node:fs";
import path from "node:path";
import { shownPattern } from "../runner/approval/shown-text.js";
import { ApprovalStore } from "../runner/approval/store.js";
import { RULE_ACTIONS } from "../runner/approval/policy.js";
import { closestName } from "../runner/closest-name.js";
import { printable } from "../runner/printable.js";
import { writeJsonShown } from "./terminal-output.js";
import { UsageError } from "./usage.js";

function store(): ApprovalStore {
  return new ApprovalStore();
}

/** The directory approvals hold in: --in, or the working directory, as a real path. */
export function approvalDirectory(given: string | undefined): string {
  const absolute = path.resolve(given ?? process.cwd());
  try {
    return realpathSync.native(absolute);
  } catch {
    throw new UsageError(`${absolute} is not an existing directory`);
  }
}

export function listApprovals(json: boolean): number {
  const approvalStore = store();
  const approvals = approvalStore.all();
  const now = Date.now();
  if (json) {
    const shown = approvals.map((a) => {
      const untrusted = approvalStore.untrusted(a);
      return { ...a, expired: Date.parse(a.expiresAt) <= now, ...(untrusted === null ? {} : { notUsed: untrusted }) };
    });
    writeJsonShown(process.stdout, JSON.stringify(shown) + "\n");
    return 0;
  }
  if (approvals.length === 0) {
    process.stderr.write(`no remembered approvals (${approvalStore.file})\n`);
    return 0;
  }
  for (const approval of approvals) {
    const untrusted = approvalStore.untrusted(approval);
    // Not written by tacit: not used, and said so with the fix.
    const state =
      untrusted !== null ? `not used: ${untrusted}; tacit never writes such an entry (revoke it, and approve again if you meant to)`
      : Date.parse(approval.expiresAt) <= now ? "expired"
      : `until ${approval.expiresAt}`;
    process.stdout.write(`${shownPattern(approval.pattern)}\tin ${shownPattern(approval.directory)}\t${state}\tgranted ${approval.grantedAt} via ${printable(approval.via)}\n`);
  }
  return 0;
}

/** The first words of the patterns tacit asks about: an action's kind, or "extend exec" / "extend net" / "extend fs.open". */
const PATTERN_KINDS: readonly string[] = [...RULE_ACTIONS, "extend exec", "extend net", "extend fs.open"];

/**
 * Why `root` is no root tacit asks to extend the allowlists to, or null. The gate names the root
 * as it really leads (absolute, links resolved: see ApprovalGate.extensionsFor), and a remembered
 * yes matches that text exactly: any other spelling was remembered and never answered anything.
 */
function extendedRootProblem(root: string): string | null {
  if (!path.isAbsolute(root)) return `"${root}" is not an absolute path: name the root by its absolute real path, as the refusal does`;
  let real: string;
  try {
    real = realpathSync.native(root);
  } catch {
    return `${root} does not exist: tacit asks about a root by where it really leads, which it can tell only once it exists; make it first, then grant it`;
  }
  if (real !== root) return `tacit asks about this root by where it really leads (links resolved, no "." or ".." or a trailing "/"): grant "extend fs.open ${real}"`;
  return null;
}

/**
 * Why `pattern` is none that tacit asks about (as describeAction and the gate make them: "fs.write
 * /p", "exec git push *", "net POST host", "chat", "extend exec git"), or null. Any other text was
 * remembered as granted and never matched: the unattended run it was meant for was refused.
 */
function patternProblem(pattern: string): string | null {
  if (pattern === "" || pattern.trim() !== pattern) return "it is empty or begins or ends with a space";
  const words = pattern.split(" ");
  const kind = words[0] === "extend" ? words.slice(0, 2).join(" ") : words[0]!;
  if (!PATTERN_KINDS.includes(kind)) {
    const meant = closestName(kind, PATTERN_KINDS);
    return `it does not begin with a kind of action tacit asks about (${PATTERN_KINDS.join(", ")})${meant === null ? "" : `; did you mean "${meant}"?`}`;
  }
  if (kind !== "chat" && words.length < (kind.startsWith("extend ") ? 3 : 2)) return `it names no ${kind === "exec" || kind === "extend exec" ? "command" : kind.includes("net") ? "request" : "path"} after "${kind}"`;
  // A path may hold spaces: the root is all that follows the kind.
  if (kind === "extend fs.open") return extendedRootProblem(pattern.slice("extend fs.open ".length));
  return null;
}

export function grantApprovals(patterns: readonly string[], directory: string): number {
  // All are checked before any is remembered: a typo in one grants none.
  for (const pattern of patterns) {
    const problem = patternProblem(pattern);
    if (problem !== null) {
      throw new UsageError(
        `"${printable(pattern)}" is not a pattern tacit asks about: ${problem}${problem.endsWith("?") ? "" : "."} Copy it exactly from the refusal message, which prints it in full`,
      );
    }
  }
  const approvals = store();
  for (const pattern of patterns) {
    const approval = approvals.remember(pattern, "tacit approvals grant", directory);
    process.stderr.write(`approved ${shownPattern(approval.pattern)} in ${shownPattern(approval.directory)} until ${approval.expiresAt}\n`);
  }
  return 0;
}

export function revokeApprovals(patterns: readonly string[], all: boolean, directory: string | null): number {
  const approvals = store();
  if (all) {
    const removed = approvals.revokeAll();
    process.stderr.write(`revoked ${removed.length} approval${removed.length === 1 ? "" : "s"}\n`);
    return 0;
  }
  if (patterns.length === 0) throw new UsageError("name the patterns to revoke (as tacit approvals list prints them), or pass --all");
  // A pattern named as list prints it (escaped) stands for the stored pattern it was printed from; as an
  // earlier tacit printed it (a backslash as itself), for each stored pattern it could have been printed from.
  const named = (a: { pattern: string }, pattern: string) => a.pattern === pattern || shownPattern(a.pattern) === pattern || printable(a.pattern) === pattern;
  const stored = approvals.all().filter((a) => patterns.some((pattern) => named(a, pattern))).map((a) => a.pattern);
  const removed = approvals.revoke([...new Set([...patterns, ...stored])], directory);
  for (const approval of removed) process.stderr.write(`revoked ${shownPattern(approval.pattern)} in ${shownPattern(approval.directory)}\n`);
  const missing = patterns.filter((pattern) => !removed.some((a) => named(a, pattern)));
  if (missing.length > 0) {
    process.stderr.write(`no remembered approval for: ${missing.map(shownPattern).join(", ")} (see tacit approvals list)\n`);
    return 1;
  }
  return 0;
}
