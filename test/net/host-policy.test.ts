// Unit tests of the two pure deciders: host patterns (globs and ports) and restricted
// addresses. Fast, no processes, no traffic.

import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { isRestrictedAddress } from "../../runner/net/address-check.js";
import { HostPatternError, hostOf, parseHostPattern, patternMatches } from "../../runner/net/host-policy.js";

/** This machine's IPv4 interface addresses but loopback's. */
const ownIPv4 = Object.values(networkInterfaces())
  .flatMap((entries) => entries ?? [])
  .filter((entry) => entry.family === "IPv4" && !entry.internal)
  .map((entry) => entry.address);

const matches = (pattern: string, url: string): boolean => patternMatches(parseHostPattern(pattern), new URL(url));

describe("host patterns", () => {
  it("`*` stays within one label: *.example.com is not example.com nor evil-example.com", () => {
    expect(matches("*.example.com", "https://api.example.com/")).toBe(true);
    expect(matches("*.example.com", "https://x-1.example.com/")).toBe(true);
    expect(matches("*.example.com", "https://example.com/")).toBe(false);
    expect(matches("*.example.com", "https://evil-example.com/")).toBe(false);
    expect(matches("*.example.com", "https://a.b.example.com/")).toBe(false);
    expect(matches("*.example.com", "https://api.example.com.evil.test/")).toBe(false);
    expect(matches("*.example.com", "https://api.example.co/")).toBe(false);
    expect(matches("*.example.com", "https://apiXexample.com/")).toBe(false);
    // The dot is literal, not a regex wildcard.
    expect(matches("api.example.com", "https://apixexample.com/")).toBe(false);
    expect(matches("api.*.com", "https://api.example.com/")).toBe(true);
    expect(matches("api-*.example.com", "https://api-eu.example.com/")).toBe(true);
    expect(matches("api-*.example.com", "https://api.example.com/")).toBe(false);
  });

  it("several `*`s in a label each stand for a run of label characters, between the literal pieces", () => {
    expect(matches("api-*-*.example.com", "https://api-eu-1.example.com/")).toBe(true);
    expect(matches("api-*-*.example.com", "https://api--.example.com/")).toBe(true);
    expect(matches("api-*-*.example.com", "https://api-eu.example.com/")).toBe(false);
    expect(matches("*a*a*.example.com", "https://aa.example.com/")).toBe(true);
    expect(matches("*a*a*.example.com", "https://a.example.com/")).toBe(false);
    expect(matches("ab*ba.example.com", "https://aba.example.com/")).toBe(false); // the pieces may not overlap
    expect(matches("*-*-*-x.example.com", `https://${"a-".repeat(40)}a.example.com/`)).toBe(false);
    expect(matches("*-*-*-x.example.com", `https://${"a-".repeat(40)}x.example.com/`)).toBe(true);
  });

  it("a bare `*` matches one label only, never an address or a dotted name", () => {
    expect(matches("*", "http://localhost/")).toBe(true);
    expect(matches("*", "http://example.com/")).toBe(false);
    expect(matches("*", "http://127.0.0.1/")).toBe(false);
    expect(matches("*:*", "http://169.254.169.254/")).toBe(false);
    expect(matches("*.*.*.*:*", "http://169.254.169.254/")).toBe(true);
    expect(matches("*", "http://[::1]/")).toBe(false);
  });

  it("matching is case-insensitive, pattern and URL alike", () => {
    expect(matches("API.Example.COM", "https://api.example.com/")).toBe(true);
    expect(matches("api.example.com", "https://API.EXAMPLE.COM/")).toBe(true);
  });

  it("without a port only the scheme's default port matches; `:port` and `:*` as written", () => {
    expect(matches("api.example.com", "https://api.example.com/")).toBe(true);
    expect(matches("api.example.com", "http://api.example.com/")).toBe(true);
    expect(matches("api.example.com", "https://api.example.com:443/")).toBe(true); // normalised to the default
    expect(matches("api.example.com", "http://api.example.com:80/")).toBe(true);
    expect(matches("api.example.com", "https://api.example.com:8443/")).toBe(false);
    expect(matches("api.example.com", "http://api.example.com:443/")).toBe(false);
    expect(matches("api.example.com:8443", "https://api.example.com:8443/")).toBe(true);
    expect(matches("api.example.com:8443", "https://api.example.com/")).toBe(false);
    expect(matches("api.example.com:8443", "https://api.example.com:8444/")).toBe(false);
    expect(matches("api.example.com:443", "https://api.example.com/")).toBe(true);
    expect(matches("api.example.com:*", "http://api.example.com:1/")).toBe(true);
    expect(matches("api.example.com:*", "https://api.example.com/")).toBe(true);
    expect(matches("127.0.0.1:*", "http://127.0.0.1:65535/")).toBe(true);
  });

  it("IPv6 literals are written in brackets", () => {
    expect(matches("[::1]:8080", "http://[::1]:8080/")).toBe(true);
    expect(matches("[::1]", "http://[::1]/")).toBe(true);
    expect(matches("[::1]", "http://[::1]:8080/")).toBe(false);
    expect(matches("[::1]:*", "http://[0:0:0:0:0:0:0:1]:9/")).toBe(true); // the URL parser normalises
    expect(hostOf(new URL("http://[::1]:8080/"))).toBe("::1");
  });

  it("a pattern is the host as a URL spells it: IDN in its xn-- form, IPv4 dotted, IPv6 shortened; a glob keeps its `*`s", () => {
    expect(parseHostPattern("Bücher.Example").literalHost).toBe("xn--bcher-kva.example");
    expect(matches("bücher.example", "https://bücher.example/")).toBe(true);
    expect(matches("bücher.example", "https://xn--bcher-kva.example/")).toBe(true);
    expect(matches("bücher.example", "https://bucher.example/")).toBe(false);
    expect(matches("*.bücher.example", "https://api.bücher.example/")).toBe(true);
    expect(matches("*.bücher.example", "https://bücher.example/")).toBe(false);
    expect(parseHostPattern("127.1").literalHost).toBe("127.0.0.1");
    expect(parseHostPattern("0x7f000001:80").literalHost).toBe("127.0.0.1");
    expect(parseHostPattern("[0:0:0:0:0:0:0:1]:8080").literalHost).toBe("::1");
    expect(matches("[0:0::1]:8080", "http://[::1]:8080/")).toBe(true);
    // A glob is not read as an address: "10.*.0.1" stays a glob of four labels.
    expect(matches("10.*.0.1", "http://10.20.0.1/")).toBe(true);
    expect(matches("[fec0::*]:*", "http://[fec0::1]:9/")).toBe(true);
    // A `*` inside a label past ASCII would not stand where it was written in the xn-- form.
    expect(() => parseHostPattern("bü*.example")).toThrow(/a \* in a label with letters past ASCII cannot match/);
    expect(() => parseHostPattern("a<b.example")).toThrow(HostPatternError);
  });

  it("a pattern without `*` is literal (it may unlock a restricted address); a glob is not", () => {
    expect(parseHostPattern("169.254.169.254").literalHost).toBe("169.254.169.254");
    expect(parseHostPattern("LocalHost:8080").literalHost).toBe("localhost");
    expect(parseHostPattern("[::1]:*").literalHost).toBe("::1");
    expect(parseHostPattern("*.*.*.*:*").literalHost).toBeNull();
    expect(parseHostPattern("local*:*").literalHost).toBeNull();
    expect(parseHostPattern("api.example.com").port).toBeNull();
    expect(parseHostPattern("api.example.com:*").port).toBe("*");
    expect(parseHostPattern(" api.example.com:8443 ").port).toBe(8443);
  });

  it("rejects what is not a host pattern: URLs, credentials, paths, bad ports", () => {
    for (const bad of [
      "",
      "https://api.example.com",
      "user@api.example.com",
      "api.example.com/path",
      "api.example.com?x",
      "api.example.com#x",
      "api example.com",
      "api.example.com:0",
      "api.example.com:65536",
      "[::1]:70000",
    ]) {
      expect(() => parseHostPattern(bad), JSON.stringify(bad)).toThrow(HostPatternError);
    }
  });

  it("rejects a malformed port or bracket instead of keeping a pattern that silently never matches", () => {
    // Fail-closed either way, but an operator's typo should be an error that names it.
    for (const bad of [":80", "api.example.com:8o", "api.example.com:-1", "api.example.com:", "[::1", "a:b:c"]) {
      expect(() => parseHostPattern(bad), JSON.stringify(bad)).toThrow(HostPatternError);
    }
  });
});

describe("restricted addresses", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.255.255.254", true],
    ["0.0.0.0", true],
    ["10.1.2.3", true],
    ["100.64.0.1", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["172.15.255.255", false],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["224.0.0.1", true],
    ["255.255.255.255", true],
    ["::1", true],
    ["::", true],
    ["fe80::1", true],
    ["fd00::1", true],
    ["fc00::1", true],
    ["::ffff:127.0.0.1", true],
    ["::FFFF:169.254.169.254", true],
    ["::ffff:7f00:1", true], // ::ffff:127.0.0.1 in hex form
    ["::ffff:a9fe:a9fe", true], // ::ffff:169.254.169.254
    ["::ffff:8.8.8.8", false],
    ["::7f00:1", true], // IPv4-compatible ::127.0.0.1 (deprecated; tunnelled by some hosts)
    ["::127.0.0.1", true],
    ["::a9fe:a9fe", true],
    ["2002:7f00:1::1", true], // 6to4 of 127.0.0.1
    ["2002:a9fe:a9fe::", true], // 6to4 of 169.254.169.254
    ["2002:0a00:0001:1::5", true], // 6to4 of 10.0.0.1
    ["2002:808:808::1", false], // 6to4 of 8.8.8.8
    ["2002:7f00::1", true], // 6to4 of 127.0.0.0, its zero group compressed
    ["2002::", true], // 6to4 of 0.0.0.0
    ["2002:a00::1", true], // 6to4 of 10.0.0.0
    ["2001:0:7f00:1::", true], // Teredo, server 127.0.0.1
    ["2001::5601:5601", true], // Teredo, client 169.254.169.254 (its bits inverted), server 0.0.0.0
    ["2001:0:808:808::5601:5601", true], // Teredo, server 8.8.8.8, client 169.254.169.254
    ["2001:0:808:808::f5ff:fffe", true], // Teredo, client 10.0.0.1
    ["2001:0:808:808::80ff:fffe", true], // Teredo, client 127.0.0.1
    ["2001:0:808:808:0:0:f7f7:f7f7", false], // Teredo, server and client 8.8.8.8
    ["2001:0:808:808::245.255.255.254", true], // Teredo, client 10.0.0.1, its last groups written as dotted IPv4
    ["2002:7f00::1%eth0", true], // 6to4 of 127.0.0.0 with a zone
    ["2001:db9::5efe:7f00:1", true], // ISATAP identifier carrying 127.0.0.1
    ["2001:db9::200:5efe:a9fe:a9fe", true], // ISATAP identifier (universal) carrying 169.254.169.254
    ["2001:db9::200:5efe:808:808", false], // ISATAP identifier carrying 8.8.8.8
    ["64:ff9b::a9fe:a9fe", true], // NAT64 well-known prefix carrying 169.254.169.254
    ["64:ff9b:1::a9fe:a9fe", true], // NAT64 local-use prefix (RFC 8215) carrying 169.254.169.254
    ["64:ff9b:1:ffff::a00:1", true],
    ["64:ff9b:2::1", false],
    ["::ffff:0:7f00:1", true], // SIIT IPv4-translated (RFC 2765) 127.0.0.1
    ["::ffff:0:a9fe:a9fe", true],
    ["fec0::1", true], // deprecated site-local
    ["feff:ffff::1", true],
    ["192.0.2.2", true], // the documentation ranges (RFC 5737), as 2001:db8::/32
    ["198.51.100.1", true],
    ["203.0.113.255", true],
    ["192.0.3.1", false],
    ["8.8.8.8", false],
    ["1.1.1.1", false],
    ["2606:4700::1", false],
    ["2001:4860:4860::8888", false],
  ])("%s → restricted: %s", (address, restricted) => {
    expect(isRestrictedAddress(address)).toBe(restricted);
  });

  it.skipIf(ownIPv4.length === 0)("this machine's own addresses are restricted, IPv4-mapped too, dotted or in hex as a URL writes it", () => {
    for (const own of ownIPv4) {
      const [a, b, c, d] = own.split(".").map(Number) as [number, number, number, number];
      const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
      for (const spelled of [own, `::ffff:${own}`, hex]) expect(isRestrictedAddress(spelled), spelled).toBe(true);
    }
  });

  it("something that is not an address counts as restricted", () => {
    expect(isRestrictedAddress("localhost")).toBe(true);
    expect(isRestrictedAddress("")).toBe(true);
  });
});
