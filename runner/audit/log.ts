// The audit log writer: append-only JSON lines, hash-chained, with signed heads (the line
// format and hash definitions are in line.ts). Lines are written on an O_APPEND descriptor in
// small batches (a syscall per line cost more than the rest of auditing together); `flush()`
// writes the batch at once, and the approval gate calls it before every action with an
// effect (write, delete, command, request), so those are in the file (the OS's cache) before
// they happen. fsync happens at each signed head, so a crash loses at most the unsigned
// tail, which `tacit audit verify` reports as such.
//
// Lines are made on the host's main thread. A prototype that made and wrote them in a worker
// thread (the main thread sending each batch's canonical JSON and times, flush() waiting on an
// Atomics handshake) took main-thread CPU off a 10,000-read run (773 -> 726 ms) but made every
// run slower on a two-core machine, where the sandbox spins on one core while it waits for a
// reply: 1,000 reads 310 -> 315 ms, 10,000 reads 1,092 -> 1,126 ms, and 0 reads 129 -> 152 ms
// (the thread's start-up, beside the sandbox's boot), medians of 20, 6 and 20 interleaved runs.
//
// What the log costs other threads is V8's optimizing compiler. The events of 1,000 reads, in a
// fresh process (bench/audit-log-alone.ts), took 34.7 ms of CPU on all threads and 22.0 on the main
// thread; under --no-opt, 26.1 and 22.6 (medians of 14 interleaved runs): about 8.6 ms compiling
// LineBytes.add, write, append and node:crypto's hash on the compiler's threads, code that a run
// of a thousand reads is mostly over before it uses (GC's helpers: --single-threaded-gc changed
// nothing measurable). Each function the lines make hot is one more compile: a change that made
// drain's loop run over an index (V8 then compiled drain whole, write and add inlined), had chainOf
// call line-bytes.ts's hash function directly (which then got hot on its own) and moved write's
// timer start into a method added two compiles (drain, the hash function) and 3-4 ms of CPU on
// other threads (24 interleaved runs, paired), with no gain on the main thread: none of it was kept.
//
// One writer per file: a lock holding the writer's pid keeps a second process from interleaving
// its own chain. It lives in tacit's home, beside the anchors (audit-writers/, named by a digest
// of the log's real path), not beside the log: a lock there is missing whenever no tacit writes
// the log, so nothing covers it from a confined command or a script of another run, which planted
// one with pid 1 (every later writer refused to start) or with a dead pid beside a log it wrote
// itself (the next writer took the forged lines for a crashed writer's tail and signed them).
// A log that exists is continued from its last line, read from the end of the file (logs grow;
// the start is read only for a log that has no anchor yet).
//
// Each signed head is also recorded outside the log, in the tacit home (anchor.ts): a log cut
// right after a head is otherwise a shorter log that verifies. On reopening, the writer finds
// that head where the record says it ended, or refuses to continue the log.

import { closeSync, constants, existsSync, fstatSync, fsyncSync, mkdirSync, readlinkSync, readSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import { DirectoryChangedError, openInVerifiedDirectory } from "../fs/checked-open.js";
import { AnchorError, anchorRecord, type AnchorRecord, AnchorStore, anchorsDirFor, logNames, realLogPath } from "./anchor.js";
import { canonicalJson, sha256Hex } from "./digest.js";
import { signBytes } from "./ed25519.js";
import type { AuditEvent, EventJson } from "./events.js";
import { FileLock } from "../file-lock.js";
import { loadOrCreateSigningKey, type SigningKey } from "./keys.js";
import { chainOf, describeIssues, eventHash, headEventSchema, type HeadEvent, headMessage, headMessageV1, IsoTimes, isoTime, type LoggedEvent, type ParsedLine, parseLine, ZERO_CHAIN } from "./line.js";
import { LineBytes } from "./line-bytes.js";
import { PARSED_ONCE } from "../parse-once.js";
import { printable } from "../printable.js";

export interface AuditLogOptions {
  /** The signing key's file; default: audit-key.json in the tacit home. */
  keyFile?: string;
  /** Sign a head after this many lines since the last one (default 10,000). */
  signEveryEvents?: number;
  /** …or this long after the first unsigned line, whichever comes first (default 5000 ms). */
  signIntervalMs?: number;
}

/** Why a log cannot be opened or written; the message says what to do about it. */
export class AuditLogError extends Error {
  override name = "AuditLogError";
}

// Each head costs an fsync (milliseconds on a slow disk): by count only for very busy logs.
const DEFAULT_SIGN_EVERY_EVENTS = 10_000;
/** Lines kept before a write, at most; also events kept before their lines are made. */
const BATCH_LINES = 256;
/**
 * How long appended events wait, at most, before their lines are made (unless a batch fills
 * first, or flush/signHead/close come). Making them a request at a time, right after each
 * reply, cost a run of 1,000 reads about 15% over no log; in batches, about 11%. Measured again
 * (interleaved runs; host CPU from /proc at exit): a drain on setImmediate after each reply made
 * a run of 1,000 reads 20-37 ms slower (medians of three sets of 12-30 rounds) and cost the host's
 * main thread 9 ms more (one set); drains put off to 1 s or 4,096 events changed nothing (paired
 * medians over 20 rounds: main thread -0.6 ms, all threads +2.9 ms, wall +7 ms in quartiles of
 * +-45 ms): the lines cost the same CPU whenever they are made, and in a loop of reads none of
 * it finds an idle moment. Made synchronously right after each reply was written, before the host
 * waited for the next request (a catchUp() that the conversation called there, so that the hashing
 * would overlap the sandbox's turn, measured at 75 µs from reply to next request): the same CPU in
 * the log alone (bench/audit-log-alone.ts, a read's lines made after each read against 256 events
 * at a time: +0.2 ms [-5.1 .. 6.8] of 47 ms, 20 interleaved rounds), but whole runs of 1,000 reads
 * cost the host more, main thread +31.9 ms [-7.0 .. 79.3] and all threads +44.7 ms [5.2 .. 97.6]
 * (30 interleaved rounds, paired; load 13-16 on 2 CPUs, where wall time moved by +-300 ms). At a
 * load of 2-3.5, over a run with no log: wall +61.5 ms in batches, +67.4 made after each reply (main
 * thread +49.5, +54.9; 40 rounds); with TACIT_SPIN=always, wall +118.1 and +171.9, main thread
 * +40.6 and +57.6 (30 rounds): no gain in either regime. Why is not known: a pipe's write wakes
 * its reader as a sync wakeup, which the scheduler may place on the writer's CPU, expecting it to
 * sleep, but the host's context switches did not show it (8 runs each). Not kept: the lines are
 * made as before, in batches.
 */
export const AUDIT_DRAIN_DELAY_MS = 25;
const DEFAULT_SIGN_INTERVAL_MS = 5000;
/** A last line longer than this is not something tacit wrote. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** Where the writer records its signed heads (anchor.ts), and what it needs to. */
interface Anchoring {
  store: AnchorStore;
  /** The names its records are kept under (anchor.ts logNames). */
  logs: string[];
  /** The chain of the log's first line; null until a new log's first line is written. */
  firstChain: string | null;
}

export class AuditLog {
  private fd: number | null;
  private seq: number;
  private chain: string;
  /** Lines written since the last head. */
  private unsigned = 0;
  /**
   * Where the file ends when only this writer writes it: its size at opening, plus every byte
   * written since. The lock (in tacit's home) keeps other writers of this home out; a tacit with
   * another home does not see it, and one that opened the same empty log wrote a chain of its
   * own into it, each run ending "done", exit 0 (verify: "seq 1 repeated"). Checked before each
   * write and after each fsync: the file then grew or shrank under this writer.
   */
  private size: number;
  /** Lines made but not yet written (see flush). */
  private readonly lines = new LineBytes();
  /** Events appended whose lines are not made yet (see append). */
  private pending: Array<{ event: AuditEvent | EventJson | (() => AuditEvent | EventJson); at: number }> = [];
  private drainScheduled = false;
  private timer: NodeJS.Timeout | null = null;
  /** Set by a failed write or timed signing; every later call reports it. */
  private failure: AuditLogError | null = null;
  private readonly exitHook = (): void => {
    try {
      this.close();
    } catch (error) {
      process.stderr.write(`tacit: ${(error as Error).message}\n`);
    }
  };

  private constructor(
    readonly path: string,
    fd: number,
    tail: ParsedLine | null,
    size: number,
    private readonly key: SigningKey,
    /** The writer's locks: on the log's real path, and on the file opened (see lockOpenedFile). */
    private readonly locks: readonly FileLock[],
    private readonly anchoring: Anchoring,
    private readonly signEveryEvents: number,
    private readonly signIntervalMs: number,
  ) {
    this.fd = fd;
    this.size = size;
    this.seq = tail?.seq ?? 0;
    this.chain = tail?.chain ?? ZERO_CHAIN;
    // A normal exit (process.exit included, as on SIGINT) still signs what was written.
    process.on("exit", this.exitHook);
  }

  static open(file: string, options: AuditLogOptions = {}): AuditLog {
    const resolved = path.resolve(file);
    const signEveryEvents = options.signEveryEvents ?? DEFAULT_SIGN_EVERY_EVENTS;
    const signIntervalMs = options.signIntervalMs ?? DEFAULT_SIGN_INTERVAL_MS;
    if (!Number.isInteger(signEveryEvents) || signEveryEvents <= 0) {
      throw new AuditLogError(`signEveryEvents must be a positive whole number, got ${signEveryEvents}`);
    }
    if (!Number.isFinite(signIntervalMs) || signIntervalMs <= 0) {
      throw new AuditLogError(`signIntervalMs must be a positive number of milliseconds, got ${signIntervalMs}`);
    }
    let key: SigningKey;
    try {
      key = loadOrCreateSigningKey(options.keyFile);
    } catch (error) {
      throw new AuditLogError(`cannot sign the audit log ${resolved}: ${(error as Error).message}`);
    }
    try {
      mkdirSync(path.dirname(resolved), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new AuditLogError(`cannot create the directory of the audit log ${resolved}: ${(error as Error).message}`);
    }
    const lockedAs = realLogPath(resolved);
    const { lock, tookOver } = lockLog(resolved, writerLockFor(key.file, lockedAs));
    let fd: number | null = null;
    let fileLock: FileLock | null = null;
    try {
      const store = new AnchorStore(anchorsDirFor(key.file));
      const readAnchor = (log: string): AnchorRecord | null => {
        try {
          return store.read(log);
        } catch (error) {
          if (!(error instanceof AnchorError)) throw error;
          throw new AuditLogError(
            `${error.message}. It records the last head tacit signed in the audit log ${resolved}, which is how a cut log is ` +
              `told from an intact one, so tacit will not extend the log without it. Run \`tacit audit verify ${resolved}\`; ` +
              `if the log is as you expect, delete ${store.fileFor(log)} (the log is anchored again from its next signed head), ` +
              `or give tacit a new audit log file.`,
          );
        }
      };
      if (!existsSync(resolved)) {
        // A log this machine signed, gone: starting a new one under its name would hide that.
        const found = logNames(resolved)
          .map((name) => ({ name, record: readAnchor(name) }))
          .find(({ record }) => record !== null);
        if (found?.record) {
          const { name: before, record } = found;
          throw new AuditLogError(
            `${signedAt(record, resolved, store.fileFor(before))}, but there is no such file any more: it was deleted or moved ` +
              `away. tacit will not start a new log in its place, since that would hide what happened to the old one. If you ` +
              `moved it yourself (log rotation), run \`tacit audit verify\` on it where it is now; then give tacit a new audit ` +
              `log file, or delete ${store.fileFor(before)} to start a new log under this name.`,
          );
        }
      }
      try {
        // As "a+" (append-only writes, plus reads of the tail; 0600 applies only when it creates),
        // at its real path, without following a link there: a link at a log's path that leads
        // nowhere had tacit create its target, wherever that was, and append lines naming what the
        // agent asked for (`echo "$(…)"`) to a file a shell then reads. A live link was resolved
        // already (realLogPath), so only a dead one, or one swapped in since, is refused here.
        // And in its directory as opened and checked to be where realLogPath found it: a directory
        // on its way swapped for a link since (after realLogPath passed sameFile, whose stat
        // follows that link too) had the lines go into the directory the link's maker chose.
        fd = openInVerifiedDirectory(path.dirname(lockedAs), path.basename(lockedAs), constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, 0o600);
      } catch (error) {
        if (error instanceof DirectoryChangedError) {
          throw new AuditLogError(
            `the audit log ${resolved} changed while tacit opened it: ${DirectoryChangedError.describe(error.expected, error.found)} ` +
              `(a directory on its way was replaced by a link, or moved, after tacit found the log there), which tacit does not ` +
              `follow; nothing was created or written. Keep the log's directory out of the allowed roots, and start tacit again.`,
          );
        }
        if ((error as NodeJS.ErrnoException).code === "ELOOP") throw deadLinkAtLog(resolved, lockedAs);
        throw new AuditLogError(`cannot open the audit log ${resolved}: ${(error as Error).message}`);
      }
      const stat = fstatSync(fd);
      if (!stat.isFile()) throw new AuditLogError(`the audit log ${resolved} is not a regular file`);
      // The lock is keyed by the real path found before the open: the file opened must be the one
      // there, or another writer locking that file's own path could write it at the same time.
      if (!sameFile(stat, lockedAs)) {
        throw new AuditLogError(
          `the audit log ${resolved} changed while tacit opened it (it is no longer the file at ${lockedAs}, which tacit locked): ` +
            `a link or directory on its way was replaced. Keep the log's directory out of the allowed roots, and start tacit again.`,
        );
      }
      fileLock = lockOpenedFile(resolved, key.file, stat);
      if (process.platform !== "win32" && (stat.mode & 0o022) !== 0) {
        throw new AuditLogError(
          `other users can write to the audit log ${resolved} (mode ${(stat.mode & 0o777).toString(8)}), so they could have ` +
            `edited it; tacit will not extend it. Run \`tacit audit verify ${resolved}\`, then either \`chmod go-w ${resolved}\` ` +
            `or start a new audit log file.`,
        );
      }
      const tail = readLastLine(fd, stat.size, resolved);
      /** The log's last line, when it is a head with this key (checked for its signature after the anchors: a cut says more). */
      let tailHead: HeadEvent | null = null;
      if (tail?.event.type === "head") {
        // A refusal, not a throw of the schema's error: its message quotes the event's keys, which
        // whoever edited the line chose, raw (C1 controls included), and ended tacit as an internal error.
        const parsedHead = headEventSchema.safeParse(tail.event, PARSED_ONCE);
        if (!parsedHead.success) {
          throw new AuditLogError(
            `the last line of the audit log ${resolved} is a malformed head (${describeIssues(parsedHead.error)}), so tacit cannot ` +
              `continue its chain. Run \`tacit audit verify ${resolved}\` to see what happened, keep the file as it is, and give ` +
              `tacit a new audit log file.`,
          );
        }
        const head = parsedHead.data;
        if (head.publicKey !== key.publicKeyHex) {
          throw new AuditLogError(
            `the audit log ${resolved} was signed with another key (${head.publicKey}) than this one (${key.publicKeyHex}, ` +
              `in ${key.file}); one log signed with two keys cannot be verified against one. Start a new audit log file, ` +
              `or set TACIT_HOME to where the other key lives.`,
          );
        }
        tailHead = head;
      }
      // Every record of it, under the name given and where it really is, must be held by the file.
      const names = logNames(resolved);
      let record: AnchorRecord | null = null;
      for (const name of names) {
        const found = readAnchor(name);
        if (found === null) continue;
        checkAnchor(fd, stat.size, tail, found, resolved, store.fileFor(name));
        record ??= found;
      }
      if (tail !== null && tailHead !== null && !signedHere(tail, tailHead, key.privateKey)) throw headNotSigned(resolved, tail.seq);
      // A log with lines but no record (written before tacit anchored logs, or moved here):
      // its identity is read from its first line once, and its next head is recorded.
      const firstChain = record?.firstChain ?? (tail === null ? null : readFirstLine(fd, stat.size, resolved).chain);
      if (tail !== null && tail.event.type !== "head" && !tookOver) throw unsignedWithoutCrash(resolved, tail.seq, lock.file);
      const anchoring: Anchoring = { store, logs: names, firstChain };
      const log = new AuditLog(resolved, fd, tail, stat.size, key, [lock, fileLock], anchoring, signEveryEvents, signIntervalMs);
      if (tail !== null && tail.event.type !== "head") log.write({ type: "resumed-after-unsigned-tail", lastSeq: tail.seq });
      if (record === null && firstChain !== null) process.stderr.write(`tacit: ${printable(continuedWithoutRecord(resolved, store, firstChain, names, tookOver))}\n`);
      return log;
    } catch (error) {
      if (fd !== null) closeSync(fd);
      fileLock?.release();
      lock.release();
      throw error;
    }
  }

  /**
   * Records one event (its time taken now). Its line — canonical JSON, hash, chain — is made
   * later, with others: once BATCH_LINES events are pending, or AUDIT_DRAIN_DELAY_MS after the
   * first of them, and always before flush(), signHead() and close() write; so hashing never
   * delays a reply to the sandbox. An event may be given as its canonical JSON (events.ts's
   * encoders, for the events every action logs), or as a function (a result's digest, say),
   * called when the line is made. `at`: when it happened (Date.now()), if before now; the
   * caller appends nothing in between, so the times of the lines still follow their order.
   */
  append(event: AuditEvent | EventJson | (() => AuditEvent | EventJson), at: number = Date.now()): void {
    if (this.fd === null) throw new AuditLogError(`the audit log ${this.path} is closed`);
    this.throwIfFailed();
    this.pending.push({ event, at });
    if (this.pending.length >= BATCH_LINES) this.drain();
    else if (!this.drainScheduled) {
      this.drainScheduled = true;
      setTimeout(() => {
        this.drainScheduled = false;
        try {
          this.drain();
        } catch (error) {
          if (this.failure === null) this.fail((error as Error).message);
        }
      }, AUDIT_DRAIN_DELAY_MS).unref();
    }
  }

  /**
   * Throws what append would now (a closed or failed log), and makes the lines of a full batch
   * now rather than at the next append: for a caller that appends an event right after carrying
   * out what it records, and must not carry it out when the event cannot be appended (the next
   * append can then fail only with a write that fails meanwhile, and nothing is written meanwhile).
   */
  ready(): void {
    if (this.fd === null) throw new AuditLogError(`the audit log ${this.path} is closed`);
    this.throwIfFailed();
    if (this.pending.length >= BATCH_LINES - 1) this.drain();
  }

  /** Makes the lines of pending events (hashing and chaining them), signing when enough are unsigned. */
  private drain(): void {
    const pending = this.pending;
    this.pending = [];
    for (const { event, at } of pending) {
      this.write(typeof event === "function" ? event() : event, this.timeText(at));
      if (this.unsigned >= this.signEveryEvents) this.signHead();
    }
  }

  /** The last time written, as text and as JSON: an action's events mostly fall in one millisecond. */
  private lastTime = { at: Number.NaN, text: "", json: "" };
  private readonly times = new IsoTimes();

  private timeText(at: number): string {
    if (at !== this.lastTime.at) {
      const text = this.times.text(at);
      // JSON.stringify's, written out: the text is digits, '-', ':', 'T', '.', 'Z' (and a year's sign), nothing it escapes.
      this.lastTime = { at, text, json: `"${text}"` };
    }
    return this.lastTime.text;
  }

  /** Signs the chain so far with a head line (if anything was written since the last), then fsyncs. */
  signHead(): void {
    if (this.fd === null) return; // closed: close() signed already
    this.throwIfFailed();
    this.clearTimer();
    if (this.pending.length > 0) this.drain();
    if (this.unsigned === 0) return;
    const signs = this.chain;
    const time = this.timeText(Date.now());
    const signature = Buffer.from(signBytes(headMessage(signs, this.seq + 1, time), this.key.privateKey)).toString("hex");
    this.write({ type: "head", signs, signedSeq: this.seq, publicKey: this.key.publicKeyHex, signature }, time);
    // Checked after the fsync, with the record (recordHead).
    this.writePending();
    try {
      fsyncSync(this.fd);
    } catch (error) {
      throw this.fail(`cannot fsync the audit log ${this.path}: ${(error as Error).message}`);
    }
    this.unsigned = 0;
    this.clearTimer(); // write() started one for the head line itself
    this.recordHead(this.fd, time);
  }

  /**
   * Records the head just signed and fsynced outside the log (anchor.ts). After the fsync, so
   * the record is never ahead of what the log has on disk: a crash cannot make the log look cut.
   */
  private recordHead(fd: number, time: string): void {
    const { store, logs, firstChain } = this.anchoring;
    let log = logs[0]!;
    try {
      // A head follows at least one line, so the first line's chain is known by now.
      if (firstChain === null) throw new Error("the log's first line is not known");
      // The file's own size: the head is its last line, unless another writer slipped in.
      const held = fstatSync(fd);
      const offset = held.size;
      if (offset !== this.size) throw this.changedUnder(offset);
      if (!sameFile(held, this.path)) throw this.replacedUnder();
      for (log of logs) store.write(anchorRecord({ log, firstChain, seq: this.seq, chain: this.chain, offset, time, publicKey: this.key.publicKeyHex }));
    } catch (error) {
      // Fail closed, as for a write to the log: a log whose heads are not recorded could be cut unseen.
      throw this.fail(`cannot record the signed head of the audit log ${this.path} in ${store.fileFor(log)}: ${(error as Error).message}`);
    }
  }

  /**
   * Signs what is unsigned, then releases the file and its lock, and throws the log's failure if
   * it has one: one met now, or earlier by a timer's write or signing that no later call saw (a
   * server whose last call had answered exited 0 with a log missing its end). Idempotent.
   */
  close(): void {
    if (this.fd === null) return;
    try {
      if (this.failure === null) this.signHead();
      // Nothing left to write checks nothing: a log cut or written to after its last head is said now.
      const held = fstatSync(this.fd);
      if (this.failure === null && held.size !== this.size) throw this.changedUnder(held.size);
      if (this.failure === null && !sameFile(held, this.path)) throw this.replacedUnder();
      this.throwIfFailed();
    } finally {
      this.clearTimer();
      closeSync(this.fd);
      this.fd = null;
      for (const lock of this.locks) lock.release();
      process.off("exit", this.exitHook);
    }
  }

  /** `event`: as an object, or as its canonical JSON made by an encoder of events.ts. */
  private write(event: LoggedEvent | EventJson, time = isoTime(Date.now())): void {
    if (this.fd === null) throw new AuditLogError(`the audit log ${this.path} is closed`);
    this.throwIfFailed();
    const seq = this.seq + 1;
    const eventJson = typeof event === "string" ? event : canonicalJson(event);
    const timeJson = time === this.lastTime.text ? this.lastTime.json : JSON.stringify(time);
    // The line (lineText's), its hash and chain (line.ts), made as bytes in the batch (line-bytes.ts).
    let made = this.lines.add(seq, timeJson, eventJson, this.chain);
    if (made === false) {
      this.writeLines();
      made = this.lines.add(seq, timeJson, eventJson, this.chain);
      if (made === false) throw this.fail(`cannot make line ${seq} of the audit log ${this.path}`);
    }
    const { chain } = made;
    if (seq === 1) this.anchoring.firstChain = chain;
    if (this.lines.lines >= BATCH_LINES) this.writeLines();
    this.seq = seq;
    this.chain = chain;
    this.unsigned++;
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        try {
          this.signHead();
        } catch (error) {
          if (this.failure === null) this.fail((error as Error).message);
        }
      }, this.signIntervalMs);
      this.timer.unref();
    }
  }

  /**
   * Writes the lines made so far to the file (not fsynced: see signHead), then checks that the file
   * ends where this writer's lines end and is still the one at the log's path. The approval gate
   * calls it right before each action with an effect, which a throw here refuses: checked only at
   * signed heads, a log replaced (or deleted) between two heads had the actions of the rest of the
   * evaluation carried out with their decisions written to a file no longer at the path (an unlinked
   * one, lost at close), and only the next head said so; and bytes another process appended between
   * writeLines' check and its write were found at the next write, after the effect.
   */
  flush(): void {
    if (this.fd === null) return;
    this.writePending();
    const held = fstatSync(this.fd);
    if (held.size !== this.size) throw this.changedUnder(held.size);
    if (!sameFile(held, this.path)) throw this.replacedUnder();
  }

  /** Writes the lines of the events appended so far (see flush). */
  private writePending(): void {
    if (this.pending.length > 0) this.drain();
    this.writeLines();
  }

  /** Writes the lines in the batch (a short write, which a regular file gives only when it cannot take more, is finished). */
  private writeLines(): void {
    if (this.fd === null || this.lines.lines === 0) return;
    this.throwIfFailed();
    const found = fstatSync(this.fd).size;
    if (found !== this.size) throw this.changedUnder(found);
    const bytes = this.lines.take();
    try {
      for (let offset = 0; offset < bytes.length; ) offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
      this.size += bytes.length;
    } catch (error) {
      // Part of a line may be in the file: nothing written after it could be verified.
      throw this.fail(`cannot write to the audit log ${this.path}: ${(error as Error).message}`);
    }
  }

  /** The failure of a log that another process wrote to (or cut) while this writer held it: its size is not what this writer made it. */
  private changedUnder(found: number): AuditLogError {
    const how = found > this.size ? `grew by ${found - this.size} bytes that this tacit did not write` : `shrank by ${this.size - found} bytes`;
    return this.fail(
      `the audit log ${this.path} ${how} while this tacit was writing it (it ends at byte ${found}, where this tacit's own lines end at ` +
        `byte ${this.size}): another process wrote to it, such as a tacit with another tacit home (TACIT_HOME), whose lock this one cannot see, ` +
        `so the file no longer holds this tacit's chain alone. Run \`tacit audit verify ${this.path}\` to see ` +
        `what it holds, and give each tacit home an audit log file of its own`,
    );
  }

  /**
   * The failure of a log whose path no longer names the file this writer holds open: one renamed
   * over it, or it moved away or deleted. The writer's lines went on to the file it holds, which
   * is not at the path, and the size checks cannot see that. Checked (by a stat of the path) at
   * each signed head and at close, not at each line.
   */
  private replacedUnder(): AuditLogError {
    let there: string;
    try {
      statSync(this.path);
      there = "another file is there now (one was renamed or linked over it, or a link on its path was changed)";
    } catch {
      there = "there is no file there any more (it was moved away or deleted)";
    }
    return this.fail(
      `the audit log ${this.path} was replaced while this tacit was writing it: ${there}, so what this tacit logged since went to ` +
        `the file it had opened, which is no longer at that path, and the file there does not hold it. Run \`tacit audit verify ${this.path}\` ` +
        `to see what the file there holds, find the file tacit wrote (if it was moved, where it is now), keep other processes away from ` +
        `the log's directory (log rotation included: rotate only while tacit is not running), and start tacit again`,
    );
  }

  private fail(message: string): AuditLogError {
    this.failure ??= new AuditLogError(`${message}; no further events are logged to it`);
    return this.failure;
  }

  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * The last line of the log, checked to be one tacit wrote whole (parsed, hash and chain
 * consistent), or null for an empty file.
 */
function readLastLine(fd: number, size: number, file: string): ParsedLine | null {
  if (size === 0) return null;
  const refuse = (why: string) =>
    new AuditLogError(
      `the last line of the audit log ${file} is incomplete or corrupt (${why}), so tacit cannot continue its chain. ` +
        `Run \`tacit audit verify ${file}\` to see what happened, keep the file as it is, and give tacit a new audit log file.`,
    );
  const read = readLineEndingAt(fd, size);
  if (!read.ok) throw refuse(read.why);
  const parsed = parseLine(read.text, true);
  if (!parsed.ok) throw refuse(parsed.reason);
  const line = parsed.line;
  if (eventHash(line.seq, line.time, line.event) !== line.hash) throw refuse("its hash does not match its content");
  if (chainOf(line.prev, line.hash) !== line.chain) throw refuse("its chain value does not follow from prev and hash");
  return line;
}

/**
 * The text of the line that ends (with its newline) at byte `end`, without the newline.
 * Reads backwards from there in growing chunks: the rest of the file is never read. The first
 * is small, since tacit's lines are a few hundred bytes (a head about 450): one of 64 KiB,
 * allocated and read twice per opening (the tail, the anchored head), cost more than the line.
 */
function readLineEndingAt(fd: number, end: number): { ok: true; text: string } | { ok: false; why: string } {
  for (let chunk = 4 * 1024; ; chunk *= 16) {
    const start = Math.max(0, end - chunk);
    const buffer = Buffer.alloc(end - start);
    for (let read = 0; read < buffer.length; ) {
      const n = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (n === 0) return { ok: false, why: "the file shrank while it was read" };
      read += n;
    }
    if (buffer[buffer.length - 1] !== 0x0a) return { ok: false, why: "it does not end with a newline: a write was cut off" };
    const newline = buffer.lastIndexOf(0x0a, buffer.length - 2);
    if (newline >= 0 || start === 0) return { ok: true, text: buffer.subarray(newline + 1, buffer.length - 1).toString("utf8") };
    if (end - start >= MAX_LINE_BYTES) return { ok: false, why: `it is longer than ${MAX_LINE_BYTES} bytes` };
  }
}

/** The first line of a log that has lines, read once to learn its identity for its anchor. */
function readFirstLine(fd: number, size: number, file: string): ParsedLine {
  const refuse = (why: string) =>
    new AuditLogError(
      `the first line of the audit log ${file} is corrupt (${why}), so tacit cannot tell which log this is. ` +
        `Run \`tacit audit verify ${file}\` to see what happened, keep the file as it is, and give tacit a new audit log file.`,
    );
  let text: string | null = null;
  for (let chunk = 64 * 1024; text === null; chunk *= 4) {
    const buffer = Buffer.alloc(Math.min(size, chunk));
    for (let read = 0; read < buffer.length; ) {
      const n = readSync(fd, buffer, read, buffer.length - read, read);
      if (n === 0) throw refuse("the file shrank while it was read");
      read += n;
    }
    const newline = buffer.indexOf(0x0a);
    if (newline >= 0) text = buffer.subarray(0, newline).toString("utf8");
    else if (buffer.length >= Math.min(size, MAX_LINE_BYTES)) throw refuse("it has no end");
  }
  const parsed = parseLine(text, true);
  if (!parsed.ok) throw refuse(parsed.reason);
  return parsed.line;
}

/** The line that ends at byte `end`, parsed, or null where there is no intact line. */
function intactLineEndingAt(fd: number, end: number): ParsedLine | null {
  const read = readLineEndingAt(fd, end);
  const parsed = read.ok ? parseLine(read.text, true) : null;
  return parsed?.ok ? parsed.line : null;
}

const short = (hex: string) => `${hex.slice(0, 12)}…`;

/** "this machine signed a head at line N of …": how every anchor refusal begins. */
function signedAt(record: AnchorRecord, file: string, recordFile: string): string {
  return (
    `this machine signed a head at line ${record.seq} of the audit log ${file} (chain ${short(record.chain)}, at ` +
    `${record.time}; recorded in ${recordFile})`
  );
}

/**
 * Refuses a log that does not hold, where its record says, the head this machine last
 * recorded signing in it: the file was cut, or rewritten from some point before that head.
 */
function checkAnchor(fd: number, size: number, tail: ParsedLine | null, record: AnchorRecord, file: string, recordFile: string): void {
  const what =
    `so tacit will not continue it (the lines it lost would go unnoticed). Run \`tacit audit verify ${file}\` to see ` +
    `what is left, keep the file as it is (it is the evidence), and give tacit a new audit log file.`;
  if (size < record.offset) {
    const now = tail === null ? "is now empty" : `now ends at line ${tail.seq} (byte ${size}; the head ended at byte ${record.offset})`;
    throw new AuditLogError(`${signedAt(record, file, recordFile)}, but the file ${now}: it was truncated after tacit wrote it, ${what}`);
  }
  // Where the head ended is mostly where the file ends (nothing was written since): that line is
  // the tail, read and checked already, and is not read and parsed a second time.
  const atHead = record.offset === size && tail !== null ? tail : intactLineEndingAt(fd, record.offset);
  if (atHead !== null && atHead.seq === record.seq && atHead.chain === record.chain) return;
  const found = atHead !== null ? `seq ${atHead.seq} with chain ${short(atHead.chain)}` : "no intact line";
  throw new AuditLogError(
    `${signedAt(record, file, recordFile)}, but where that head ended (byte ${record.offset}) the file now has ${found}: ` +
      `it was rewritten (or cut and written again) after tacit wrote it, ${what}`,
  );
}

/**
 * What the writer says (on stderr, for the operator) as it continues a log that has lines but no
 * record of its last head: said nothing, a record deleted from tacit's home (with the log cut after a
 * head, say) was anchored again from the next head, and no trace of it was left anywhere.
 */
function continuedWithoutRecord(file: string, store: AnchorStore, firstChain: string, names: string[], afterCrash: boolean): string {
  const from = store.findByFirstChain(firstChain, names.at(-1)!).map(({ record }) => record.log);
  // A record is made at each head: a writer that crashed before its first left none, and it alone
  // was told "the record was deleted", which sent its operator looking for who deleted it.
  const crashed = afterCrash
    ? `the tacit that wrote it last stopped without closing it (it left its lock: a crash, or SIGKILL), and if it signed no head before that, it made no record; or `
    : "";
  const why =
    from.length > 0
      ? `it was moved or copied here from ${from.join(", ")}`
      : `${crashed}the record was deleted (by hand, or by a clean-up of tacit's home), or the log was written by a tacit from before such records`;
  return (
    `the audit log ${file} has lines, but this machine has no record of the last head signed in it (${store.fileFor(names.at(-1)!)}): ` +
    `${why}. A cut made to it before now cannot be told from a shorter log; tacit continues it, and records its heads from ` +
    `the next one. If you did not expect this, run \`tacit audit verify ${file}\` and compare the log with a copy kept elsewhere.`
  );
}

/**
 * The refusal to continue a log that ends in lines no head signs when no writer crashed on it. A
 * writer signs what it wrote when it closes, and one that stops without closing (a crash) leaves
 * its lock behind in tacit's home, which the next writer takes over; then the tail is marked and
 * signed as found. Without that lock, the lines came from someone else: a security review appended
 * a line, chained by hand, to a log tacit had closed, and the next `tacit run` signed it, after
 * which `tacit audit verify` called the log verified (exit 0) with only a warning. A lock beside
 * the log counts for nothing: a confined command wrote one with a dead pid, with a log of forged
 * lines where an MCP client's settings named one not made yet, and the writer signed them so.
 */
function unsignedWithoutCrash(file: string, lastSeq: number, lockFile: string): AuditLogError {
  return new AuditLogError(
    `the audit log ${file} ends in lines no signed head covers (its last line, seq ${lastSeq}, is not a head), but no tacit ` +
      `stopped while writing it: a writer that crashes leaves its lock ${lockFile} (in tacit's home) behind, and there was none, ` +
      `so those lines were appended by someone else after tacit closed the log (or before it first wrote it). tacit will not ` +
      `continue it, since its next head would sign them as if tacit had written them. Run \`tacit audit verify ${file}\` to see ` +
      `them, keep the file as it is (it is the evidence), and give tacit a new audit log file.`,
  );
}

/**
 * Whether the head at the log's end is one this key signed, over the line before it (its prev, its
 * seq) and its own seq and time. Ed25519 signatures are deterministic (RFC 8032): this key signs a
 * message one way only, so signing it again and comparing the bytes is the check, with no verifier
 * loaded into the writer. A log tacit wrote before heads signed their own time (v1) ends in such a head.
 */
function signedHere(line: ParsedLine, head: { signs: string; signedSeq: number; signature: string }, privateKey: Uint8Array): boolean {
  if (head.signs !== line.prev || head.signedSeq !== line.seq - 1) return false;
  const signature = Buffer.from(head.signature, "hex");
  return (
    signature.equals(signBytes(headMessage(head.signs, line.seq, line.time), privateKey)) ||
    signature.equals(signBytes(headMessageV1(head.signs), privateKey))
  );
}

/**
 * The refusal of a log that ends in a head this key did not sign. Only a head that is the last line
 * lets a writer continue a log without marking its tail (see unsignedWithoutCrash), and only its key
 * was compared: a security review appended lines chained by hand to a log tacit had closed, then a
 * head naming this machine's key with a made-up signature, and the next `tacit run` continued the
 * log, its own heads signing the forged lines.
 */
function headNotSigned(file: string, seq: number): AuditLogError {
  return new AuditLogError(
    `the audit log ${file} ends in a head (line seq ${seq}) that names this machine's key but that this key did not sign: ` +
      `its signature does not match, or it does not sign the line before it. Someone else wrote it, with the lines before it ` +
      `that no real head signs, and tacit will not continue the log, since its next head would sign them as if tacit had ` +
      `written them. Run \`tacit audit verify ${file}\` to see them, keep the file as it is (it is the evidence), and give ` +
      `tacit a new audit log file.`,
  );
}

/**
 * Where the writer of the log whose real path is `realLog` keeps its lock: in tacit's home (the
 * signing key's directory, beside the anchors), which no script or confined command can write,
 * named by a digest of that path as the anchors are.
 */
export function writerLockFor(keyFile: string, realLog: string): string {
  return path.join(path.dirname(path.resolve(keyFile)), WRITERS_DIR_NAME, `${sha256Hex(realLog).slice(0, 32)}.lock`);
}

/** Where the writer of the log file `stat` describes (by device and inode, whatever its name) keeps its second lock (see lockOpenedFile). */
export function fileWriterLockFor(keyFile: string, stat: { dev: number; ino: number }): string {
  return path.join(path.dirname(path.resolve(keyFile)), WRITERS_DIR_NAME, `file-${sha256Hex(`${stat.dev}:${stat.ino}`).slice(0, 32)}.lock`);
}

const WRITERS_DIR_NAME = "audit-writers";

/** The refusal of a log whose path (`at`, really) is a link that leads to no file. */
function deadLinkAtLog(resolved: string, at: string): AuditLogError {
  let target = "a file that does not exist";
  try {
    target = `${readlinkSync(at)}, which does not exist`;
  } catch {
    // Gone or changed meanwhile: said without its target.
  }
  return new AuditLogError(
    `the audit log ${resolved} is a link to ${target}; tacit does not create its log through a link, which another ` +
      `program could have left there to have the log's lines (which quote what scripts asked for) written into a file of ` +
      `its choosing. Give --audit-log the path of the file itself, or create the file the link leads to first.`,
  );
}

/** Whether the file `stat` describes is the one at `file` now. */
function sameFile(stat: { dev: number; ino: number }, file: string): boolean {
  try {
    const there = statSync(file);
    return there.dev === stat.dev && there.ino === stat.ino;
  } catch {
    return false;
  }
}

/**
 * The second lock a writer holds, on the file it opened (its device and inode) rather than on a path:
 * the lock on the log's real path does not see the same file under another name. A log with a hard
 * link to it, given to a second tacit by that name while a first wrote it, was taken by the second for
 * a log someone else had appended to ("no tacit stopped while writing it … appended by someone else
 * after tacit closed the log"), sending its operator after a forger; between two evaluations of the
 * first, when its log ended in a head, the second wrote its run into it, and the first failed closed
 * at its next action. Now the second is refused as it opens the file, naming the first. A crash leaves
 * this lock too, and the next writer takes it over (which says nothing here: the lock on the path
 * decides what a crash left).
 */
function lockOpenedFile(logFile: string, keyFile: string, stat: { dev: number; ino: number }): FileLock {
  const file = fileWriterLockFor(keyFile, stat);
  let attempt;
  try {
    attempt = FileLock.tryAcquire(file);
  } catch (error) {
    throw new AuditLogError(`cannot create the lock file ${file} for the audit log ${logFile}: ${(error as Error).message}`);
  }
  if (attempt.ok) return attempt.lock;
  const pid = attempt.heldBy;
  if (pid === null) throw new AuditLogError(`cannot take the lock file ${file} for the audit log ${logFile}: other processes keep taking it`);
  throw new AuditLogError(
    pid === process.pid
      ? `the audit log ${logFile} is already open in this process under another name (a hard link to the same file; lock file ${file})`
      : `the audit log ${logFile} is a file process ${pid} is writing under another name (a hard link to the same file; its lock is ${file}, ` +
          `in tacit's home); two writers would break its chain. Give each tacit its own audit log file (not a link to another's); if ` +
          `process ${pid} is not a tacit (a crashed writer's pid taken by another program), delete ${file}.`,
  );
}

/** Takes the writer's lock `file` (see file-lock.ts): one writer per log; `tookOver` when a crashed writer left it. */
function lockLog(logFile: string, file: string): { lock: FileLock; tookOver: boolean } {
  let attempt;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    attempt = FileLock.tryAcquire(file);
  } catch (error) {
    throw new AuditLogError(`cannot create the lock file ${file} for the audit log ${logFile}: ${(error as Error).message}`);
  }
  if (attempt.ok) return { lock: attempt.lock, tookOver: attempt.tookOver };
  const pid = attempt.heldBy;
  if (pid === null) throw new AuditLogError(`cannot take the lock file ${file} for the audit log ${logFile}: other processes keep taking it`);
  throw new AuditLogError(
    pid === process.pid
      ? `the audit log ${logFile} is already open in this process (lock file ${file})`
      : `the audit log ${logFile} is being written by process ${pid} (its lock is ${file}, in tacit's home); two writers would ` +
          `break its chain. Give each tacit its own audit log file; if process ${pid} is not a tacit (a crashed writer's pid ` +
          `taken by another program), delete ${file}.`,
  );
}
