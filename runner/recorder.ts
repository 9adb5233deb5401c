// --record DIR: every executed script or snippet, appended as one JSON line with its session,
// result and timing (TACIT's --record). What is recorded is what the agent saw: classified
// values appear only as Classified(***), secret header values never.

import { closeSync, constants, fstatSync, writeSync } from "node:fs";
import path from "node:path";
import type { EvaluationResult } from "./evaluate.js";
import { printable, terminalSafe } from "./printable.js";
import { type FoundRecordDirectory, openRecordFile, prepareRecordDirectory } from "./record-directory.js";

export interface RecordEntry {
  kind: "run" | "execute_typescript" | "execute_in_session" | "repl";
  sessionId?: string;
  code: string;
  result: EvaluationResult;
}

const RECORD_FILE_NAME = "tacit-record.jsonl";

export class Recorder {
  private readonly file: string;
  /** The directory as this process last found it (record-directory.ts). */
  private readonly found: FoundRecordDirectory = { identity: null, realPath: null };

  constructor(private readonly dir: string) {
    this.file = path.join(dir, RECORD_FILE_NAME);
  }

  /** Whether the directory may be written now (made, or made anew, where missing); says why not on stderr. */
  private prepared(): boolean {
    const problem = prepareRecordDirectory(this.dir, process.env, this.found);
    // Printable: it quotes where a link put in place of a directory on the way leads now, a name
    // its maker (a command a script ran) chose: "\x1b]52;c;…\x07\ntacit: warning: …" set the
    // person's clipboard and started a line of tacit's own.
    if (problem !== null) process.stderr.write(`tacit: --record: ${printable(problem)}\n`);
    return problem === null;
  }

  append(entry: RecordEntry): void {
    const { outcome, exitCode, stdout, error, durationMs, truncated, warnings } = entry.result;
    const line = {
      at: new Date().toISOString(),
      kind: entry.kind,
      ...(entry.sessionId ? { sessionId: entry.sessionId } : {}),
      code: entry.code,
      outcome,
      exitCode,
      stdout,
      error,
      durationMs,
      truncated,
      warnings,
    };
    // JSON.stringify escapes C0 controls but leaves DEL and the C1 controls (CSI, OSC, ST…) raw
    // in strings, and a person reads the record with cat or tail -f: terminalSafe writes them
    // as \u009d-style escapes, the same characters to a JSON parser.
    // Checked again at each record: a directory deleted meanwhile is made anew, one replaced refused.
    if (!this.prepared()) return;
    const problem = this.write(terminalSafe(JSON.stringify(line)) + "\n");
    if (problem !== null) process.stderr.write(`tacit: --record: ${printable(`${this.file} ${problem}`)}; nothing was recorded\n`);
  }

  /**
   * Appends to the record file itself, never through a link: a symlink or hard link put there
   * (by a command a script may run, say `ln` or `git checkout`) would send the record, code
   * the script chose included, into a file outside the allowed roots. Checked on the
   * descriptor written. Opened in the directory as prepared() checked it (openRecordFile), not
   * by its path. Returns what was wrong, or null.
   */
  private write(text: string): string | null {
    let fd: number;
    try {
      // O_NONBLOCK: a FIFO put there would otherwise hold the open (and tacit) until read.
      const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
      const opened = openRecordFile(this.found, RECORD_FILE_NAME, flags, 0o600);
      if (typeof opened !== "number") return opened.refused;
      fd = opened;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === "ELOOP" ? "is a symbolic link" : `cannot be opened (${code ?? (error as Error).message})`;
    }
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return "is not a regular file";
      if (stat.nlink !== 1) return "has other names (a hard link)";
      if (typeof process.getuid === "function" && stat.uid !== process.getuid()) return "belongs to another user";
      writeSync(fd, text);
      return null;
    } finally {
      closeSync(fd);
    }
  }
}
