// An approved command's working directory swapped, after the person's yes, for a link that leads
// deeper than the system can name. The executor pins the directory judged: it opens it and checks
// where the descriptor leads (/proc/self/fd/N), and the command starts in it by that descriptor.
// For a place whose path is longer than PATH_MAX, /proc names none (ENAMETOOLONG), and the
// executor took the directory as judged and started the command in it by name, which by then led
// to the bottom of a deep tree under .ssh: `cat f.txt` there printed the classified file. Now such
// a directory is refused like one that moved (test/files/deep-swapped-directory.test.ts has the
// same race for reads). Through the real CLI; the swaps come from a real process racing the runs.

import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { makeCanary, realTempDir, tacit } from "../files/fixtures.js";
import { BUILD, expectOrdinaryOrRefused, outcomesScript, whileSwapping } from "../files/deep-tree-swap.js";

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
    const call = `(() => { const r = p.exec("cat", ["f.txt"], { cwd: "d" }); return r.stdout + r.stderr; })()`;
    const script = outcomesScript(root, (body) => `requestExecPermission(["cat"], (p) => {${body}});\n`, call, RUNS);
    const args = ["--config", path.join(root, "tacit.json"), "--yes", "--command-permissions", "cat", "--exec-timeout-ms", "120000", "--quiet"];
    const r = await whileSwapping(root, () => tacit(root, script, args));
    // The command ran in d while it was the directory, printing the ordinary file; never the classified one.
    expectOrdinaryOrRefused(r, canary, RUNS, "ordinary\n");
  }, 180_000);
});
