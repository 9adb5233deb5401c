// What a person allowed beyond the static allowlists, for one run (a beyondAllowlist rule
// answered yes). The executors consult these alongside the configured allowlists.

import type { ActionRequest } from "./action-request.js";
import { type HostPattern, patternMatches } from "../net/host-policy.js";
import { isWithin } from "../fs/containment.js";

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
  private readonly askedAs = new Map<string | HostPattern, ActionRequest>();

  grantCommand(command: string, asked: ActionRequest): void {
    this.commands.add(command);
    this.askedAs.set(command, asked);
  }

  grantHost(pattern: HostPattern, asked: ActionRequest): void {
    this.hosts.push(pattern);
    this.askedAs.set(pattern, asked);
  }

  grantRoot(real: string, asked: ActionRequest): void {
    this.roots.push(real);
    this.askedAs.set(real, asked);
  }

  /** What the person was asked about for the grant of `command`, if it was granted. */
  commandAskedAs(command: string): ActionRequest[] {
    return this.commands.has(command) ? this.asked(command) : [];
  }

  /** What the person was asked about for each granted host that `url` matches. */
  hostsAskedAs(url: URL): ActionRequest[] {
    return this.hosts.filter((pattern) => patternMatches(pattern, url)).flatMap((pattern) => this.asked(pattern));
  }

  /** What the person was asked about for each granted root that `real` (a real path) lies in. */
  rootsAskedAs(real: string): ActionRequest[] {
    return this.roots.filter((granted) => isWithin(real, granted)).flatMap((granted) => this.asked(granted));
  }

  private asked(granted: string | HostPattern): ActionRequest[] {
    const request = this.askedAs.get(granted);
    return request === undefined ? [] : [request];
  }
}
