// closestName: the known name a misspelt one stands for, or none when nothing is near.

import { describe, expect, it } from "vitest";
import { closestName } from "../../runner/closest-name.js";

const KNOWN = ["requestFileSystem", "requestNetwork", "println", "Math", "auditLog", "networkPermissions"];

describe("closestName", () => {
  it.each([
    ["requestFileSytem", "requestFileSystem"], // a letter left out
    ["requestFileSysetm", "requestFileSystem"], // two letters swapped
    ["printn", "println"],
    ["math", "Math"], // case alone, whatever the length
    ["AUDITLOG", "auditLog"],
    ["netwrokPermissions", "networkPermissions"],
  ])("%s -> %s", (name, meant) => {
    expect(closestName(name, KNOWN)).toBe(meant);
  });

  it.each([["colour"], ["x"], ["fetch"], ["println"], [""], ["a".repeat(65)]])("%j -> nothing", (name) => {
    expect(closestName(name, KNOWN)).toBeNull();
  });

  it("allows fewer edits in a short name: one per four characters, at least one, at most three", () => {
    expect(closestName("prnt", ["print"])).toBe("print");
    expect(closestName("prt", ["print"])).toBeNull();
    expect(closestName("requestFleSytm", ["requestFileSystem"])).toBe("requestFileSystem");
    expect(closestName("rqustFleSytm", ["requestFileSystem"])).toBeNull();
  });

  it("prefers the nearest, then the first listed", () => {
    expect(closestName("totl", ["tota", "total"])).toBe("tota");
    expect(closestName("ab", ["ac", "ad"])).toBe("ac");
  });
});
