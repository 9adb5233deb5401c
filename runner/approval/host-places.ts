// Where a host a net rule names leads, so that the rule holds however a script names the same
// place. Matched on text alone, an always-ask rule on `localhost` let a script reach the same
// server as 127.0.0.1, 0.0.0.0, 127.0.0.2, [::ffff:127.0.0.1] or `vm` (a name /etc/hosts gives
// 127.0.0.1) with no question, each one permitted beside localhost by --network-permissions.
//
// A host is read as the places it leads to: "this machine" for a loopback or unspecified address,
// one of the machine's own interface addresses, `localhost` and names below it; each address the
// hosts file gives a name (read as the rules are compiled); and the name itself, without its
// trailing dot (`api.example.com.` is `api.example.com`). Two hosts that share a place are one
// host to a rule. What DNS answers is not read: it changes, and a lookup here would hold the host's
// main thread (the README's policy section says what to write instead).

import { readFileSync } from "node:fs";
import { isIPv4, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";

/** Where a host leads, as tokens two hosts share when they lead to the same place. */
export type Places = ReadonlySet<string>;

const THIS_MACHINE = "this machine";
/** The hosts file, and the most of it read (a bigger one is read up to here). */
const HOSTS_FILE = "/etc/hosts";
const HOSTS_FILE_LIMIT_BYTES = 1024 * 1024;

export class HostPlaces {
  /** Each name in the hosts file (lower case, no trailing dot) and the addresses it gives. */
  private readonly hostsFile: ReadonlyMap<string, readonly string[]>;
  /** The machine's own interface addresses (what a server listening on every address answers on). */
  private readonly ownAddresses: ReadonlySet<string>;

  constructor(hostsFileText: string = readHostsFile(), ownAddresses: readonly string[] = interfaceAddresses()) {
    this.hostsFile = parseHostsFile(hostsFileText);
    this.ownAddresses = new Set(ownAddresses.map(plainAddress));
  }

  /** Where `host` (as hostOf gives it: lower case, IPv6 without brackets) leads. */
  placesOf(host: string): Places {
    const name = host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.+$/, "");
    if (isIPv4(name) || isIPv6(name)) return new Set([this.addressPlace(name)]);
    const places = new Set([`name ${name}`]);
    if (name === "localhost" || name.endsWith(".localhost")) places.add(THIS_MACHINE);
    for (const address of this.hostsFile.get(name) ?? []) places.add(this.addressPlace(address));
    return places;
  }

  /**
   * Where the hosts a glob matches lead, among those this reads: a glob may match a name or an
   * address of this machine (`127.0.0.*`, `*.localhost`, a single-label `*` matches localhost) or
   * of the hosts file. The names DNS answers for are not known here: a glob is matched on them as written.
   */
  placesMatched(matches: (host: string) => boolean): Places {
    const known = ["localhost", "127.0.0.1", "::1", "0.0.0.0", "::", ...this.ownAddresses, ...this.hostsFile.keys(), ...[...this.hostsFile.values()].flat().map(plainAddress)];
    const places = new Set<string>();
    for (const host of known) if (matches(host)) for (const place of this.placesOf(host)) places.add(place);
    return places;
  }

  private addressPlace(address: string): string {
    const plain = plainAddress(address);
    return isLoopbackOrUnspecified(plain) || this.ownAddresses.has(plain) ? THIS_MACHINE : `address ${plain}`;
  }
}

/** Whether two hosts' places meet. */
export function samePlace(a: Places, b: Places): boolean {
  for (const place of a) if (b.has(place)) return true;
  return false;
}

/** An address as one text per address: IPv6 shortened as a URL writes it, and an IPv4-mapped one (`::ffff:7f00:1`) as its IPv4 address. */
function plainAddress(address: string): string {
  const text = address.toLowerCase().split("%")[0]!;
  if (!isIPv6(text)) return text;
  let short: string;
  try {
    short = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return text;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(short);
  if (mapped === null) return short;
  const high = parseInt(mapped[1]!, 16);
  const low = parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

function isLoopbackOrUnspecified(address: string): boolean {
  if (isIPv4(address)) return address.startsWith("127.") || address === "0.0.0.0";
  return address === "::1" || address === "::";
}

function readHostsFile(): string {
  try {
    const bytes = readFileSync(HOSTS_FILE);
    return bytes.subarray(0, HOSTS_FILE_LIMIT_BYTES).toString("utf8");
  } catch {
    return ""; // No hosts file: names lead where DNS says, which is not read (see above).
  }
}

function parseHostsFile(text: string): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const [address, ...aliases] = line.replace(/#.*/, "").trim().split(/\s+/);
    if (address === undefined || !(isIPv4(address) || isIPv6(address.split("%")[0]!))) continue;
    for (const alias of aliases) {
      const name = alias.toLowerCase().replace(/\.+$/, "");
      if (name === "") continue;
      names.set(name, [...(names.get(name) ?? []), address]);
    }
  }
  return names;
}

function interfaceAddresses(): string[] {
  try {
    return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
  } catch {
    return []; // Not available (a sandboxed host): loopback still counts as this machine.
  }
}
