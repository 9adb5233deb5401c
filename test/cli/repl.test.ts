// `tacit repl` with its input piped (no terminal): definitions kept between inputs,
// multi-line input, an error that leaves the bindings, and .exit.

import { describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";

describe("tacit repl", () => {
  it("keeps bindings, takes multi-line input, reports errors without losing state, and exits", async () => {
    const input = ["const x = 42", "x * 2", "function f(): number {", "  return 3;", "}", "f() + x", 'throw new Error("e")', "x", ".exit", "x + 1", ""].join("\n");
    const r = await runCli(["repl"], { input });
    expect(r.code).toBe(0);
    // 84, then 45 (f defined over three lines), then 42 after the error; nothing after .exit.
    expect(r.stdout).toBe("84\n45\n42\n");
    expect(r.stderr).toContain("Error: e");
    expect(r.stderr).toContain("script.ts:1:7");
  });
});
