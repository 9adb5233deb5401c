// A script's error on stderr never starts a line that reads as tacit's own (see
// stderr-forgery.test.ts). Where the line is laid out as bidirectional text (a terminal that does,
// a CI log shown in a browser), a right-to-left override reorders what follows it: an error class
// named "\u202e:ticat\u202c warning" was written as it was, and read there as "tacit: warning: …".
// A first line holding a bidirectional control is now shown after "Uncaught ", as one that reads
// as tacit's is.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const cleanups: Array<() => void> = [];
// After the file: the tests run concurrently, and one's end must not remove another's directory.
afterAll(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Error class names that show as "tacit: warning" once laid out right to left where they are reversed. */
const REORDERED: Record<string, string> = {
  "a right-to-left override": "\\u202e:ticat\\u202c warning",
  "a right-to-left isolate holding an override": "\\u2067\\u202e:ticat\\u202c\\u2069 warning",
};

describe.concurrent("a script's error with bidirectional controls, on tacit run's stderr", () => {
  for (const [how, name] of Object.entries(REORDERED)) {
    it(`${how}: its first line is shown after "Uncaught "; exit 1`, async () => {
      const { dir, env, cleanup } = tempDirWithHome("tacit-stderr-bidi-");
      cleanups.push(cleanup);
      writeFileSync(path.join(dir, "forge.ts"), `class Forged extends Error { override name = "${name}"; }\nthrow new Forged("the audit log verified");\n`);
      const { code, stderr } = await runCli(["run", "--no-check", "forge.ts"], { cwd: dir, env });
      expect(code).toBe(1);
      expect(stderr).toContain("the audit log verified");
      const [first = ""] = stderr.split("\n");
      expect(first.startsWith("Uncaught ")).toBe(true);
    });
  }
});
