// `tacit audit verify|show|key`: the audit log's offline tools. Exit codes, of verify and show
// alike (show checks the log as verify does before it shows it): 0 the log verified against a
// trusted key, 1 problems found or no trusted key to verify against, 2 usage errors
// (unreadable file, bad key).

import { closeSync, constants, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { anchorForVerify, realLogPath } from "../runner/audit/anchor.js";
import { fileWriterLockFor, writerLockFor } from "../runner/audit/log.js";
import { FileLock } from "../runner/file-lock.js";
import { defaultKeyFile, loadOrCreateSigningKey, readPublicKey } from "../runner/audit/keys.js";
import { type ShowFormat, showAuditLogFile, UNVERIFIED_MARK } from "../runner/audit/show.js";
import { ReadingDigest } from "../runner/audit/log-lines.js";
import { reportReplacedWhileRead, verifyAuditLogFile, type VerifyReport } from "../runner/audit/verify.js";
import { printable } from "../runner/printable.js";
import { endAtOnceOnStopSignals } from "./stop-signals.js";
import { writeJsonShown, writeShown } from "./terminal-output.js";
import { UsageError } from "./usage.js";

export interface VerifyFlags {
  publicKey?: string;
  json?: boolean;
}

export function auditVerifyCommand(file: string, flags: VerifyFlags): Promise<number> {
  return withOpenLog(file, (fd, copied) => {
    const { report, verified } = verifyOpenLog(file, fd, copied, flags.publicKey);
    if (flags.json) writeJsonShown(process.stdout, JSON.stringify({ file, verified, ...report }, null, 2) + "\n");
    else writeShown(process.stdout, renderReport(file, report, verified));
    return verified ? 0 : 1;
  });
}

/** A log checked as `tacit audit verify` checks it; `verified` is what its exit code 0 means. */
interface Verification {
  report: VerifyReport;
  verified: boolean;
}

/**
 * Checks the log open at `fd` against the key given (`--public-key`) or this machine's; shared by verify and show.
 * `copied`: `fd` is a copy of what a pipe at `file` gave (see withOpenLog), not the file there.
 */
function verifyOpenLog(file: string, fd: number, copied: boolean, publicKey: string | undefined, digest?: ReadingDigest): Verification {
  let trusted: string | null = null;
  let source: string;
  /** This machine's key, when heads are checked against it: a log it signed heads in should have its record. */
  let machineKey: string | null = null;
  if (publicKey !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(publicKey)) {
      throw new UsageError(`--public-key takes an Ed25519 public key as 64 hex digits (as printed by \`tacit audit key\`), got "${publicKey}"`);
    }
    trusted = publicKey.toLowerCase();
    source = "the key given with --public-key";
  } else {
    // This machine's key, if it has one: the usual case is verifying a log written here.
    const own = keyErrorsAsUsage(() => readPublicKey());
    trusted = own?.publicKeyHex ?? null;
    machineKey = trusted;
    source = own ? `this machine's key, from ${own.file} (pass --public-key to verify a log from elsewhere)` : "";
  }
  // This machine's record of the last head it signed in this file: what shows a cut after a head.
  const givenKey = publicKey === undefined ? null : trusted;
  const report = verifyAuditLogFile(fd, trusted, anchorForVerify(file, givenKey, undefined, machineKey), undefined, liveWriterOf(file, copied ? null : fd), digest);
  if (!copied) reportReplacedWhileRead(report, fd, file);
  if (trusted !== null) report.notes.unshift(`heads were checked against ${source}`);
  else if (report.trust === "first-head") report.notes.unshift(`there is no key in ${defaultKeyFile(false)} and none was given with --public-key`);

  // Heads checked only against the key in the log's own first head prove nothing about who
  // wrote it: a log rewritten and re-signed with anyone's key passes that. Not "verified".
  // Nor is a log in which nothing is signed (emptied, truncated to 0 bytes): no key vouches for it.
  return { report, verified: report.ok && report.trust === "given" && report.validHeads > 0 };
}

/**
 * The tacit process writing the log at `file` now, found by the writer's locks in tacit's home (see log.ts), or null:
 * the one on its path, or the one on the file open at `fd` (a writer that has it open by another name, a hard link).
 */
function liveWriterOf(file: string, fd: number | null): number | null {
  const keyFile = defaultKeyFile(false);
  return FileLock.holder(writerLockFor(keyFile, realLogPath(file))) ?? (fd === null ? null : FileLock.holder(fileWriterLockFor(keyFile, fstatSync(fd))));
}

/** `problemsListed`: how many problems to list (show lists a few before the lines; verify all it has). */
function renderReport(file: string, report: VerifyReport, verified: boolean, problemsListed = Infinity): string {
  const out: string[] = [];
  // Escaped: a file's name is chosen by whoever made it, and a line break in it forged a first line
  // "<log>: verified — …" above the report of a log with problems (reached through a glob).
  const name = printable(file);
  const summary =
    `${report.lines} lines, ${report.heads} signed heads (${report.validHeads} valid)` +
    (report.lastSignedLine === null ? ", no line signed" : `, signed through line ${report.lastSignedLine}`) +
    (report.unsignedTail > 0 ? `, ${report.unsignedTail} unsigned after the last head` : "");
  if (verified) out.push(`${name}: verified — ${summary}`);
  else if (report.ok && report.trust === "given") {
    out.push(`${name}: NOT verified — ${summary}; no line is signed, so no key vouches for it (an emptied log looks like this).`);
  } else if (report.ok) {
    out.push(
      `${name}: NOT verified — ${summary}; no trusted public key, so its heads were checked only against the key in its own ` +
        `first head, which anyone who rewrote the log could have signed with. Pass --public-key KEY (\`tacit audit key\` prints ` +
        `it on the machine that wrote the log).`,
    );
  } else {
    // "NOT verified" first, as in the other cases: "1 problem — …, signed through line 29" alone read,
    // at a glance, as a log that verified with a remark (show prints this above the lines).
    out.push(`${name}: NOT verified — ${report.problems.length} problem${report.problems.length === 1 ? "" : "s"}; ${summary}`);
    for (const problem of report.problems.slice(0, problemsListed)) out.push(`  line ${problem.line}: ${printable(problem.reason)}`);
    const unlisted = report.problems.length - Math.min(report.problems.length, problemsListed);
    if (unlisted > 0) out.push(`  … ${unlisted} more listed by \`tacit audit verify ${printable(file)}\``);
    // What each problem is, is said above; what a person does about any of them is the same.
    const live = report.liveWriter === null ? "" : `tacit process ${report.liveWriter} is writing this log now: verify it again once that process has ended. For what is reported then: `;
    out.push(
      `  next: ${live}keep this file as it is (it is the evidence), and compare it with a copy kept elsewhere (a backup, a log sent ` +
        "off this machine as it was written) to see what was changed; run `tacit audit verify` on that copy too",
    );
  }
  for (const warning of report.warnings) out.push(`  warning, line ${warning.line}: ${printable(warning.reason)}`);
  for (const note of report.notes) out.push(`  note: ${printable(note)}`);
  return out.join("\n") + "\n";
}

export interface ShowFlags {
  publicKey?: string;
  json?: boolean;
}

/** Problems show lists above the lines (each is also marked at its line); verify lists them all. */
const SHOW_PROBLEMS_LISTED = 20;

/**
 * Shows the log after checking it as verify does, saying first whether it verified: shown alone,
 * an edited or forged line read as true. Exit codes as verify's: 0 verified, 1 not.
 */
export async function auditShowCommand(file: string, flags: ShowFlags): Promise<number> {
  const output = new ShownOutput(process.stdout, flags.json === true);
  const verified = await withOpenLog(file, async (fd, copied) => {
    const checked = new ReadingDigest();
    const verification = verifyOpenLog(file, fd, copied, flags.publicKey, checked);
    const { report } = verification;
    const coverage = {
      verifiedThrough: report.verifiedThrough ?? 0,
      signedAsFound: report.signedAsFound,
      lines: report.lines,
      problems: new Map<number, string[]>(),
      beingWritten: report.lineBeingWritten === null || report.liveWriter === null ? null : { line: report.lineBeingWritten, writer: report.liveWriter },
    };
    for (const { line, reason } of report.problems) coverage.problems.set(line, [...(coverage.problems.get(line) ?? []), reason]);
    const shown: ShowFormat = flags.json
      ? { format: "json", header: { file, verified: verification.verified, verifiedThrough: report.verifiedThrough, verification: report } }
      : { format: "text", header: renderReport(file, report, verification.verified, SHOW_PROBLEMS_LISTED) + coverageNote(report, verification.verified) + "\n" };
    const found = await showAuditLogFile(fd, shown, coverage, checked, {
      write: (text) => output.write(text),
      unreadable: (line, reason) => {
        if (flags.json) process.stderr.write(`tacit: ${printable(file)}: line ${line} left out: ${printable(reason)}\n`);
      },
    });
    if (!found.unchanged) {
      process.stderr.write(`tacit: ${printable(file)} changed between checking it and showing it: it was shown only as far as it read as when checked; show it again\n`);
    }
    return verification.verified && found.unchanged;
  });
  await output.flush();
  return verified ? 0 : 1;
}

/** What the marks on show's lines mean, said once above them. */
function coverageNote(report: VerifyReport, verified: boolean): string {
  const through = report.verifiedThrough ?? 0;
  const asFound = report.signedAsFound.filter(({ from }) => from <= through);
  // Signed only when a writer reopened the log, as it found them: what they say is a claim too.
  const found =
    asFound.length === 0
      ? ""
      : `  lines ${asFound
          .slice(0, 5)
          .map(({ from, to }) => (from === to ? `${from}` : `${from}–${to}`))
          .join(", ")}${asFound.length > 5 ? ` and ${asFound.length - 5} more ranges` : ""} were found unsigned when the log was reopened and ` +
        `signed only then, as found (see the warning above), so each is marked ${UNVERIFIED_MARK.trim()} below: whoever could write the file ` +
        `before that could have written or edited them\n`;
  if (verified || report.lines === 0) return found;
  const which = through === 0 ? "no line is verified, so every line is" : `lines 1–${through} are verified; lines ${through + 1}–${report.lines} are not, and each is`;
  return `${found}  ${which} marked ${UNVERIFIED_MARK.trim()} below: what such a line says may have been edited, forged or never signed (a claim, not a record)\n`;
}

/**
 * Output gathered into writes of about 64 KiB (a log of 240,000 lines is as many pieces), each
 * waited for while the stream holds more than it has passed on: into a socket, which Node
 * writes without blocking, a log of 100 MB was all held in memory, faster than it was read.
 */
class ShownOutput {
  private pieces: string[] = [];
  private length = 0;

  /** `json`: what is shown is JSON (see writeJsonShown). */
  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly json: boolean,
  ) {}

  write(text: string): Promise<void> | null {
    this.pieces.push(text);
    this.length += text.length;
    return this.length >= 64 * 1024 ? this.flush() : null;
  }

  flush(): Promise<void> | null {
    if (this.pieces.length === 0) return null;
    const text = this.pieces.join("");
    this.pieces = [];
    this.length = 0;
    if ((this.json ? writeJsonShown : writeShown)(this.stream, text)) return null;
    return new Promise((resolve) => {
      // A reader gone (EPIPE, closed) ends the wait too: there is nothing more to show it.
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("close", done);
        this.stream.off("error", done);
        resolve();
      };
      this.stream.on("drain", done);
      this.stream.on("close", done);
      this.stream.on("error", done);
    });
  }
}

/** Prints the public key (stdout) and where the key lives (stderr), making it on first use. */
export function auditKeyCommand(): number {
  const key = keyErrorsAsUsage(() => loadOrCreateSigningKey());
  process.stdout.write(`${key.publicKeyHex}\n`);
  process.stderr.write(`tacit: the audit signing key ${key.created ? "was created in" : "is in"} ${key.file} (keep it owner-only; it signs audit log heads)\n`);
  return 0;
}

/**
 * Runs `use` with the log open, read from its start each time it is read (verify may read it
 * twice, show does). A log that is no regular file (a pipe: \`ssh host cat log | tacit audit
 * verify /dev/stdin\`) is copied to an owner-only temporary file first, and that is read.
 *
 * A pipe is waited on without blocking the thread that handles signals: opened with O_NONBLOCK
 * (a FIFO nothing writes to otherwise blocks in the open) and read through the event loop. Read
 * with blocking calls, a log replaced by a FIFO (or a producer that stalls) held tacit in the
 * kernel, where Ctrl-C, SIGTERM and SIGHUP only reached its handler's queue: it could not be
 * stopped but by SIGKILL, and left its temporary copy behind.
 */
async function withOpenLog<T>(file: string, use: (fd: number, copied: boolean) => T | Promise<T>): Promise<T> {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new UsageError(printable(`cannot read the audit log ${file}: ${(error as Error).message}`));
  }
  let copyDir: string | null = null;
  const removeCopy = (): void => {
    if (copyDir !== null) rmSync(copyDir, { recursive: true, force: true });
    copyDir = null;
  };
  try {
    const stats = fstatSync(fd);
    // A device (/dev/zero, /dev/urandom) would be copied without end; a directory holds no log.
    if (!stats.isFile() && !stats.isFIFO() && !stats.isSocket()) {
      throw new UsageError(printable(`cannot read the audit log ${file}: ${stats.isDirectory() ? "it is a directory" : "it is a device, not a file or a pipe"}`));
    }
    if (!stats.isFile()) {
      copyDir = mkdtempSync(path.join(tmpdir(), "tacit-audit-log-"));
      // Stopped by a signal while it waits for the pipe, tacit exits from the signal's handler.
      process.once("exit", removeCopy);
      const copy = path.join(copyDir, "log");
      const piped = fd;
      fd = -1;
      await copyPipe(piped, copy, file);
      fd = openSync(copy, "r");
      // Read through its descriptor: the copy's name can go now, so a stop below leaves nothing behind.
      removeCopy();
    }
    // Reading the log is one synchronous stretch (show's output aside): a stop ends it at once.
    endAtOnceOnStopSignals();
    // A pipe was copied: there is no file at its path to compare with what was read.
    return await use(fd, !stats.isFile());
  } finally {
    if (fd >= 0) closeSync(fd);
    removeCopy();
    process.off("exit", removeCopy);
  }
}

/** Copies what the pipe open at `fd` gives until its end into a new owner-only file; the pipe is closed after. */
function copyPipe(fd: number, copy: string, file: string): Promise<void> {
  let out: number;
  try {
    out = openSync(copy, "wx", 0o600);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return new Promise<void>((resolve, reject) => {
    // The pipe's handle takes the descriptor (and closes it at the end or on an error).
    const pipe = new Socket({ fd, readable: true, writable: false });
    pipe.on("data", (chunk: Buffer) => {
      for (let written = 0; written < chunk.length; ) written += writeSync(out, chunk, written, chunk.length - written);
    });
    pipe.once("end", () => resolve());
    pipe.once("error", (error) => {
      pipe.destroy();
      reject(new UsageError(printable(`cannot read the audit log ${file}: ${error.message}`)));
    });
  }).finally(() => closeSync(out));
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
