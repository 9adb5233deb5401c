// Reading a small file the host judges (a client's settings, git's configuration, a
// package.json) without letting the file decide how long that takes: only a regular file is
// read (a FIFO would hold the host's thread waiting for a writer, a link to /dev/zero never
// ends), and never more than a limit.

import { closeSync, constants, existsSync, fstatSync, openSync, readSync, type Stats, statSync } from "node:fs";

/** Names what was read (device, inode, size and times): the same version is the same content, as far as a cache needs. */
export type FileVersion = string;

const versionOf = (stat: Stats): FileVersion => `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;

export type BoundedRead =
  | { unchanged: true; version: FileVersion }
  /** `complete`: the whole file was read (it was no longer than the limit, and did not grow while read). */
  | { unchanged: false; text: string; complete: boolean; version: FileVersion };

/**
 * The text of `file` up to `limitBytes`; null when there is none, it is no regular file, or it
 * cannot be read. `unchanged` (nothing read) when `known` says its version is one already judged.
 */
export function readBoundedFile(file: string, limitBytes: number, known: (version: FileVersion) => boolean = () => false): BoundedRead | null {
  // Most of the places looked at hold nothing, and a failed open costs an exception (several
  // microseconds each; some callers look in a dozen places for every change a script makes).
  if (!existsSync(file)) return null;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return null;
    const version = versionOf(stat);
    if (known(version)) return { unchanged: true, version };
    // Room for what fstat said, and a byte more to tell whether that was all of it.
    const buffer = Buffer.allocUnsafe(Math.min(stat.size, limitBytes) + 1);
    let n = 0;
    let ended = false;
    while (n < buffer.length) {
      const read = readSync(fd, buffer, n, buffer.length - n, null);
      if (read === 0) {
        ended = true;
        break;
      }
      n += read;
    }
    return { unchanged: false, text: buffer.toString("utf8", 0, Math.min(n, limitBytes)), complete: ended && n <= limitBytes, version };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The text of `file` (its first `limitBytes`: a longer one is judged by them), or null (none, not
 * a regular file, unreadable): for a file whose every part the caller protects, so what was read
 * counts even when it is not all.
 */
export function readBoundedText(file: string, limitBytes: number): string | null {
  const read = readBoundedFile(file, limitBytes);
  return read === null || read.unchanged ? null : read.text;
}

/**
 * What `parse` made of a file's text (its first `limitBytes`), made again only when the file
 * changed: a stat per look while it has not (where a check looks at the same few files on every
 * change a script makes). null when there is no such regular file.
 */
export class ParsedFiles<T> {
  private readonly known = new Map<string, { version: FileVersion; value: T }>();

  constructor(
    private readonly limitBytes: number,
    private readonly parse: (text: string, file: string) => T,
  ) {}

  get(file: string): T | null {
    const stat = statSync(file, { throwIfNoEntry: false });
    const known = this.known.get(file);
    if (stat?.isFile() && known?.version === versionOf(stat)) return known.value;
    const read = stat?.isFile() ? readBoundedFile(file, this.limitBytes) : null;
    if (read === null || read.unchanged) {
      this.known.delete(file);
      return null;
    }
    const value = this.parse(read.text, file);
    this.known.set(file, { version: read.version, value });
    return value;
  }
}

/**
 * What `read` made of a directory (a tool's records: a file or a link per entry), made again only
 * when the directory changed: a stat per look (an entry added, removed or renamed changes its
 * times). null where there is no such directory. `version` names what was read.
 */
export class ReadDirectories<T> {
  private readonly known = new Map<string, { version: string; value: T }>();

  constructor(private readonly read: (dir: string) => T) {}

  get(dir: string): { version: string; value: T } | null {
    const stats = statSync(dir, { throwIfNoEntry: false });
    if (!stats?.isDirectory()) {
      this.known.delete(dir);
      return null;
    }
    const version = `${stats.dev}:${stats.ino}:${stats.mtimeMs}:${stats.ctimeMs}`;
    const known = this.known.get(dir);
    if (known?.version === version) return known;
    const read = { version, value: this.read(dir) };
    this.known.set(dir, read);
    return read;
  }
}

/** A file a person named (a script, a config) that could not be read: `message` says why, in words. */
export class UnreadableFileError extends Error {
  override name = "UnreadableFileError";
  constructor(
    why: string,
    /** The system's code (ENOENT, …), when it gave one. */
    readonly code: string | null,
  ) {
    super(why);
  }
}

/**
 * The bytes of `file`, a path a person named on the command line, or null once it holds more
 * than `limitBytes`: it may be a pipe or a device as well as a file, and must not decide how much
 * tacit holds (/dev/zero never ends). A directory, or a file that cannot be opened or read, is an
 * UnreadableFileError.
 */
export function readNamedFile(file: string, limitBytes: number): Buffer | null {
  return withNamedFile(file, (fd) => readOpenedFile(fd, limitBytes));
}

/**
 * `use` given `file` opened for reading (an UnreadableFileError where it cannot be opened), and
 * the descriptor closed after: for a caller that judges what it read by the descriptor (where it
 * leads, its device and inode) rather than by the name, which may lead elsewhere a moment later.
 */
export function withNamedFile<T>(file: string, use: (fd: number) => T): T {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    throw unreadable(error);
  }
  try {
    return use(fd);
  } finally {
    closeSync(fd);
  }
}

/** The bytes of the open `fd`, as readNamedFile reads them: null past `limitBytes`, a directory an UnreadableFileError. */
export function readOpenedFile(fd: number, limitBytes: number): Buffer | null {
  try {
    if (fstatSync(fd).isDirectory()) throw new UnreadableFileError("it is a directory", "EISDIR");
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, limitBytes + 1 - size));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) return Buffer.concat(chunks, size);
      size += n;
      if (size > limitBytes) return null;
      chunks.push(chunk.subarray(0, n));
    }
  } catch (error) {
    throw error instanceof UnreadableFileError ? error : unreadable(error);
  }
}

/** A failure to open or read, in words for the common cases, else the error's code. */
function unreadable(error: unknown): UnreadableFileError {
  const code = (error as NodeJS.ErrnoException).code ?? null;
  return new UnreadableFileError(code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : (code ?? String(error)), code);
}
