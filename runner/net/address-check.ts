// Addresses a request must not reach unless the operator named the host literally:
// loopback, private, link-local (cloud metadata lives there), unspecified, multicast and the
// like. Checked on the address actually connected to, so a permitted name that resolves to
// 127.0.0.1 or 169.254.169.254 is refused.

import { BlockList, isIPv4, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";

const restricted = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
  // The documentation ranges (RFC 5737), as 2001:db8::/32 below: no internet host has one, and a
  // network that uses one anyway uses it as private addressing (this machine's eth0 was 192.0.2.2).
  ["192.0.2.0", 24], ["198.51.100.0", 24], ["203.0.113.0", 24],
] as const) {
  restricted.addSubnet(network, prefix, "ipv4");
}
// ::/96 holds ::, ::1 and the deprecated IPv4-compatible addresses (::7f00:1 is 127.0.0.1 on a
// host that tunnels them); a fourth review noted they were missing.
// Also the prefixes that carry an IPv4 address to a translator that may be told to reach private
// ones: NAT64's local-use 64:ff9b:1::/48 (RFC 8215 made it for exactly that, beside the
// well-known 64:ff9b::/96) and SIIT's IPv4-translated ::ffff:0:0:0/96 (RFC 2765); and the
// deprecated site-local fec0::/10, private addressing that old networks still route. 6to4,
// Teredo and ISATAP carry an IPv4 address inside a global one: judged by it (see embeddedIPv4).
for (const [network, prefix] of [
  ["::", 96], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96], ["2001:db8::", 32],
  ["64:ff9b:1::", 48], ["::ffff:0:0:0", 96], ["fec0::", 10],
] as const) {
  restricted.addSubnet(network, prefix, "ipv6");
}

/**
 * What makes `address` one a request reaches only where the host is named literally, as a
 * refusal says it ("… is <this>"), or null for an address any permission may reach.
 */
export function restrictionOf(address: string): string | null {
  if (isInternalAddress(address)) return "a loopback, private or link-local address";
  if (isOwnAddress(address)) {
    return "an address of this machine's own (a server that listens on all of the machine's addresses answers there as on 127.0.0.1)";
  }
  return null;
}

/** True for an address restrictionOf names: internal (see isInternalAddress), or this machine's own. */
export function isRestrictedAddress(address: string): boolean {
  return restrictionOf(address) !== null;
}

/**
 * Whether `address` is one of this machine's interface addresses, read now (they change: DHCP, a
 * VPN coming up). A server bound to all addresses (0.0.0.0, ::) answers on each of them as on
 * loopback, firewalled from the internet or not: with a glob such as "*.*.*.*:*" (or a name a
 * glob permits that points at this machine), a script reached such a service on 127.0.0.1's
 * behalf through the machine's own public address, which no internal range holds.
 */
function isOwnAddress(address: string): boolean {
  const plain = address.split("%")[0]!.toLowerCase();
  // IPv4-mapped, dotted ("::ffff:1.2.3.4") or in hex as a URL writes it ("::ffff:102:304"): the IPv4 address it reaches.
  const groups = isIPv6(plain) ? hextetsOf(plain) : null;
  const mapped =
    groups !== null && groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff
      ? `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`
      : undefined;
  let interfaces: ReturnType<typeof networkInterfaces>;
  try {
    interfaces = networkInterfaces();
  } catch {
    return false; // Not readable (a sandboxed host): the ranges alone decide.
  }
  for (const entries of Object.values(interfaces)) {
    for (const entry of entries ?? []) {
      const own = entry.address.split("%")[0]!.toLowerCase();
      if (own === plain || own === mapped || sameIPv6(own, plain)) return true;
    }
  }
  return false;
}

/** Whether two texts are the same IPv6 address however each is written (zeros compressed or not). */
function sameIPv6(a: string, b: string): boolean {
  if (!isIPv6(a) || !isIPv6(b)) return false;
  const [x, y] = [hextetsOf(a), hextetsOf(b)];
  return x.every((group, i) => group === y[i]);
}

/** True for an address in a loopback, private, link-local or otherwise internal range. */
function isInternalAddress(address: string): boolean {
  if (isIPv4(address)) return restricted.check(address, "ipv4");
  if (isIPv6(address)) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return restricted.check(mapped[1]!, "ipv4");
    if (restricted.check(address, "ipv6")) return true;
    return embeddedIPv4(hextetsOf(address)).some((ipv4) => restricted.check(ipv4, "ipv4"));
  }
  return true; // Not an address at all: nothing to connect to.
}

/**
 * The IPv4 addresses a global IPv6 address carries for a tunnel or relay to reach, each judged as
 * itself: a host on a network that routes these forms reached the IPv4 address through them. Read
 * from the address's 16 bits groups, not its text: a regex on the text missed "2002:7f00::1" (6to4
 * of 127.0.0.0, its zeros compressed) and "2002::" (0.0.0.0).
 */
function embeddedIPv4(groups: readonly number[]): string[] {
  const ipv4 = (high: number, low: number): string => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const [g0, g1, g2, g3, , g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const carried: string[] = [];
  // 6to4 (RFC 3056), 2002:AABB:CCDD::/48: the relay's way in is the IPv4 address AA.BB.CC.DD.
  if (g0 === 0x2002) carried.push(ipv4(g1, g2));
  // Teredo (RFC 4380), 2001:0::/32: the Teredo server's IPv4 address in bits 32-63, the client's
  // in the last 32, each bit inverted (2001:0:…::5601:5601 is a client at 169.254.169.254).
  if (g0 === 0x2001 && g1 === 0) carried.push(ipv4(g2, g3), ipv4(g6 ^ 0xffff, g7 ^ 0xffff));
  // ISATAP (RFC 5214): under any prefix, an interface identifier 0:5efe or 200:5efe (its
  // universal bit set) and an IPv4 address, the router's tunnel to a host of the site.
  if ((groups[4] === 0 || groups[4] === 0x200) && g5 === 0x5efe) carried.push(ipv4(g6, g7));
  return carried;
}

/** The eight 16-bit groups of a valid IPv6 address (a zone, "%eth0", left out; a dotted IPv4 tail read as two groups). */
function hextetsOf(address: string): number[] {
  let text = address.split("%")[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string): number[] => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const [head, tail] = text.split("::") as [string, string | undefined];
  if (tail === undefined) return parse(head);
  const [before, after] = [parse(head), parse(tail)];
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}
