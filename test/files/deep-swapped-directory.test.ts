// A directory swapped, while a read opens a file through it, for a link that leads deeper than
// the system can name. After opening, tacit checks where the descriptor really leads, by what
// /proc/self/fd/N names; for a place whose path is longer than PATH_MAX the kernel names none
// (ENAMETOOLONG), and tacit took the path it had resolved instead: the checks passed, and read()
// returned a classified file's content, found through the swapped directory at the bottom of a
// deep tree under .ssh; grepRecursive() searched the classified directory there the same way.
// Now a descriptor that leads where the system cannot say is refused.
// Through the real CLI with a real Deno; the swaps come from a real process of their own
// (renameat2 RENAME_EXCHANGE), racing the reads, so every outcome of many is judged: the
// ordinary file's content, or a refusal; the canary never.

import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, it } from "vitest";
import { makeCanary, realTempDir, tacit } from "./fixtures.js";
import { BUILD, expectOrdinaryOrRefused, outcomesScript, whileSwapping } from "./deep-tree-swap.js";

let root: string;
let cleanup: () => void;
const canary = makeCanary();

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-deep-swap-"));
  execFileSync("python3", ["-c", BUILD, root, canary]);
});
afterAll(() => {
  // A tree past PATH_MAX is removed by descriptors (shutil.rmtree's), not by its paths.
  execFileSync("python3", ["-c", "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)", root]);
  cleanup();
});

describe("a directory swapped for a link deeper than PATH_MAX while a read opens a file through it", () => {
  it.each([
    ["read()", 'fs.access("d/f.txt").read()', 1500],
    ["grepRecursive()", 'JSON.stringify(fs.grepRecursive("d/sub", "r").map((m) => m.line))', 300],
  ])("never lets %s return the classified file at the bottom", async (_call, call, tries) => {
    const ordinary = call.startsWith("JSON") ? '["ordinary"]' : "ordinary\n";
    const script = outcomesScript(root, (body) => `requestFileSystem(".", (fs) => {${body}});\n`, call, tries);
    const r = await whileSwapping(root, () => tacit(root, script, ["--exec-timeout-ms", "120000", "--quiet"]));
    expectOrdinaryOrRefused(r, canary, tries, ordinary);
  }, 180_000);
});
