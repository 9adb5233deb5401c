// An approved command's working directory swapped, after the person's yes, for a link that leads
// deeper than the system can name. The executor pins the directory judged: it opens it and checks
// where the descriptor leads (/proc/self/fd/N), and the command starts in it by that descriptor.
// For a place whose path is longer than PATH_MAX, /proc names none (ENAMETOOLONG), and the
// executor took the directory as judged and started the command in it by name, which by then led
// to the bottom of a deep tree under .ssh: `cat f.txt` there printed the classified file. Now such
// a directory is refused like one that moved (test/files/deep-swapped-directory.test.ts has the
// same race for reads). Through the real CLI; the swaps come from a real process racing the runs.

import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCanary, realTempDir, tacit } from "../files/fixtures.js";
import { BUILD, SWAPPER } from "../files/deep-tree-swap.js";
import { killAndWait, startBusyPython } from "../processes.js";

let root: string;
let cleanup: () => void;
const canary = makeCanary();
const RUNS = 300;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-deep-swap-cwd-"));
  execFileSync("python3", ["-c", BUILD, root, canary]);
  // Every cat is asked about (answered yes by --yes), so its working directory is judged and pinned.
  writeFileSync(path.join(root, "tacit.json"), JSON.stringify({ policy: { rules: [{ action: "exec", command: "cat", tier: "always-ask" }] } }));
});
afterAll(() => {
  execFileSync("python3", ["-c", "import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)", root]);
  cleanup();
});

describe("an approved command's working directory swapped for a link deeper than PATH_MAX", () => {
  it("never runs the command there: cat f.txt prints the ordinary file or is refused, never the classified one", async () => {
    const script = `
requestExecPermission(["cat"], (p) => {
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < ${RUNS}; i++) {
    let outcome: string;
    try {
      const r = p.exec("cat", ["f.txt"], { cwd: "d" });
      outcome = "ran: " + r.stdout + r.stderr;
    } catch (e) {
      outcome = (e instanceof SecurityError ? "SecurityError: " : "Error: ") + String((e as Error).message).split(${JSON.stringify(root)}).join("<root>").replace(/k\\d\\dk+/g, "K").slice(0, 200);
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
      r = await tacit(root, script, ["--config", path.join(root, "tacit.json"), "--yes", "--command-permissions", "cat", "--exec-timeout-ms", "120000", "--quiet"]);
    } finally {
      if (swapper !== null) await killAndWait(swapper);
    }
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout).not.toContain(canary);
    expect(r.stderr).not.toContain(canary);
    const outcomes = JSON.parse(r.stdout.trim()) as Record<string, number>;
    expect(Object.values(outcomes).reduce((sum, n) => sum + n, 0)).toBe(RUNS);
    // Not vacuous: the command ran in d while it was the directory.
    expect(outcomes["ran: ordinary\n"] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
    for (const outcome of Object.keys(outcomes)) {
      if (outcome !== "ran: ordinary\n") expect(outcome, JSON.stringify(outcomes)).toMatch(/^(SecurityError|Error): /);
    }
  }, 180_000);
});
