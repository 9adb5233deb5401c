// A block's result is looked at for a `then` to tell a sync block from an async one. A result
// whose `then` getter threw made requestFileSystem throw that error before it closed the scope:
// the capability the block had kept stayed live after the call had ended, and read a file
// (a security review). Whatever looking at the result throws, the scope is closed first.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript, tempDir } from "../helpers.js";

describe("a block whose result's `then` getter throws", () => {
  it("closes its scope: the capability kept from it is refused after the call", async () => {
    const { dir, cleanup } = tempDir("tacit-scope-then-");
    try {
      writeFileSync(path.join(dir, "f"), "canary-then-getter\n");
      const r = await runScript(
        `let kept: any;
try {
  requestFileSystem(".", (fs) => { kept = fs; return { get then() { throw new Error("then getter"); } } as any; });
} catch (e) { println("call threw: " + String(e)); }
try { println("read after: " + kept.access("f").read()); } catch (e) { println("refused after: " + String(e).slice(0, 80)); }`,
        ["--no-check"],
        { cwd: dir },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("call threw: Error: then getter");
      expect(r.stdout).not.toContain("canary-then-getter");
      expect(r.stdout).toContain("refused after: SecurityError: this capability was used outside its requestFileSystem scope");
    } finally {
      cleanup();
    }
  }, 20_000);
});
