// Which hosts a script may reach. A pattern is a host glob (`*` within the name, never
// across the dot before the rest: "*.example.com" matches "api.example.com", not
// "example.com" or "evil-example.com"), with an optional ":port" (":*" for any port);
// without a port, only the scheme's default port matches.

import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { z } from "zod";

export interface HostPattern {
  source: string;
  /** Whether a host (lower case, IPv6 without brackets) matches the pattern's host part. */
  host: HostMatcher;
  /** The host part has no `*`: naming it allows it even at a restricted address. */
  literalHost: string | null;
  /** null: the scheme's default port; "*": any port. */
  port: number | "*" | null;
}

export class HostPatternError extends Error {
  override name = "HostPatternError";
}

export function parseHostPattern(source: string): HostPattern {
  const trimmed = source.trim().toLowerCase();
  let host = trimmed;
  let port: HostPattern["port"] = null;
  const bracketed = /^\[([^\]]+)\](?::(\d+|\*))?$/.exec(trimmed);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2] === undefined ? null : bracketed[2] === "*" ? "*" : Number(bracketed[2]);
  } else if (/^[^:]+:(\d+|\*)$/.test(trimmed)) {
    const colon = trimmed.lastIndexOf(":");
    host = trimmed.slice(0, colon);
    const raw = trimmed.slice(colon + 1);
    port = raw === "*" ? "*" : Number(raw);
  }
  const badHost = host === "" || /[/@?#\s[\]]/.test(host) || (host.includes(":") && !bracketed) || (bracketed !== null && !host.includes(":"));
  const canonical = badHost ? null : canonicalHost(host, bracketed !== null, source);
  if (canonical === null || (typeof port === "number" && (!Number.isInteger(port) || port < 1 || port > 65535))) {
    throw new HostPatternError(`"${source}" is not a host pattern (like "api.example.com", "*.example.com:8443" or "127.0.0.1:*")${whatIsWrong(trimmed, port)}`);
  }
  return { source, host: hostMatcher(canonical), literalHost: canonical.includes("*") ? null : canonical, port };
}

/** What a pattern that is none most likely got wrong, as a clause for the refusal ("" when nothing stands out). */
function whatIsWrong(pattern: string, port: HostPattern["port"]): string {
  // A URL, or a host with a path or credentials: the host alone is the pattern.
  const asUrl = /^[a-z][a-z0-9+.-]*:\/\//.test(pattern) ? URL.parse(pattern) : URL.parse(`http://${pattern}`);
  if (/[/@?#]/.test(pattern) && asUrl !== null && asUrl.hostname !== "") {
    return `: it names a host, not a URL: give ${JSON.stringify(asUrl.host)} (without the scheme, path or user)`;
  }
  if (typeof port === "number") return `: ${port} is no port (1 to 65535, or * for any)`;
  if (/\s/.test(pattern)) return ": it holds a space: give one host per pattern";
  return "";
}

/**
 * The host as a URL's hostname is (what hostOf compares with): an international name in its
 * ASCII form (bücher.example is xn--bcher-kva.example), an IPv6 address shortened (0:0::1 is
 * ::1), an IPv4 one in dotted decimal (127.1 is 127.0.0.1). Compared as written, such a pattern
 * matched no URL, and requestNetwork(["bücher.example"]) opened a scope that refused every
 * request to that host ("xn--bcher-kva.example is not among the hosts this scope asked for").
 * null for no host a URL can name.
 */
function canonicalHost(host: string, bracketed: boolean, source: string): string | null {
  if (host.includes("*")) {
    // A glob keeps its `*`s (a URL would read "10.*.0.1" as a broken IPv4 address): only its
    // labels past ASCII are recoded, each whole; a `*` inside one would no longer stand where written.
    const labels: string[] = [];
    for (const label of host.split(".")) {
      if (!/[^\x00-\x7f]/.test(label)) {
        labels.push(label);
        continue;
      }
      if (label.includes("*")) {
        throw new HostPatternError(
          `"${source}": a * in a label with letters past ASCII cannot match (such a label travels as one xn-- word); ` +
            "write that label whole, or match its xn-- form",
        );
      }
      const ascii = domainToASCII(label);
      if (ascii === "") return null;
      labels.push(ascii);
    }
    return labels.join(".");
  }
  try {
    const hostname = new URL(`http://${bracketed ? `[${host}]` : host}/`).hostname;
    return bracketed ? hostname.slice(1, -1) : hostname;
  } catch {
    return null;
  }
}

export interface HostMatcher {
  test(host: string): boolean;
}

/**
 * The test for a host glob: `*` stands for a run of a label's characters (a-z, 0-9, -), so it
 * never crosses a dot, and a host matches label by label. Done without a regular expression:
 * scripts name host patterns too (requestNetwork), and the expression the glob made
 * (`[a-z0-9-]*` for each `*`) backtracked exponentially in its `*`s on a host of the script's
 * choosing (a security review held tacit's main thread, every session of a tacit serve with
 * it, for minutes with a pattern of 10 `*`s and a 80-character host, for years with 20).
 * This takes time in proportion to the host's length (see labelMatches).
 */
function hostMatcher(host: string): HostMatcher {
  const labels = host.split(".").map((label) => label.split("*"));
  return {
    test(candidate) {
      const parts = candidate.split(".");
      return parts.length === labels.length && parts.every((part, i) => labelMatches(labels[i]!, part));
    },
  };
}

const LABEL_CHARACTER = /[a-z0-9-]/;

/** Whether label[from, to) is all label characters (what a `*` may stand for). */
function labelRun(label: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!LABEL_CHARACTER.test(label[i]!)) return false;
  return true;
}

/**
 * Whether `label` is `pieces` (a pattern label's text around its `*`s) with runs of label
 * characters between them. Each middle piece is placed at its earliest occurrence after the
 * one before: if any placement matches, that one does (a later one leaves a longer run before
 * it, holding the earlier run; and where two placements overlap, the piece is all label
 * characters, as the run before the later one was), so no choice is ever revisited.
 */
function labelMatches(pieces: readonly string[], label: string): boolean {
  if (pieces.length === 1) return label === pieces[0];
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (first.length + last.length > label.length || !label.startsWith(first) || !label.endsWith(last)) return false;
  const end = label.length - last.length;
  let at = first.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i]!;
    const found = label.indexOf(piece, at);
    if (found === -1 || found + piece.length > end || !labelRun(label, at, found)) return false;
    at = found + piece.length;
  }
  return labelRun(label, at, end);
}

/** A host pattern in a config (--network-permissions, a policy rule's host): refused with parseHostPattern's reason. */
export const hostPatternText = z
  .string()
  .min(1)
  .superRefine((pattern, context) => {
    const problem = hostPatternProblem(pattern);
    if (problem !== null) context.addIssue({ code: "custom", message: problem });
  });

/** Why `source` is no host pattern (parseHostPattern's refusal), or null for one. */
function hostPatternProblem(source: string): string | null {
  try {
    parseHostPattern(source);
    return null;
  } catch (error) {
    if (error instanceof HostPatternError) return error.message;
    throw error;
  }
}

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443 };

export function patternMatches(pattern: HostPattern, url: URL): boolean {
  return pattern.host.test(hostOf(url)) && portMatches(pattern, url);
}

/** Whether the URL's port is one the pattern names (its own, any, or the scheme's default). */
export function portMatches(pattern: HostPattern, url: URL): boolean {
  if (pattern.port === "*") return true;
  const port = url.port === "" ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  return pattern.port === null ? url.port === "" : pattern.port === port;
}

/** The URL's host, lower-case, IPv6 without brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
}

export function isIpLiteral(host: string): boolean {
  return isIP(host) !== 0;
}
