// The words of a refused redirect, shared by the policy's check of a hop (executor.ts) and the
// address check made as the hop's address is looked up (http-client.ts). Its own module: the
// executor loads http-client.ts only on a first request (node:http and TLS cost start-up time).

import { chosen, type Said } from "./server-text.js";

/**
 * A refusal of a redirect's target, saying it was a redirect: the host or address it names is one
 * the server chose, not the script, which would otherwise read a refusal of a URL it never gave.
 * Named by the first request's origin (in a chain, an earlier hop may be the one that redirected).
 */
export function redirectNotFollowed(say: Said, first: URL, target: URL, reason: string): string {
  return say`the request to ${first.origin} was redirected to ${chosen(target.href)}, which tacit did not follow: ${reason}`;
}
