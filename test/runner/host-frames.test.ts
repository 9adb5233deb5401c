// What the host writes to a sandbox: encodedHostFrame (runner/sandbox.ts) writes a granted reply of
// text around its value's JSON, which must be the very line encodeFrame writes for it.

import { describe, expect, it } from "vitest";
import { encodeFrame, type HostFrame } from "../../library/protocol.js";
import { encodedHostFrame } from "../../runner/sandbox.js";

const TEXTS = ["", "file 1: abc\n", 'quote " backslash \\ slash /', "\u0000\u001f\u007f\u2028\u2029", "é 漢字 🙂", "\ud800 lone \udfff", "</script>", "x".repeat(70_000)];

describe("encodedHostFrame", () => {
  it("writes each granted reply of text as encodeFrame does, byte for byte", () => {
    for (const value of TEXTS) {
      for (const id of [1, 7, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
        const frame: HostFrame = { type: "reply", id, ok: true, value };
        expect(encodedHostFrame(frame)).toBe(encodeFrame(frame));
      }
    }
  });

  it("leaves every other frame to encodeFrame", () => {
    const frames: HostFrame[] = [
      { type: "reply", id: 3, ok: true, value: null },
      { type: "reply", id: 3, ok: true, value: { path: "/a", exists: true } },
      { type: "reply", id: 3, ok: true, value: ["a", "b"] },
      { type: "reply", id: 3, ok: false, error: { name: "SecurityError", message: "refused" } },
      { type: "reply", id: 1.5, ok: true, value: "not an integer id" },
      { type: "reply", id: Number.NaN, ok: true, value: "NaN" },
    ];
    for (const frame of frames) expect(encodedHostFrame(frame)).toBe(encodeFrame(frame));
  });
});
