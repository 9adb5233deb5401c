// Node's own debug output (NODE_DEBUG), which prints what tacit's requests are made of: with its
// http or net section on, each request's connection options went to tacit's stderr, secret
// headers in plaintext among them, where whoever reads tacit's output (an agent that ran it from
// a shell) read them. NODE_DEBUG is read once, as Node starts, so tacit cannot turn it off.

import { debuglog } from "node:util";

/** The sections of NODE_DEBUG whose output holds a request's headers: checked the way Node does (`*`, `ht*`, case aside). */
const SECTIONS_WITH_HEADERS = ["http", "https", "net"] as const;

/** The NODE_DEBUG sections on that would print a request's headers, or [] for none. */
export function headerPrintingDebugSections(): string[] {
  return SECTIONS_WITH_HEADERS.filter((section) => debuglog(section).enabled);
}

/**
 * Why a request with secret headers is refused while Node prints requests' headers, or null when
 * it does not. Decided by the environment and whether the request has secret headers, both the
 * script's to know: the refusal says nothing of a secret.
 */
export function secretHeadersPrintedBecause(hasSecretHeaders: boolean): string | null {
  if (!hasSecretHeaders) return null;
  const sections = headerPrintingDebugSections();
  if (sections.length === 0) return null;
  return (
    `NODE_DEBUG in tacit's environment (${JSON.stringify(process.env.NODE_DEBUG ?? "")}) turns on Node's debug output for ${sections.join(", ")}, ` +
    "which prints each request's headers to stderr, secret ones in plaintext; nothing was sent. The operator can run tacit without NODE_DEBUG " +
    "(or with those sections left out of it) to send secretHeaders; a request without them is sent as usual"
  );
}
