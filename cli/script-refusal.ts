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
import { STDIN_DESCRIPTOR } from "./stdin.js";
import { UsageError } from "./usage.js";

/** The script target that names standard input. */
const STDIN_TARGET = "-";

/**
 * Why the file `real` (the named path `named` leads there) is not given to scripts, or null: a
 * classified path, or one of the files tacit refuses every script that hold secrets (its home,
 * holding the audit signing key; a config holding the LLM key; a secure output's plaintext;
 * procfs), but a record directory, which holds scripts and what they printed.
 */
function secretFileOf(named: string, real: string, config: RunnerConfig): { classified: true } | { classified: false; what: string } | null {
  if (new ClassifiedPaths(config.library.classifiedPaths).isClassified(named, real)) return { classified: true };
  // But for record directories: a person's scripts may lie in one (`--record .` made every
  // script of the directory refused, in later runs too).
  const holdingSecrets = protectedPathsOf(config).filter((owned) => !owned.what.startsWith(RECORD_DIRECTORY_WHAT));
  const owned = protectedPathOf(holdingSecrets, real, real, "read");
  return owned === null ? null : { classified: false, what: owned.what };
}

/** How a refusal names `real`, reached by the name `named`. */
function whereOf(named: string, real: string): string {
  // Printable: where a link leads is a name its maker chose (a command a script ran), and tacit writes
  // this on its stderr as it is: a link to ".env.\x1b]0;…\x07\ntacit: warning: …" retitled the
  // person's terminal and started a line that read as tacit's own.
  return real === named ? printable(named) : `${printable(named)}, which leads to ${printable(real)}`;
}

/**
 * Throws a UsageError if the script file `target` (as given on the command line; "-" for standard
 * input), or what was read for it (`origin`, where the descriptor it was read through leads: see
 * script-origin.ts), is a classified path or one of the files tacit refuses every script (see
 * secretFileOf).
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
  const secret = origin.kind === "stream" ? classifiedOnly(named, real, config) : secretFileOf(named, real, config);
  if (secret === null) return;
  if (secret.classified) {
    throw new UsageError(
      `the script ${shown} is a classified path (${whereOf(named, real)}): tacit does not read a secret as a script, since the checks' ` +
        "messages would quote its words. Give a script file outside the classified paths; to use the secret, have the script read it with readClassified().",
    );
  }
  throw new UsageError(
    `the script ${shown} is ${secret.what} (${whereOf(named, real)}), which scripts are refused: tacit does not read it as a script either, ` +
      "since the checks' messages would quote its words. Give a script file of your own.",
  );
}

/** A named script read through no file (a pipe, as `<(…)` gives one): judged by its name, classified or not, as before. */
function classifiedOnly(named: string, real: string, config: RunnerConfig): { classified: true } | null {
  return new ClassifiedPaths(config.library.classifiedPaths).isClassified(named, real) ? { classified: true } : null;
}

/**
 * Why readInput() may not give the script what standard input holds, or null where it may: when
 * standard input is a file (`tacit run s.ts < .env`, judged where descriptor 0 leads, as a script
 * is) that is classified or one the file tools refuse every script, its plaintext would reach
 * the script that the policy keeps it from. A pipe, a terminal or a socket is no file: what comes
 * through it is the piping program's (`cat .env | tacit run s.ts` cannot be told apart).
 */
export function secretInputRefusal(origin: ScriptOrigin, config: RunnerConfig): string | null {
  if (origin.kind === "stream") return null;
  if (origin.kind === "moved") {
    return (
      `readInput(): standard input is a file that was renamed or replaced (it is now ${printable(origin.real)}), so tacit cannot tell ` +
      "whether it is a classified file; nothing was read. Run it again once nothing is moving it, or pipe the data in."
    );
  }
  const secret = secretFileOf(STDIN_DESCRIPTOR, origin.real, config);
  if (secret === null) return null;
  const where = whereOf(STDIN_DESCRIPTOR, origin.real);
  return secret.classified
    ? `readInput(): standard input is a classified file (${where}); scripts are not given a classified file's plaintext, and nothing was read. ` +
        "To work with the secret, have the script read it with requestFileSystem(root, fs => fs.access(path).readClassified()) and use map/flatMap; " +
        "to give the script ordinary data, redirect an unclassified file or pipe it in."
    : `readInput(): standard input is ${secret.what} (${where}), which scripts are refused; nothing was read. Redirect a file of your own, or pipe the data in.`;
}
