// Where a host leads, for net rules (runner/approval/host-places.ts): the names and addresses
// that reach the same place are one host to a rule; others are not.

import { describe, expect, it } from "vitest";
import { HostPlaces, samePlace } from "../../runner/approval/host-places.js";

const HOSTS_FILE = `
# comment 10.9.9.9 hidden
127.0.1.1   devbox devbox.lan.
10.0.0.5    db.internal db   # the database
fd00::5     db6.internal
`;

const places = new HostPlaces(HOSTS_FILE, ["192.0.2.2", "fd00::2"]);
const same = (a: string, b: string): boolean => samePlace(places.placesOf(a), places.placesOf(b));

describe("HostPlaces", () => {
  it("reads every loopback, unspecified and own address, localhost and the hosts file's loopback names as this machine", () => {
    for (const host of ["127.0.0.1", "127.0.0.2", "::1", "0.0.0.0", "::", "::ffff:7f00:1", "localhost", "app.localhost", "LOCALHOST.", "devbox", "devbox.lan", "192.0.2.2", "fd00::2", "::ffff:c000:202"]) {
      expect(same("localhost", host), host).toBe(true);
    }
  });

  it("reads a name the hosts file gives an address as that address, and a name as itself without its trailing dot", () => {
    expect(same("db.internal", "10.0.0.5")).toBe(true);
    expect(same("db", "db.internal")).toBe(true);
    expect(same("::ffff:a00:5", "db")).toBe(true);
    expect(same("db6.internal", "fd00:0::5")).toBe(true);
    expect(same("api.example.com", "api.example.com.")).toBe(true);
  });

  it("keeps other places apart", () => {
    expect(same("localhost", "10.0.0.5")).toBe(false);
    expect(same("db", "10.0.0.6")).toBe(false);
    expect(same("api.example.com", "example.com")).toBe(false);
    expect(same("hidden", "10.9.9.9")).toBe(false);
    expect(same("localhost", "localhost.example.com")).toBe(false);
  });

  it("reads a glob as the places of the hosts it matches among this machine's and the hosts file's", () => {
    const test = (glob: RegExp) => (host: string) => glob.test(host);
    expect(samePlace(places.placesMatched(test(/^127\.0\.0\.\d+$/)), places.placesOf("localhost"))).toBe(true);
    expect(samePlace(places.placesMatched(test(/^[a-z]+\.internal$/)), places.placesOf("10.0.0.5"))).toBe(true);
    expect(samePlace(places.placesMatched(test(/^[a-z]+\.internal$/)), places.placesOf("localhost"))).toBe(false);
    expect(places.placesMatched(test(/^api\.example\.com$/)).size).toBe(0);
  });
});
