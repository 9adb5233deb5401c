// The first things tacit does. It closes the descriptors it inherited that would pass on to
// what it starts (see inherited-descriptors.ts). `tacit run` then starts its sandbox, before
// the rest of tacit loads, so that Deno boots while Node loads and checks. It is a guess from
// the raw arguments; the run command uses it only if it matches the final options, and
// otherwise discards it. With a --config nothing is started here: the run command reads and
// validates the file first, and a config that fails refuses before any Deno boots.

import { DEFAULT_MEMORY_LIMIT_MB } from "../runner/limits.js";
import { SandboxProcess } from "../runner/sandbox-process.js";

export { closeInheritedDescriptors } from "../runner/inherited-descriptors.js";

/**
 * The run command's options (cli/main.ts), each with whether it takes a value: a command line
 * with any other word starting with "-" is one the CLI refuses (exit 2), and nothing is started
 * for it. test/cli/prestart-guess.test.ts holds this list to the command's own.
 */
export const RUN_OPTIONS: ReadonlyMap<string, boolean> = new Map([
  ["--json", false],
  ["--config", true],
  ["--no-check", false],
  ["--exec-timeout-ms", true],
  ["--memory-limit-mb", true],
  ["--allowed-roots", true],
  ["--classified-paths", true],
  ["--command-permissions", true],
  ["--strict", false],
  ["--confine-commands", false],
  ["--network-permissions", true],
  ["--llm-base-url", true],
  ["--llm-api-key", true],
  ["--llm-model", true],
  ["--secure-output", true],
  ["--record", true],
  ["--audit-log", true],
  ["--require-network-namespace", false],
  ["--no-network-namespace", false],
  ["--yes", false],
  ["--quiet", false],
]);

/**
 * Whether `words` (what follows "run") could be a command line the run command takes: only its
 * options, each value present, and one script. An unknown option, a missing value or a second
 * script is refused by the CLI once it has parsed them, and --help (not one of RUN_OPTIONS) runs
 * nothing; a sandbox started for such a line noted its network-namespace probe in tacit's home,
 * making ~/.config/tacit for a typo, or for `tacit run --help`.
 */
function mayBeRunCommand(words: readonly string[]): boolean {
  let scripts = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === "--") {
      scripts += words.length - i - 1;
      break;
    }
    if (word === "-" || !word.startsWith("-")) {
      scripts++;
      continue;
    }
    const equals = word.indexOf("=");
    const takesValue = RUN_OPTIONS.get(equals === -1 ? word : word.slice(0, equals));
    if (takesValue === undefined || (equals !== -1 && !takesValue)) return false;
    if (takesValue && equals === -1 && ++i >= words.length) return false;
  }
  return scripts === 1;
}

export function prestartFromArgv(argv: readonly string[]): SandboxProcess | undefined {
  if (argv[2] !== "run") return undefined;
  if (!mayBeRunCommand(argv.slice(3))) return undefined;
  if (argv.some((arg) => arg === "--config" || arg.startsWith("--config="))) return undefined;
  // Nor with --no-network-namespace (seen anywhere, a guess): started here, before the options
  // are read, the sandbox would be probed for and started in a namespace, where the host may have
  // run out of them (the reason to pass it). The run command, once its options are parsed,
  // starts the sandbox as they say.
  if (argv.includes("--no-network-namespace")) return undefined;
  const flag = argv.indexOf("--memory-limit-mb");
  const memoryLimitMb = flag === -1 ? DEFAULT_MEMORY_LIMIT_MB : Number(argv[flag + 1]);
  // A malformed value is the CLI's to report; start nothing.
  if (!Number.isInteger(memoryLimitMb) || memoryLimitMb <= 0) return undefined;
  return new SandboxProcess({ memoryLimitMb });
}
