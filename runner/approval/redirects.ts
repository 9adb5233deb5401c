// Redirects under the approval policy. The gate decides a request by its URL, before it is
// sent; the HTTP client then follows redirects that the allowlists permit. A hop to a host
// (or with a method) that a rule puts a person in front of would reach it without anyone
// being asked, under the first URL's pattern in the log: a security review had a 307 from a
// permitted host carry a POST, body and all, to an always-ask host. Such a hop is not followed.

import { queryMethodOverrides, urlPattern } from "./action-request.js";
import type { RunGrants } from "./grants.js";
import type { TierPolicy } from "./policy.js";

export interface HttpHop {
  method: string;
  url: URL;
}

/** Why the hop from `first` to `next` needs a person (and is not followed), or null when it may be followed. */
export type RedirectVetting = (first: HttpHop, next: HttpHop) => string | null;

export function redirectVetting(policy: TierPolicy, grants: RunGrants): RedirectVetting | null {
  if (policy.empty) return null;
  return (first, next) => {
    const pattern = urlPattern(next.method, next.url);
    // The same pattern as the request the gate decided: its decision (a yes included) covers it.
    if (pattern === urlPattern(first.method, first.url)) return null;
    const method = next.method.toUpperCase();
    // A hop that keeps the method keeps the body (307, 308), which may name another method for the
    // server to take (`_method=DELETE`: see methodOverrides), out of sight here; its query is read.
    const overrides = method === "GET" || method === "HEAD" ? queryMethodOverrides(next.url) : "any";
    const request = { category: "net", pattern, subject: { kind: "url", method, url: next.url, overrides } } as const;
    const tier = policy.tierOf(request, { extendedBy: grants.hostsAskedAs(next.url) });
    return tier === "allow" ? null : `${pattern} (${tier})`;
  };
}
