// closestName: the known name a misspelt one stands for, or none when nothing is near.

import { describe, expect, it } from "vitest";
import { closestName, SuggestionBudget } from "../../runner/closest-name.js";

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

  it("stops at its budget: the nearest found so far, or nothing once it is spent", () => {
    const spent = new SuggestionBudget(1);
    expect(closestName("printn", KNOWN, spent)).toBeNull();
    expect(spent.spent).toBe(true);
    expect(closestName("printn", ["println"], spent)).toBeNull();
    // Enough for one comparison of a long name, not for the list after it.
    const names = ["println", ...Array.from({ length: 1000 }, (_, i) => `printl${i}`)];
    const little = new SuggestionBudget(100);
    expect(closestName("printn", names, little)).toBe("println");
    expect(little.spent).toBe(true);
    // The same with the default budget: shared by every call given it.
    const shared = new SuggestionBudget();
    for (let i = 0; i < 3; i++) expect(closestName("printn", names, shared)).toBe("println");
    expect(shared.spent).toBe(false);
  });
});
