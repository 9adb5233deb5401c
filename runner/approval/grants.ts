// What a person allowed beyond the static allowlists, for one run (a beyondAllowlist rule
// answered yes). The executors consult these alongside the configured allowlists.

import type { ActionRequest } from "./action-request.js";
import type { HostPattern } from "../net/host-policy.js";

export class RunGrants {
  /** Real paths a file-system scope may be opened in, besides allowedRoots. */
  readonly roots: string[] = [];
  /** Command names that may run, besides commandPermissions / --strict. */
  readonly commands = new Set<string>();
  /** Host patterns (literal hosts) that may be reached, besides networkPermissions. */
  readonly hosts: HostPattern[] = [];
  /**
   * What the person was asked about for each grant above, keyed by its command, host pattern or
   * root (a root is absolute; a command granted holds no "/"): the beyondAllowlist rules their yes
   * answered for are the ones that match it (TierPolicy.tierOf). A root covers what lies below it,
   * where another such rule may ask more (always-ask on data/private/** under a yes to data/).
   */
  readonly askedAs = new Map<string | HostPattern, ActionRequest>();
}
