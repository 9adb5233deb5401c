// Addresses a request must not reach unless the operator named the host literally:
// loopback, private, link-local (cloud metadata lives there), unspecified, multicast and the
// like. Checked on the address actually connected to, so a permitted name that resolves to
// 127.0.0.1 or 169.254.169.254 is refused.

import { BlockList, isIPv4, isIPv6 } from "node:net";

const restricted = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) {
  restricted.addSubnet(network, prefix, "ipv4");
}
// ::/96 holds ::, ::1 and the deprecated IPv4-compatible addresses (::7f00:1 is 127.0.0.1 on a
// host that tunnels them); a fourth review noted they were missing. 6to4 is checked below.
// Also the prefixes that carry an IPv4 address to a translator that may be told to reach private
// ones: NAT64's local-use 64:ff9b:1::/48 (RFC 8215 made it for exactly that, beside the
// well-known 64:ff9b::/96) and SIIT's IPv4-translated ::ffff:0:0:0/96 (RFC 2765); and the
// deprecated site-local fec0::/10, private addressing that old networks still route.
for (const [network, prefix] of [
  ["::", 96], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96], ["2001:db8::", 32],
  ["64:ff9b:1::", 48], ["::ffff:0:0:0", 96], ["fec0::", 10],
] as const) {
  restricted.addSubnet(network, prefix, "ipv6");
}

/** True for an address in a loopback, private, link-local or otherwise internal range. */
export function isRestrictedAddress(address: string): boolean {
  if (isIPv4(address)) return restricted.check(address, "ipv4");
  if (isIPv6(address)) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return restricted.check(mapped[1]!, "ipv4");
    if (restricted.check(address, "ipv6")) return true;
    // 6to4 (2002:AABB:CCDD::/48) carries the IPv4 address AA.BB.CC.DD: judged as that address.
    const sixToFour = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4})(?::|$)/i.exec(address);
    if (sixToFour) {
      const [high, low] = [parseInt(sixToFour[1]!, 16), parseInt(sixToFour[2]!, 16)];
      return restricted.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, "ipv4");
    }
    return false;
  }
  return true; // Not an address at all: nothing to connect to.
}
