// The first things tacit does. It closes the descriptors it inherited that would pass on to
// what it starts (see inherited-descriptors.ts). `tacit run` then starts its sandbox, before
// the rest of tacit loads, so that Deno boots while Node loads and checks. It is a guess from
// the raw arguments; the run command uses it only if it matches the final options, and
// otherwise discards it. With a --config nothing is started here: the run command reads and
// validates the file first, and a config that fails refuses before any Deno boots.

import { DEFAULT_MEMORY_LIMIT_MB } from "../runner/limits.js";
import { SandboxProcess } from "../runner/sandbox-process.js";

export { closeInheritedDescriptors } from "../runner/inherited-descriptors.js";

export function prestartFromArgv(argv: readonly string[]): SandboxProcess | undefined {
  if (argv[2] !== "run") return undefined;
  if (argv.some((arg) => arg === "--config" || arg.startsWith("--config="))) return undefined;
  // Nor for help, which runs nothing: a started sandbox probes for its network namespace and notes
  // what it found in tacit's home, so `tacit run --help` made ~/.config/tacit.
  if (argv.includes("--help") || argv.includes("-h")) return undefined;
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
