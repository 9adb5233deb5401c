// Which files tacit refuses to take as a script: those the policy says hold secrets. The checks'
// messages quote a script's names (`AWS_SECRET` is not defined…), and whoever runs tacit reads
// them: `tacit run .env` (or a script.ts linked to ~/.aws/credentials) printed a secret's words to
// an agent whose scripts are refused that file. Loaded after the config, with the file system
// policy's modules, which the evaluation loads anyway.

import path from "node:path";
import { RECORD_DIRECTORY_WHAT } from "../runner/client-settings.js";
import type { RunnerConfig } from "../runner/config.js";
import { ClassifiedPaths } from "../runner/fs/classified-paths.js";
import { protectedPathOf, protectedPathsOf } from "../runner/fs/protected-paths.js";
import { printable } from "../runner/printable.js";
import type { ScriptOrigin } from "./script-origin.js";
import { UsageError } from "./usage.js";

/** The script target that names standard input, and the descriptor it is read from. */
const STDIN_TARGET = "-";
const STDIN_DESCRIPTOR = "/proc/self/fd/0";

/**
 * Throws a UsageError if the script file `target` (as given on the command line; "-" for standard
 * input), or what was read for it (`origin`, where the descriptor it was read through leads: see
 * script-origin.ts), is a classified path or one of the files tacit refuses every script (its
 * home, holding the audit signing key; a config holding the LLM key; a secure output's plaintext;
 * procfs), but a record directory.
 */
export function refuseSecretScript(target: string, origin: ScriptOrigin, config: RunnerConfig, cwd: string = process.cwd()): void {
  // Judged by what was read, not by where the name leads now: a link swapped between the read and
  // a look by name had a classified file's words run and quoted while this saw a harmless file.
  // "-" is standard input, judged where its descriptor leads the same way: `tacit run - < .env` is
  // the same file as `tacit run .env`. A pipe or terminal leads to no file.
  const named = target === STDIN_TARGET ? STDIN_DESCRIPTOR : path.resolve(cwd, target);
  const shown = target === STDIN_TARGET ? "on standard input" : `"${printable(target)}"`;
  // Standard input that is a pipe or a socket is no file and holds no file's secret, whatever the
  // classified paths name (a pattern "/dev/stdin" leads to the same descriptor, and refused
  // every piped script: test/files/proc.test.ts).
  if (target === STDIN_TARGET && origin.kind === "stream") return;
  if (origin.kind === "moved") {
    throw new UsageError(
      `the script ${shown} was renamed or replaced while tacit read it (it is now ${printable(origin.real)}), so tacit cannot tell ` +
        "whether what it read is a classified file: nothing was run. Run it again once nothing is moving it.",
    );
  }
  const real = origin.kind === "file" ? origin.real : named;
  // Printable: where a link leads is a name its maker chose (a command a script ran), and tacit writes
  // this on its stderr as it is: a link to ".env.\x1b]0;…\x07\ntacit: warning: …" retitled the
  // person's terminal and started a line that read as tacit's own.
  const where = real === named ? printable(named) : `${printable(named)}, which leads to ${printable(real)}`;
  if (new ClassifiedPaths(config.library.classifiedPaths).isClassified(named, real)) {
    throw new UsageError(
      `the script ${shown} is a classified path (${where}): tacit does not read a secret as a script, since the checks' ` +
        "messages would quote its words. Give a script file outside the classified paths; to use the secret, have the script read it with readClassified().",
    );
  }
  if (origin.kind === "stream") return;
  // Judged where it leads, which holds the bytes: /proc/self/fd/0 given a file on stdin is that file.
  // But for record directories: they hold scripts and what they printed, no secret, and a person's
  // scripts may lie in one (`--record .` made every script of the directory refused, in later runs too).
  const holdingSecrets = protectedPathsOf(config).filter((owned) => !owned.what.startsWith(RECORD_DIRECTORY_WHAT));
  const owned = protectedPathOf(holdingSecrets, real, real, "read");
  if (owned !== null) {
    throw new UsageError(
      `the script ${shown} is ${owned.what} (${where}), which scripts are refused: tacit does not read it as a script either, ` +
        "since the checks' messages would quote its words. Give a script file of your own.",
    );
  }
}
