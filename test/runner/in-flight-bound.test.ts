// The server's bound on calls under way or waiting (runner/concurrency-limit.ts InFlightBound):
// by number and by the code they hold; a released call gives its place back, once. Through
// tacit serve, the number is tested in test/mcp/concurrency.test.ts.

import { describe, expect, it } from "vitest";
import { InFlightBound } from "../../runner/concurrency-limit.js";

describe("InFlightBound", () => {
  it("refuses past the code held together, saying how much and what to do, and admits again once released", () => {
    const bound = new InFlightBound(10, 3 * 1024 * 1024);
    const first = bound.admit(2 * 1024 * 1024);
    expect("release" in first).toBe(true);
    const second = bound.admit(1.5 * 1024 * 1024);
    expect(second).toEqual({
      refused:
        "refused before it ran: 1 call is already under way or waiting for their turn, holding 2.0 Mi characters of code, and " +
        "this one (1.5 Mi characters) would pass what the server holds at once (10 calls, 3.0 Mi characters). Wait for the answers " +
        "to calls already sent before sending more, or send shorter code.",
    });
    if (!("release" in first)) throw new Error("admitted");
    first.release();
    first.release(); // once only
    const third = bound.admit(3 * 1024 * 1024);
    expect("release" in third).toBe(true);
    expect("refused" in bound.admit(1)).toBe(true);
  });

  it("refuses past the number of calls, however small", () => {
    const bound = new InFlightBound(2, 1024);
    expect("release" in bound.admit(0)).toBe(true);
    expect("release" in bound.admit(0)).toBe(true);
    expect("refused" in bound.admit(0)).toBe(true);
  });
});
