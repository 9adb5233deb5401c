// The secure output sink: the one place classified plaintext may be written for a person to
// read. An append-only file, created owner-only (0600) in the same open() that creates it,
// so it is never briefly readable by others; an existing file keeps its permissions, but one
// that others may read or write is warned about, and one that another user owns is refused
// (see checkExisting). Only a regular file with no other name, never through a symbolic link
// (see openSinkFile, checkNames), nor in a directory other than the one tacit found it in (see
// sinkDirectories).
// What one evaluation appends is capped (see SinkQuota).

import { closeSync, constants, fstatSync, lstatSync, mkdirSync, realpathSync, type Stats, writeSync } from "node:fs";
import path from "node:path";
import { CLASSIFIED_MASK } from "../library/protocol.js";
import { DirectoryChangedError, makeDirectoriesInVerified, nearestExistingDirectory, openInVerifiedDirectory } from "./fs/checked-open.js";
import type { PureResult } from "./classified/pure-evaluator.js";
import { plaintextOf } from "./classified/store.js";
import { printable } from "./printable.js";

/**
 * A sink file tacit will not write to (see SecureSink.checkExisting); its message names the file and what to do.
 * Made printable: it quotes paths others chose (where a link put in place of the sink's directory leads), and
 * tacit writes it on its stderr as it is: a link to a directory named "\x1b]52;c;…\x07\ntacit: warning: …"
 * set the person's clipboard and started a line that read as tacit's own.
 */
class SinkRefusal extends Error {
  override name = "SinkRefusal";
  constructor(message: string) {
    super(printable(message));
  }
}

/**
 * The order of appends to each sink file, shared by every SecureSink of this process for that
 * file. tacit serve gives each session and each one-shot call a SecureSink of its own, all on the
 * same file; each kept its own order, so one println's text went out at once and its value when
 * its map ended, and the lines of calls printing at the same time came out mixed ("long 0 long 2
 * long 1 <value>\n<value>\n…"): which value was whose could not be told. One order per file keeps
 * each println's line whole.
 */
const appendOrder = new Map<string, Promise<void>>();

/**
 * Where each sink file's directory is, as this process first found it (when its first SecureSink
 * was made): its real path, or, where it did not exist yet, the real path of the nearest directory
 * above it that did and the names to make below that. The file is opened in that directory only,
 * and the missing ones are made each in the one above as found (see open). The sink is opened at
 * its first append, after the script has run for a while; opened by its path, it followed a
 * directory on the way that someone had replaced by a link meanwhile (a confined command of
 * another run whose allowed roots hold it, or any process of the user's), or a link put where a
 * directory was still missing, and tacit created the file, 0600 but with the plaintext the script
 * printed, in the directory the link's maker chose. Kept for the process, not the sink: tacit
 * serve makes a sink for each session and call, the later ones long after it started.
 */
const sinkDirectories = new Map<string, SinkDirectory>();

interface SinkDirectory {
  /** The real path of the directory, or of the nearest one above it that existed. */
  real: string;
  /** The directories to make below `real`, outermost first; none once it exists. */
  missing: string[];
}

/** The directory `real`, gone: the nearest directory above it still there, and the names to make again below that. */
function missingFrom(real: string): SinkDirectory {
  const missing: string[] = [];
  let dir = real;
  for (; path.dirname(dir) !== dir && lstatSync(dir, { throwIfNoEntry: false }) === undefined; dir = path.dirname(dir)) missing.unshift(path.basename(dir));
  return { real: dir, missing };
}

export class SecureSink {
  private fd: number | null = null;
  /** This sink's last append (which waits for every append to the file queued before it). */
  private chain: Promise<void> = Promise.resolve();
  private readonly orderKey: string;

  constructor(readonly file: string) {
    this.orderKey = path.resolve(file);
    if (!sinkDirectories.has(this.orderKey)) {
      const found = nearestExistingDirectory(path.dirname(this.orderKey));
      if (found !== null) sinkDirectories.set(this.orderKey, found);
    }
  }

  private open(): number {
    if (this.fd === null) {
      const fd = this.openSinkFile(this.directory());
      try {
        const stats = fstatSync(fd);
        if (!stats.isFile()) throw this.notRegular(kindOf(stats));
        this.checkNames(stats);
        this.checkExisting(stats);
      } catch (error) {
        closeSync(fd);
        throw error;
      }
      this.fd = fd;
    }
    return this.fd;
  }

  /** The real path of the sink's directory, made (owner-only) where missing, each directory in the one above as found. */
  private directory(): string {
    let found = sinkDirectories.get(this.orderKey);
    if (found === undefined) {
      // Not to be told when tacit first looked (see nearestExistingDirectory): made by its path, as before,
      // which fails with what is in the way.
      mkdirSync(path.dirname(this.orderKey), { recursive: true, mode: 0o700 });
      found = { real: realpathSync(path.dirname(this.orderKey)), missing: [] };
      sinkDirectories.set(this.orderKey, found);
    }
    // Gone since (removed by the person, say): made again the same way, from the nearest directory
    // above it still there, as found then (a link there now is refused when it is opened).
    if (found.missing.length === 0 && lstatSync(found.real, { throwIfNoEntry: false }) === undefined) found = missingFrom(found.real);
    if (found.missing.length > 0) {
      try {
        found = { real: makeDirectoriesInVerified(found.real, found.missing, 0o700), missing: [] };
      } catch (error) {
        if (error instanceof DirectoryChangedError) throw this.directoryChanged(error);
        throw error;
      }
      sinkDirectories.set(this.orderKey, found);
    }
    return found.real;
  }

  /**
   * Opens the sink to append, created 0600 if missing. O_NONBLOCK: opening a FIFO nobody reads
   * for writing waited for a reader on the host's main thread, so the run (or tacit serve, every
   * session) hung for good, its time limits included; now that open fails (ENXIO), as does one of
   * a socket, and a directory's (EISDIR). Anything but a regular file is refused (see open): a
   * pipe or a terminal opened without blocking may take only part of a write and lose the rest,
   * and one opened blocking holds the host whenever its reader stops reading. O_NOFOLLOW: a link
   * there (left by a command a script may run, as recorder.ts fears for the record) is not
   * followed to a file someone else may read; a dangling one is not followed to create one. In
   * `directory` (its real path, see sinkDirectories) as opened and checked, never by a path a
   * directory on the way to it could be swapped on: the file is created only there, so nothing is
   * ever made where such a link leads (there is nothing to remove after a refusal).
   */
  private openSinkFile(directory: string): number {
    const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
    try {
      return openInVerifiedDirectory(directory, path.basename(this.orderKey), flags, 0o600);
    } catch (error) {
      if (error instanceof DirectoryChangedError) throw this.directoryChanged(error);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        throw new SinkRefusal(
          `the directory of the secure output ${this.file} (${directory}) was removed while tacit opened the file in it; nothing was ` +
            "written. Leave the directory in place while tacit runs",
        );
      }
      if (code === "ELOOP") {
        throw new SinkRefusal(
          `the secure output ${this.file} is a symbolic link, which tacit does not follow (it could lead to a file others read); nothing was written to it. ` +
            "Remove the link, or give --secure-output a regular file by its own path",
        );
      }
      if (code === "ENXIO" || code === "EISDIR") throw this.notRegular(this.kindAt());
      throw error;
    }
  }

  /** The refusal of a sink whose directory is not where tacit found it (see sinkDirectories). */
  private directoryChanged(error: DirectoryChangedError): SinkRefusal {
    const now = DirectoryChangedError.describe(error.expected, error.found);
    return new SinkRefusal(
      `the secure output ${this.file} is no longer where tacit first found its directory: ${now}. A directory on its way was replaced ` +
        "by a link (or moved), or a link was put where tacit was to make one, which tacit does not follow to write plaintext where " +
        "whoever did it chose; nothing was written, nor created, there. Keep the secure output's directory out of every run's allowed " +
        "roots, put the directory back (or give --secure-output a file in a directory only you can change), and start tacit again",
    );
  }

  /** What the sink's path is, for a refusal, when it could not be opened (looked at without following a link). */
  private kindAt(): string {
    try {
      return kindOf(lstatSync(this.file));
    } catch {
      return "not a file";
    }
  }

  private notRegular(kind: string): SinkRefusal {
    return new SinkRefusal(
      `the secure output ${this.file} is not a regular file (${kind}); tacit writes plaintext only to a regular file, since a FIFO with ` +
        "no reader would hold tacit waiting and a pipe or device may lose what is written; nothing was written to it. Remove it, or " +
        "give --secure-output a regular file (to follow it as it grows, run `tail -f` on that file)",
    );
  }

  /**
   * The sink must have no other name: a hard link made to it (where it did not exist yet, a
   * confined command's `ln leak.txt secure.log` in the allowed roots, before tacit created it) is
   * the same file under a name no rule protects, and a script read the plaintext tacit appended
   * there back through it. Checked when it is opened and before each write (a name added since).
   */
  private checkNames(stats: Stats): void {
    if (stats.nlink === 1) return;
    throw new SinkRefusal(
      `the secure output ${this.file} has ${stats.nlink} names (hard links): its other names may lie where scripts or commands can read ` +
        "what tacit writes there, so no plaintext was written to it. Remove it (and its other names), or give --secure-output a new file " +
        "outside the allowed roots",
    );
  }

  /**
   * An existing regular file keeps its permissions (tacit never chmods it), but a script of an
   * earlier run without --secure-output could create it, 0644 by the umask, and a later run
   * appended plaintext to it for anyone to read, without a word. So: one that group or others
   * may read or write is warned about, once, with the fix; one another user owns is refused
   * (its owner reads what is written whatever its mode), nothing is written.
   */
  private checkExisting(stats: Stats): void {
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) {
      throw new SinkRefusal(
        `the secure output ${this.file} is owned by another user (uid ${stats.uid}, you are uid ${uid}), who can read whatever tacit writes there ` +
          "whatever its mode; nothing was written to it. Remove it, or give --secure-output a file of your own",
      );
    }
    if ((stats.mode & 0o077) !== 0) {
      process.stderr.write(
        `tacit: warning: the secure output ${printable(this.file)} may be read or written by others than you (mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")}), ` +
          `and the plaintext tacit appends there with it; run \`chmod 600 ${printable(this.file)}\` (tacit leaves an existing file's permissions as they are)\n`,
      );
    }
  }

  /**
   * Runs `job` once everything appended before it is written (by any SecureSink of this process
   * on the same file, see appendOrder); what it writes goes in order. A
   * job that fails is reported (once per sink) and the next ones still run: a rejected chain
   * skipped every later append without a word, so a sink that could not be written lost all
   * the plaintext meant for a person silently.
   */
  enqueue(job: (write: (text: string) => void) => Promise<void>): void {
    const before = appendOrder.get(this.orderKey) ?? Promise.resolve();
    this.chain = before
      .then(async () => {
        const lines = new WholeLines((bytes) => this.write(bytes));
        try {
          await job((text) => lines.add(text));
        } finally {
          lines.end();
        }
      })
      .catch((error: unknown) => this.report(error));
    appendOrder.set(this.orderKey, this.chain);
  }

  private reported = false;

  /** Tells the operator on stderr; only a system error's code and call, never text that was being written. */
  private report(error: unknown): void {
    if (this.reported) return;
    this.reported = true;
    if (error instanceof SinkRefusal) {
      process.stderr.write(`tacit: ${error.message}; what was printed for it is lost\n`);
      return;
    }
    const { code, syscall } = error as NodeJS.ErrnoException;
    const why = typeof code === "string" ? `${code}${typeof syscall === "string" ? ` (${syscall})` : ""}` : "an internal error";
    process.stderr.write(`tacit: cannot write to the secure output ${printable(this.file)}: ${why}; what was printed for it is lost\n`);
  }

  private write(bytes: Buffer): void {
    if (bytes.length === 0) return;
    const fd = this.open();
    this.checkNames(fstatSync(fd));
    for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
  }

  /** Resolves when everything appended so far is written. */
  async flush(): Promise<void> {
    await this.chain;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /**
   * Makes the file now where it is missing (empty, owner-only), as the first append would: in its
   * directory as this process first found it (see sinkDirectories), checked as any open is. For
   * runner/exec/confinement.ts, which makes it before a confined command that could make it first;
   * made there by its path, it followed a directory on the way replaced by a link, and an empty
   * file of tacit's was created where the link's maker chose. Throws what an append would report.
   */
  makeNow(): void {
    this.open();
    this.close();
  }
}

/** The longest line the sink holds back to write whole (see WholeLines). */
export const WHOLE_LINE_LIMIT_BYTES = 1024 * 1024;

/**
 * What a job appends, handed to the file in whole lines: each write(2) ends at a line break
 * (but the last of a job, and a line longer than WHOLE_LINE_LIMIT_BYTES, written in pieces). Two
 * tacit processes may append to one secure output (two runs, a run beside tacit serve), and an
 * O_APPEND write to a regular file lands whole, but a println went out in several writes (its
 * text, each classified value as it was computed, the rest): two runs printing at once mixed
 * their lines in the file ("A-start <A's secret>B-start <B's secret> B-end"), so that which
 * plaintext was whose could not be told. Within one process appendOrder keeps lines apart.
 */
class WholeLines {
  private held: Buffer[] = [];
  private heldBytes = 0;

  constructor(private readonly out: (bytes: Buffer) => void) {}

  add(text: string): void {
    if (text === "") return;
    const bytes = Buffer.from(text, "utf8");
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end > 0) {
      this.hold(bytes.subarray(0, end));
      this.end();
    }
    if (end < bytes.length) this.hold(bytes.subarray(end));
  }

  /** Writes what is held (the job ended: a line it left open is not waited for). */
  end(): void {
    if (this.heldBytes === 0) return;
    const bytes = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    this.out(bytes);
  }

  /** Holds `bytes`; a line past the limit goes out as it comes, never copied into one buffer. */
  private hold(bytes: Buffer): void {
    if (this.heldBytes + bytes.length > WHOLE_LINE_LIMIT_BYTES) {
      this.end();
      if (bytes.length > WHOLE_LINE_LIMIT_BYTES) return this.out(bytes);
    }
    this.held.push(bytes);
    this.heldBytes += bytes.length;
  }
}

/** Whether `error` is the secure output's refusal (its message says what and what to do). */
export function isSinkRefusal(error: unknown): error is Error {
  return error instanceof SinkRefusal;
}

/** What a file that is not a regular one is, in a refusal's words. */
function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isDirectory()) return "a directory";
  if (stats.isSocket()) return "a socket";
  if (stats.isSymbolicLink()) return "a symbolic link";
  return "not a file";
}

/** Where an evaluation's output meant for a person goes. */
export interface SinkWriter {
  /** Plain text (a note from tacit). */
  append(text: string): void;
  /**
   * A printed line: its text parts, and its classified values (read as plaintext only when the
   * sink gets to them, one at a time).
   */
  appendParts(parts: ReadonlyArray<string | Promise<PureResult>>): void;
}

export interface SinkLimits {
  /** Text known when appended (what the script printed around classified values). */
  knownBytes: number;
  /** Everything written, classified plaintext included. */
  totalBytes: number;
}

export function sinkCutMarker(limits: SinkLimits): string {
  return (
    `\n[tacit: secure output cut: this evaluation printed more than ${limits.knownBytes} bytes, or wrote more than ` +
    `${limits.totalBytes} bytes with its classified values; the rest was discarded]\n`
  );
}

/** The cut marker's place among what waits to be written (see SinkQuota.take). */
const CUT: unique symbol = Symbol("cut");
/** Plain text appended in a row is joined into one piece once this many are waiting. */
const TEXT_PIECES_JOINED = 1024;

/**
 * One evaluation's share of the sink, capped as its output is (the script cannot tell: nothing
 * of this reaches it, so where a cut falls may depend on a secret). An append waits, text and
 * all, for the values before it; uncapped, a script printing behind a slow value made the host
 * hold everything it printed (1.9 GB resident in a 30 s run) and the disk take it all. Past a
 * limit the text is cut with a visible marker, and later appends are dropped unqueued.
 *
 * What waits is held as its text and values, never as one queued job per append: a job (its
 * closure and promises) cost about 600 bytes whatever it printed, and the cap counts bytes
 * printed, so a twelfth security review, behind a value taking 4 s, posted prints of nothing
 * (counted as 0 bytes) from the raw channel and grew the host by 360 MB in 3.5 s (about 160,000
 * a second, for as long as the time limit and slow values last); the library's print("x"),
 * 1 byte each, could queue ten million. Text in a row is now joined as it waits, a classified
 * part is one reference (its mask's bytes counted), and one job at a time writes what waits.
 */
export class SinkQuota implements SinkWriter {
  private known = 0;
  private written = 0;
  /** No more appends are queued. */
  private refusing = false;
  /** The marker is written (or queued); whatever comes later is dropped. */
  private full = false;
  /** What waits to be written, in order: text, a classified value, the cut marker. */
  private waiting: Array<string | Promise<PureResult> | typeof CUT> = [];
  /** The next of `waiting` to write. */
  private next = 0;
  /** Plain text appended after the last of `waiting`, joined into it in pieces (see TEXT_PIECES_JOINED). */
  private text: string[] = [];
  /** A job that writes what waits is queued on the sink, or running. */
  private writing = false;

  constructor(
    private readonly sink: SecureSink,
    private readonly limits: SinkLimits,
  ) {}

  append(text: string): void {
    if (!this.take(Buffer.byteLength(text))) return;
    this.hold(text);
    this.schedule();
  }

  /**
   * A classified part counts as what the script saw of it (the mask), so that printing the
   * same value over and over queues no more than printing its mask would. Each value is read
   * as text and cut at its turn, never joined with the rest of the line: joined when computed,
   * a line of 150 copies of a 3 MB value made a 450 MB string at once, and a few such lines
   * behind a slow value took the host past its heap (a security review: 1.4 GB resident with a
   * 16 MiB store, out of memory under a 300 MB heap).
   */
  appendParts(parts: ReadonlyArray<string | Promise<PureResult>>): void {
    const maskBytes = Buffer.byteLength(CLASSIFIED_MASK);
    const knownBytes = parts.reduce((sum, part) => sum + (typeof part === "string" ? Buffer.byteLength(part) : maskBytes), 0);
    if (!this.take(knownBytes)) return;
    for (const part of parts) this.hold(part);
    this.schedule();
  }

  /** Adds a part to what waits: text to the text in a row (nothing for ""), a value after it. */
  private hold(part: string | Promise<PureResult> | typeof CUT): void {
    if (typeof part === "string") {
      if (part === "") return;
      this.text.push(part);
      if (this.text.length >= TEXT_PIECES_JOINED) this.joinText();
      return;
    }
    this.joinText();
    this.waiting.push(part);
  }

  private joinText(): void {
    if (this.text.length === 0) return;
    this.waiting.push(this.text.join(""));
    this.text = [];
  }

  /** Queues one job on the sink that writes what waits, in order, unless one is queued or running. */
  private schedule(): void {
    if (this.writing) return;
    this.writing = true;
    this.sink.enqueue(async (write) => {
      try {
        for (;;) {
          this.joinText();
          if (this.next === this.waiting.length) break;
          const part = this.waiting[this.next]!;
          this.waiting[this.next++] = ""; // let go of it once written
          if (this.full) continue;
          write(part === CUT ? this.cut("") : this.admit(typeof part === "string" ? part : plaintextOf(await part)));
        }
      } finally {
        this.waiting = [];
        this.next = 0;
        this.writing = false;
      }
    });
  }

  /** Counts `knownBytes` against the limit; false (and the cut queued) past it. */
  private take(knownBytes: number): boolean {
    if (this.refusing) return false;
    if (this.known + knownBytes > this.limits.knownBytes) {
      this.refusing = true;
      // After everything queued before it, unless one of those was cut already.
      this.hold(CUT);
      this.schedule();
      return false;
    }
    this.known += knownBytes;
    return true;
  }

  private admit(text: string): string {
    if (this.full) return "";
    const size = Buffer.byteLength(text);
    if (this.written + size <= this.limits.totalBytes) {
      this.written += size;
      return text;
    }
    return this.cut(Buffer.from(text).subarray(0, this.limits.totalBytes - this.written).toString("utf8").replace(/\uFFFD$/, ""));
  }

  private cut(head: string): string {
    if (this.full) return "";
    this.full = true;
    this.refusing = true;
    this.written = this.limits.totalBytes;
    return head + sinkCutMarker(this.limits);
  }
}

/**
 * Where the classified store's notes on values that could not be computed go: the sink share
 * of the evaluation running now (a session's store outlives its snippets). Written straight to
 * the sink, they had no cap: in a security review a script mapping a value with a function
 * that throws a 3,000-character message, in a loop, wrote 162 MB of notes in 10 s.
 */
export class FailureNotes {
  to: SinkWriter | null = null;
  readonly note = (reason: string): void => this.to?.append(`[tacit] ${reason}\n`);
}
