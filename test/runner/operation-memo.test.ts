// The memo the checks on file changes share within one operation (runner/fs/operation-memo.ts):
// what one request's checks found must never answer another's, so nothing is remembered outside
// an operation, and everything is forgotten when it ends, however it ends.

import { describe, expect, it } from "vitest";
import { fileOperation, OperationMemo } from "../../runner/fs/operation-memo.js";

describe("the memo of one file operation", () => {
  it("remembers within an operation, forgets at its end (a throw included), and remembers nothing outside one", () => {
    const memo = new OperationMemo<number>();
    let computed = 0;
    const ask = (): number => memo.get("dir", () => ++computed);
    fileOperation(() => {
      expect(ask()).toBe(1);
      expect(ask()).toBe(1);
      // Nested operations share it until the outermost ends.
      fileOperation(() => expect(ask()).toBe(1));
      expect(memo.lookup("dir")).toEqual({ value: 1 });
    });
    expect(memo.lookup("dir")).toBeUndefined();
    expect(() =>
      fileOperation(() => {
        expect(ask()).toBe(2);
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(memo.lookup("dir")).toBeUndefined();
    // Outside an operation every question is asked afresh.
    expect(ask()).toBe(3);
    expect(ask()).toBe(4);
    expect(memo.lookup("dir")).toBeUndefined();
  });
});
