// Printing waits for no answer (a post: see PostedAction in library/protocol.ts), where each
// line was a round trip to the host. What that must not change: output comes out in the
// order it was printed, around the effects a script asks for, and a script stopped at its
// time limit keeps everything it printed before.

import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, tempDir } from "../helpers.js";

describe("printing", () => {
  it("keeps its order around requests, in a scope and out of it", async () => {
    const { dir, cleanup } = tempDir("tacit-posts-");
    try {
      const code =
        `println("1");\n` +
        `requestFileSystem(".", (fs) => {\n` +
        `  println("2");\n` +
        `  fs.access("a.txt").write("x");\n` +
        `  print("3", fs.access("a.txt").read(), "\\n");\n` +
        `  console.log("4");\n` +
        `});\n` +
        `printf("%s\\n", "5");\n`;
      const run = await runCli(["run", "-"], { cwd: dir, input: code });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe("1\n2\n3 x \n4\n5\n");
      expect(readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("x");
    } finally {
      cleanup();
    }
  });

  it("a script stopped at its time limit keeps every line it printed before", async () => {
    // Then blocked for good (Atomics.wait, no timeout) as a spin would be, but without a core:
    // either way the sandbox's event loop never runs again to send what is left.
    const code = `for (let i = 0; i < 3000; i++) println("line " + i);\nAtomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);\n`;
    const run = await runCli(["run", "--no-check", "--exec-timeout-ms", "2000", "-"], { input: code });
    expect(run.code, run.stderr).toBe(124);
    const lines = run.stdout.split("\n").filter((line) => line !== "");
    expect(lines).toHaveLength(3000);
    expect(lines[0]).toBe("line 0");
    expect(lines[2999]).toBe("line 2999");
  });

  it("many lines come out whole and in order", async () => {
    const code = `for (let i = 0; i < 20000; i++) println(i);\n`;
    const run = await runCli(["run", "--no-check", "-"], { input: code });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(Array.from({ length: 20000 }, (_, i) => `${i}\n`).join(""));
  });
});
