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

import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCanary, realTempDir, tacit } from "./fixtures.js";
import { killAndWait, startBusyPython } from "../processes.js";
import { BUILD, SWAPPER } from "./deep-tree-swap.js";

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
    const script = `
requestFileSystem(".", (fs) => {
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < ${tries}; i++) {
    let outcome: string;
    try {
      outcome = "answer: " + ${call};
    } catch (e) {
      outcome = (e instanceof SecurityError ? "SecurityError: " : "Error: ") + String((e as Error).message).replace(${JSON.stringify(root)}, "<root>").replace(/k\\d\\dk+/g, "K");
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  println(JSON.stringify(outcomes));
});
`;
    let swapper: ChildProcess | null = null;
    let r: Awaited<ReturnType<typeof tacit>>;
    try {
      swapper = await startBusyPython(SWAPPER, [root], "the swapper");
      r = await tacit(root, script, ["--exec-timeout-ms", "120000", "--quiet"]);
    } finally {
      if (swapper !== null) await killAndWait(swapper);
    }
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout).not.toContain(canary);
    expect(r.stderr).not.toContain(canary);
    const outcomes = JSON.parse(r.stdout.trim()) as Record<string, number>;
    // Not vacuous: the calls ran, and the ordinary file was found while d was the directory.
    expect(Object.values(outcomes).reduce((sum, n) => sum + n, 0)).toBe(tries);
    expect(outcomes[`answer: ${ordinary}`] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
    // Every other outcome is a refusal (the classified path, or the descriptor's place), never content.
    for (const outcome of Object.keys(outcomes)) {
      if (outcome !== `answer: ${ordinary}`) expect(outcome, JSON.stringify(outcomes)).toMatch(/^(SecurityError|Error): /);
    }
  }, 180_000);
});
