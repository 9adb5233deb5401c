// A tree deeper than PATH_MAX under a classified directory, and a process that swaps a directory
// for a link into it: for the tests of what tacit does when /proc cannot name where a descriptor
// leads (test/files/deep-swapped-directory.test.ts, test/exec/deep-swapped-cwd.test.ts).

import type { ChildProcess } from "node:child_process";
import { expect } from "vitest";
import type { CliResult } from "../helpers.js";
import { killAndWait, startBusyPython } from "../processes.js";

/**
 * Makes root/.ssh/K1/…/K24/f.txt (a path of about 4,800 bytes, past PATH_MAX), a link root/hop to
 * .ssh/K1/…/K12, a link root/.link-d to hop/K13/…/K24 (each link's text within PATH_MAX), and an
 * ordinary root/d/f.txt. Made from inside each directory in turn: no path given is too long.
 */
export const BUILD = `
import os, sys
root, canary = sys.argv[1], sys.argv[2]
names = [("k%02d" % i) + "k" * 197 for i in range(24)]
os.chdir(root)
os.mkdir(".ssh")
os.chdir(".ssh")
for name in names:
    os.mkdir(name)
    os.chdir(name)
with open("f.txt", "w") as f:
    f.write("secret " + canary + "\\n")
os.mkdir("sub")
with open("sub/g.txt", "w") as f:
    f.write("secret " + canary + "\\n")
os.chdir(root)
os.symlink(".ssh/" + "/".join(names[:12]), "hop")
os.symlink("hop/" + "/".join(names[12:]), ".link-d")
os.mkdir("d")
with open("d/f.txt", "w") as f:
    f.write("ordinary\\n")
os.mkdir("d/sub")
with open("d/sub/g.txt", "w") as f:
    f.write("ordinary\\n")
`;

/** Exchanges root/d and root/.link-d at once, again and again, until killed; says "swapping" after 100. */
export const SWAPPER = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
root = sys.argv[1]
swaps = 0
while True:
    if libc.renameat2(AT_FDCWD, f"{root}/d".encode(), AT_FDCWD, f"{root}/.link-d".encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
    swaps += 1
    if swaps == 100:
        print("swapping", flush=True)
`;


/**
 * A script's loop that makes `call` (an expression, inside `open`'s block) `tries` times and prints
 * how often each outcome came: "answer: " and the value, or the error's kind and message (the
 * root's path and the deep tree's names shortened).
 */
export function outcomesScript(root: string, open: (body: string) => string, call: string, tries: number): string {
  return open(`
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < ${tries}; i++) {
    let outcome: string;
    try {
      outcome = "answer: " + ${call};
    } catch (e) {
      outcome = (e instanceof SecurityError ? "SecurityError: " : "Error: ") + String((e as Error).message).split(${JSON.stringify(root)}).join("<root>").replace(/k\\d\\dk+/g, "K").slice(0, 200);
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  println(JSON.stringify(outcomes));
`);
}

/** `run` while SWAPPER exchanges root/d and root/.link-d, the swapper ended after it however it ends. */
export async function whileSwapping<T>(root: string, run: () => Promise<T>): Promise<T> {
  let swapper: ChildProcess | null = null;
  try {
    swapper = await startBusyPython(SWAPPER, [root], "the swapper");
    return await run();
  } finally {
    if (swapper !== null) await killAndWait(swapper);
  }
}

/** What every race here must show: the run ended well, no canary anywhere, every try either the ordinary answer (at least once) or a refusal. */
export function expectOrdinaryOrRefused(r: CliResult, canary: string, tries: number, ordinary: string): void {
  expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
  expect(r.stdout).not.toContain(canary);
  expect(r.stderr).not.toContain(canary);
  const outcomes = JSON.parse(r.stdout.trim()) as Record<string, number>;
  expect(Object.values(outcomes).reduce((sum, n) => sum + n, 0)).toBe(tries);
  // Not vacuous: the calls ran, and the ordinary file was found while d was the directory.
  expect(outcomes[`answer: ${ordinary}`] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
  // Every other outcome is a refusal, never content.
  for (const outcome of Object.keys(outcomes)) {
    if (outcome !== `answer: ${ordinary}`) expect(outcome, JSON.stringify(outcomes)).toMatch(/^(SecurityError|Error): /);
  }
}
