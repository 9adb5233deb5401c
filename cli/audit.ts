// `tacit audit verify|show|key`: the audit log's offline tools. Exit codes: 0 the log
// verified against a trusted key (or was shown whole), 1 problems found or no trusted key to
// verify against, 2 usage errors (unreadable file, bad key).

import { readFileSync } from "node:fs";
import { anchorForVerify } from "../runner/audit/anchor.js";
import { defaultKeyFile, loadOrCreateSigningKey, readPublicKey } from "../runner/audit/keys.js";
import { showAuditLog } from "../runner/audit/show.js";
import { verifyAuditLog, type VerifyReport } from "../runner/audit/verify.js";
import { printable } from "../runner/printable.js";
import { writeShown } from "./terminal-output.js";
import { UsageError } from "./usage.js";

export interface VerifyFlags {
  publicKey?: string;
  json?: boolean;
}

export function auditVerifyCommand(file: string, flags: VerifyFlags): number {
  const bytes = readLog(file);
  const text = bytes.toString("utf8");
  let trusted: string | null = null;
  let source: string;
  if (flags.publicKey !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(flags.publicKey)) {
      throw new UsageError(`--public-key takes an Ed25519 public key as 64 hex digits (as printed by \`tacit audit key\`), got "${flags.publicKey}"`);
    }
    trusted = flags.publicKey.toLowerCase();
    source = "the key given with --public-key";
  } else {
    // This machine's key, if it has one: the usual case is verifying a log written here.
    const own = keyErrorsAsUsage(() => readPublicKey());
    trusted = own?.publicKeyHex ?? null;
    source = own ? `this machine's key, from ${own.file} (pass --public-key to verify a log from elsewhere)` : "";
  }
  // This machine's record of the last head it signed in this file: what shows a cut after a head.
  const anchor = anchorForVerify(file, text, flags.publicKey === undefined ? null : trusted);
  const report = verifyAuditLog(text, trusted, anchor, bytes);
  if (trusted !== null) report.notes.unshift(`heads were checked against ${source}`);
  else if (report.trust === "first-head") report.notes.unshift(`there is no key in ${defaultKeyFile(false)} and none was given with --public-key`);

  // Heads checked only against the key in the log's own first head prove nothing about who
  // wrote it: a log rewritten and re-signed with anyone's key passes that. Not "verified".
  // Nor is a log in which nothing is signed (emptied, truncated to 0 bytes): no key vouches for it.
  const verified = report.ok && report.trust === "given" && report.validHeads > 0;
  if (flags.json) writeShown(process.stdout, JSON.stringify({ file, verified, ...report }, null, 2) + "\n");
  else writeShown(process.stdout, renderReport(file, report, verified));
  return verified ? 0 : 1;
}

function renderReport(file: string, report: VerifyReport, verified: boolean): string {
  const out: string[] = [];
  const summary =
    `${report.lines} lines, ${report.heads} signed heads (${report.validHeads} valid)` +
    (report.lastSignedLine === null ? ", no line signed" : `, signed through line ${report.lastSignedLine}`) +
    (report.unsignedTail > 0 ? `, ${report.unsignedTail} unsigned after the last head` : "");
  if (verified) out.push(`${file}: verified — ${summary}`);
  else if (report.ok && report.trust === "given") {
    out.push(`${file}: NOT verified — ${summary}; no line is signed, so no key vouches for it (an emptied log looks like this).`);
  } else if (report.ok) {
    out.push(
      `${file}: NOT verified — ${summary}; no trusted public key, so its heads were checked only against the key in its own ` +
        `first head, which anyone who rewrote the log could have signed with. Pass --public-key KEY (\`tacit audit key\` prints ` +
        `it on the machine that wrote the log).`,
    );
  } else {
    out.push(`${file}: ${report.problems.length} problem${report.problems.length === 1 ? "" : "s"} — ${summary}`);
    for (const problem of report.problems) out.push(`  line ${problem.line}: ${printable(problem.reason)}`);
  }
  for (const warning of report.warnings) out.push(`  warning, line ${warning.line}: ${printable(warning.reason)}`);
  for (const note of report.notes) out.push(`  note: ${printable(note)}`);
  return out.join("\n") + "\n";
}

export function auditShowCommand(file: string, flags: { json?: boolean }): number {
  const result = showAuditLog(readLog(file).toString("utf8"), flags.json ? "json" : "text");
  writeShown(process.stdout, result.output);
  if (result.unreadable.length > 0 && flags.json) {
    for (const { line, reason } of result.unreadable) process.stderr.write(`tacit: ${file}: line ${line} left out: ${printable(reason)}\n`);
  }
  return result.unreadable.length === 0 ? 0 : 1;
}

/** Prints the public key (stdout) and where the key lives (stderr), making it on first use. */
export function auditKeyCommand(): number {
  const key = keyErrorsAsUsage(() => loadOrCreateSigningKey());
  process.stdout.write(`${key.publicKeyHex}\n`);
  process.stderr.write(`tacit: the audit signing key ${key.created ? "was created in" : "is in"} ${key.file} (keep it owner-only; it signs audit log heads)\n`);
  return 0;
}

function readLog(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read the audit log ${file}: ${(error as Error).message}`);
  }
}

/** A key file that cannot be used (permissions, format, tacit home) is the operator's to fix: exit 2. */
function keyErrorsAsUsage<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof Error) throw new UsageError(error.message.replace(/^tacit: /, ""));
    throw error;
  }
}
