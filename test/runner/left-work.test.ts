// The server's bound on classified work one-shot calls leave running after they are answered
// (runner/concurrency-limit.ts LeftWork): past it the oldest piece still running is stopped,
// and a piece that has ended no longer counts. Through tacit serve, the answer not waiting for
// that work is tested in test/mcp/oneshot-pending-work.test.ts.

import { describe, expect, it } from "vitest";
import { LeftWork } from "../../runner/concurrency-limit.js";

/** A piece of work that ends when `end` is called, or when it is stopped. */
function piece(stopped: string[], name: string) {
  let end: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => (end = resolve));
  return {
    settled,
    end,
    stop: () => {
      stopped.push(name);
      end();
    },
  };
}

describe("LeftWork", () => {
  it("stops the oldest piece still running once more than its limit are kept", async () => {
    const stopped: string[] = [];
    const left = new LeftWork(2);
    const [a, b, c, d] = ["a", "b", "c", "d"].map((name) => piece(stopped, name)) as [ReturnType<typeof piece>, ReturnType<typeof piece>, ReturnType<typeof piece>, ReturnType<typeof piece>];
    left.keep(a);
    left.keep(b);
    expect(stopped).toEqual([]);
    left.keep(c);
    expect(stopped).toEqual(["a"]);
    // b ends by itself: it no longer counts, and d fits beside c.
    b.end();
    await b.settled;
    await Promise.resolve();
    left.keep(d);
    expect(stopped).toEqual(["a"]);
  });

  it("refuses a limit that is not a whole number of at least one", () => {
    expect(() => new LeftWork(0)).toThrow(RangeError);
  });
});
