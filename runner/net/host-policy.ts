// Which hosts a script may reach. A pattern is a host glob (`*` within the name, never
// across the dot before the rest: "*.example.com" matches "api.example.com", not
// "example.com" or "evil-example.com"), with an optional ":port" (":*" for any port);
// without a port, only the scheme's default port matches.

import { isIP } from "node:net";

export interface HostPattern {
  source: string;
  host: RegExp;
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
  if (badHost || (typeof port === "number" && (!Number.isInteger(port) || port < 1 || port > 65535))) {
    throw new HostPatternError(`"${source}" is not a host pattern (like "api.example.com", "*.example.com:8443" or "127.0.0.1:*")`);
  }
  const regex = new RegExp(`^${host.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[a-z0-9-]*")}$`);
  return { source, host: regex, literalHost: host.includes("*") ? null : host, port };
}

/** For schemas: whether `source` parses as a host pattern. */
export function isHostPattern(source: string): boolean {
  try {
    parseHostPattern(source);
    return true;
  } catch {
    return false;
  }
}

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443 };

export function patternMatches(pattern: HostPattern, url: URL): boolean {
  const host = hostOf(url);
  const port = url.port === "" ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  if (!pattern.host.test(host)) return false;
  if (pattern.port === "*") return true;
  return pattern.port === null ? url.port === "" : pattern.port === port;
}

/** The URL's host, lower-case, IPv6 without brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
}

export function isIpLiteral(host: string): boolean {
  return isIP(host) !== 0;
}
