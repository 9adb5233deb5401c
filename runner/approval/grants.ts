// What a person allowed beyond the static allowlists, for one run (a beyondAllowlist rule
// answered yes). The executors consult these alongside the configured allowlists.

import type { HostPattern } from "../net/host-policy.js";

export class RunGrants {
  /** Real paths a file-system scope may be opened in, besides allowedRoots. */
  readonly roots: string[] = [];
  /** Command names that may run, besides commandPermissions / --strict. */
  readonly commands = new Set<string>();
  /** Host patterns (literal hosts) that may be reached, besides networkPermissions. */
  readonly hosts: HostPattern[] = [];
}
