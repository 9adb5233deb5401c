// Which commands may run. Decided on the command's name alone: the host then finds the
// program on its own PATH, so a name cannot smuggle in a path the agent chose. What a
// permitted command then does is not decided here: it runs with the user's full authority.

import path from "node:path";
import { NAME_MAX_BYTES, realProgramOf } from "./program-path.js";
import { printable } from "../printable.js";
import { MULTI_CALL_PROGRAMS, type StrictMatch, strictDeniedOption, strictMatch, strictResponseFileArgument } from "./strict-denylist.js";

export interface CommandPolicy {
  /** Globs (`*` only) matched against the whole command name; null when unset. */
  commandPermissions: readonly string[] | null;
  strictMode: boolean;
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

/**
 * Why --strict refuses `command`, judged by its name and by the file the name really runs
 * (`editor` → vim.basic, `rbash` → bash), or null. A multi-call binary (BusyBox) is judged by
 * the name alone, since that name is what it acts as.
 */
function strictRefusal(command: string): string | null {
  let match: StrictMatch | null = strictMatch(command);
  let via = "";
  if (match === null) {
    const real = realProgramOf(command);
    const realName = real === null ? null : path.basename(real);
    if (realName !== null && !MULTI_CALL_PROGRAMS.has(realName.toLowerCase())) {
      match = strictMatch(realName);
      via = ` (it runs ${real})`;
    }
  }
  if (match === null) return null;
  return (
    `"${command}" is refused under --strict${via}: it is ${match.group.kind} (${match.family}), and ${match.group.why}. ` +
    "--strict refuses such programs for convenience; it is not a confinement. The operator can permit named commands with " +
    "--command-permissions, knowing that a permitted command runs with the user's full authority"
  );
}

/** Why --strict refuses `command` run with `args`: one of the few options that make an allowed tool echo a file. */
function strictOptionRefusal(command: string, args: readonly string[]): string | null {
  const option = strictDeniedOption(command, args);
  if (option === null) return null;
  return (
    `the option ${printable(option)} of "${command}" is refused under --strict: with it, ${command} reads a file it is given and ` +
    "prints its lines in its messages, past --allowed-roots and --classified-paths. Read files with requestFileSystem; the " +
    "operator can permit the command outright with --command-permissions"
  );
}

/** Why --strict refuses `command` run with `args`: an argument that many programs read as a file of more arguments. */
function strictResponseFileRefusal(command: string, args: readonly string[]): string | null {
  const argument = strictResponseFileArgument(args);
  if (argument === null) return null;
  return (
    `the argument ${printable(argument)} of "${command}" begins with "@", which is refused under --strict: binutils, LLVM's tools, ` +
    "compilers and other programs read such an argument as a file of more arguments and print its words in their output or " +
    "messages, past --allowed-roots and --classified-paths. To name a file whose name begins with @, give it as ./@name; read " +
    "files with requestFileSystem; the operator can permit the command outright with --command-permissions"
  );
}

/** Why the policy refuses `command` (run with `args`, when known), or null when it may run. */
export function commandRefusal(command: string, policy: CommandPolicy, args: readonly string[] = []): string | null {
  if (command === "" || command.includes("/") || command.includes("\0")) {
    return `"${command}" is not a command name: give the name alone (like "git"); the host finds the program on its own PATH`;
  }
  // Refused before it is matched against anything: each check costs its length, and under --strict
  // a requestExecPermission of 1,000 names of 3,000 characters held tacit's main thread ~0.9 s (every
  // session of a tacit serve waiting), for names no program on PATH can have.
  if (Buffer.byteLength(command) > NAME_MAX_BYTES) {
    return `"${command.slice(0, 40)}…" (${Buffer.byteLength(command)} bytes) is not a command name: no file has a name longer than ${NAME_MAX_BYTES} bytes, so no program on PATH has it; give the program's name`;
  }
  if (policy.commandPermissions !== null) {
    if (policy.commandPermissions.some((glob) => globToRegExp(glob).test(command))) return null;
    return `"${command}" is not among the permitted commands (${policy.commandPermissions.join(", ") || "none"}); the operator can add it with --command-permissions (config libraryConfig.commandPermissions)`;
  }
  if (policy.strictMode) return strictRefusal(command) ?? strictResponseFileRefusal(command, args) ?? strictOptionRefusal(command, args);
  return `no command may run: the operator has set neither --command-permissions (config libraryConfig.commandPermissions) nor --strict (config libraryConfig.strictMode)`;
}
