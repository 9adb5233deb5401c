// CapabilityTable (runner/capabilities.ts): tokens are refused once revoked, and a session's
// table does not grow with every scope it ever opened.

import { describe, expect, it } from "vitest";
import { CapabilityTable, REVOKED_TOKENS_KEPT } from "../../runner/capabilities.js";

const scope = { kind: "net" as const, hosts: [] };

describe("CapabilityTable", () => {
  it("refuses a revoked token as used outside its scope, and a token it never issued", () => {
    const table = new CapabilityTable();
    const token = table.issue(scope);
    expect(table.get(token, "net")).toBe(scope);
    table.revoke(token);
    expect(() => table.get(token, "net")).toThrow(/outside its requestNetwork scope/);
    expect(() => table.get("forged", "net")).toThrow(/not a live capability of this host/);
    expect(() => table.get(table.issue(scope), "fs")).toThrow(/not a live capability of this host/);
  });

  it("remembers only the latest revoked tokens; an older one is still refused", () => {
    const table = new CapabilityTable();
    const tokens: string[] = [];
    for (let i = 0; i <= REVOKED_TOKENS_KEPT; i++) {
      const token = table.issue(scope);
      tokens.push(token);
      table.revoke(token);
    }
    expect(() => table.get(tokens[0]!, "net")).toThrow(/not a live capability of this host/);
    expect(() => table.get(tokens[1]!, "net")).toThrow(/outside its requestNetwork scope/);
    expect(() => table.get(tokens.at(-1)!, "net")).toThrow(/outside its requestNetwork scope/);
    expect((table as unknown as { revoked: Map<string, string> }).revoked.size).toBe(REVOKED_TOKENS_KEPT);
  });
});
