// Reading the script: a file, or standard input for `-`. Light, so the CLI can start the
// checks before it loads the rest.

import { fstatSync } from "node:fs";
import path from "node:path";
import { readOpenedFile, UnreadableFileError, withNamedFile } from "../runner/bounded-file.js";
import { originOfDescriptor, type ScriptOrigin } from "./script-origin.js";
import { InputTooLargeError, readStdin, STDIN_DESCRIPTOR } from "./stdin.js";
import { withStopSignalsAtDefault } from "./stop-signals.js";
import { UsageError } from "./usage.js";

/**
 * The largest script tacit reads: as much code as a REPL session keeps in all (runner/limits.ts
 * SESSION_CODE_LIMIT_CHARS), more than an MCP client sends in one message. It was unbounded:
 * `tacit run /dev/zero` (or a mistyped path to a large file) grew tacit's heap until it died
 * with std::bad_alloc.
 */
export const SCRIPT_LIMIT_BYTES = 16 * 1024 * 1024;

/** A path that names one of tacit's own descriptors (see runner/inherited-descriptors.ts). */
const INHERITED_DESCRIPTOR = /^\/(?:dev|proc\/self)\/fd\/\d+$/;

function scriptTooLarge(what: string): string {
  return (
    `${what} is larger than ${SCRIPT_LIMIT_BYTES / (1024 * 1024)} MiB, more than tacit checks as one script. A script is code; ` +
    "pass data to it through readInput() (pipe it to tacit run), or have it read a file with requestFileSystem."
  );
}

/** What stack frames and messages call a script that came from standard input. */
export const STDIN_DISPLAY_NAME = "script.ts";

export interface ScriptSource {
  code: string;
  displayName: string;
  fromStdin: boolean;
  /** Where what was read came from, taken from the descriptor it was read through (cli/script-refusal.ts judges it). */
  origin: ScriptOrigin;
}

export async function readScript(target: string): Promise<ScriptSource> {
  if (target === "-") {
    refuseDirectoryOnStdin();
    try {
      const code = await readStdin({ limitBytes: SCRIPT_LIMIT_BYTES, emptyWhenInteractive: false, tooLarge: () => scriptTooLarge("the script on standard input") });
      return { code, displayName: STDIN_DISPLAY_NAME, fromStdin: true, origin: originOfDescriptor(0, STDIN_DESCRIPTOR) };
    } catch (error) {
      if (error instanceof InputTooLargeError) throw new UsageError(error.message);
      throw error;
    }
  }
  return { ...readScriptFile(target), displayName: target, fromStdin: false };
}

/**
 * Refuses a directory as standard input (`tacit run - < dir`, a mistyped redirection): Node reads
 * one as nothing, and tacit ran an empty script and exited 0, as if the script had run.
 */
function refuseDirectoryOnStdin(): void {
  let isDirectory = false;
  try {
    isDirectory = fstatSync(0).isDirectory();
  } catch {
    // No standard input at all: read as before, which fails on its own terms.
  }
  if (isDirectory) {
    throw new UsageError("the script on standard input: standard input is a directory, not a script. Redirect a .ts file (tacit run - < script.ts), or name it (tacit run script.ts).");
  }
}

/**
 * The file's text, read up to the limit (a pipe, such as bash's <(…), is read as it comes), and
 * where the descriptor it was read through leads: opened once, and judged by what was opened.
 */
function readScriptFile(target: string): { code: string; origin: ScriptOrigin } {
  let code: Buffer | null;
  let origin: ScriptOrigin;
  try {
    // A FIFO there waits for a writer: a stop signal ends tacit meanwhile (see withStopSignalsAtDefault).
    [code, origin] = withStopSignalsAtDefault(() =>
      withNamedFile(target, (fd) => [readOpenedFile(fd, SCRIPT_LIMIT_BYTES), originOfDescriptor(fd, path.resolve(target))] as const),
    );
  } catch (error) {
    if (!(error instanceof UnreadableFileError)) throw error;
    if (error.code === "ENOENT" && INHERITED_DESCRIPTOR.test(target)) {
      throw new UsageError(
        `cannot read the script "${target}": tacit closes the descriptors it was given beyond stdin, stdout and stderr before it ` +
          "starts anything (the sandbox or a permitted command could use them), so a script passed as a descriptor, such as bash's " +
          "<(…), is gone by the time tacit reads it. Pipe it instead: `… | tacit run -`.",
      );
    }
    throw new UsageError(`cannot read the script "${target}": ${error.message}. Pass a .ts file, or - to read the script from standard input.`);
  }
  if (code === null) throw new UsageError(scriptTooLarge(`the script "${target}"`));
  return { code: code.toString("utf8"), origin };
}
