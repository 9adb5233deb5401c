// Where the script tacit read came from, taken from the descriptor it was read through, not from
// its name. The name is only where to open: a link swapped between the read and a second look by
// name (tacit judged whether the script is a classified file by its name, after reading it) had a
// classified file's words checked, quoted in errors and run while the judgement saw a harmless
// file. A descriptor leads where it was opened, whatever the name leads to next. Shared by a named
// script and by standard input (`tacit run -`, judged through descriptor 0 the same way).

import { fstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import path from "node:path";

export type ScriptOrigin =
  /** No file: a pipe, a socket, an anonymous descriptor (a script piped in). */
  | { kind: "stream" }
  /** The file read, by its real path (for a file unlinked since it was opened, the path it had). */
  | { kind: "file"; real: string }
  /** Renamed or replaced between the read and the look at where it leads: nothing can be judged. */
  | { kind: "moved"; real: string };

/**
 * Where the open `fd` leads. `named` is the name it was opened by (absolute), judged instead only
 * where the system gives no descriptor's path (no /proc, as on macOS).
 */
export function originOfDescriptor(fd: number, named: string): ScriptOrigin {
  let target: string;
  try {
    target = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return { kind: "file", real: realOrSelf(named) };
  }
  // pipe:[…], socket:[…], anon_inode:[…]: a descriptor of no file.
  if (!target.startsWith("/")) return { kind: "stream" };
  const opened = fstatSync(fd);
  // Unlinked since it was opened (a shell's here-document is a deleted temporary file): judged by
  // the name it had, which the system gives with " (deleted)" after it.
  const deleted = " (deleted)";
  if (opened.nlink === 0 && target.endsWith(deleted)) return { kind: "file", real: target.slice(0, -deleted.length) };
  // The path is where the descriptor's file is now; it names that same file unless something moved in between.
  const there = statSync(target, { throwIfNoEntry: false });
  if (there === undefined || there.dev !== opened.dev || there.ino !== opened.ino) return { kind: "moved", real: target };
  return { kind: "file", real: target };
}

function realOrSelf(named: string): string {
  try {
    return realpathSync(named);
  } catch {
    return path.resolve(named);
  }
}
