// A directory in the allowed roots whose path is longer than the system takes (PATH_MAX, 4096
// bytes) cannot be listed by its path, so its classified files cannot be covered, though a command
// reaches them by steps (cd into each). A confined command moved a directory holding a `.env`
// that deep with short renames (mkdir t; mv w t/NAME; mv t w). The next command was refused, as
// it must be, but the refusal blamed roots changed "by another command or process" and told the
// script to run it again once nothing else moved files: the walk took the deep directory for gone,
// and the setup's check of it then failed. Now it says what is wrong (runner/exec/confinement.ts,
// TooDeepToList), and the `.env` stays unread.

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { makeCanary, realTempDir } from "./fixtures.js";

const SCRIPT = `
const sh = (line: string) => requestExecPermission(["sh"], (proc) => proc.exec("sh", ["-c", line]));
const name = "n".repeat(250);
println("deepened:", JSON.stringify(sh(\`set -e; mkdir w; mv app w/app; for i in $(seq 1 18); do mkdir t; mv w t/\${name}; mv t w; done; echo moved\`)));
try {
  println("read:", JSON.stringify(sh(\`cd -P w; for i in $(seq 1 18); do cd -P \${name}; done; cat app/.env\`)));
} catch (e) {
  println("refused:", (e as Error).message);
}
`;

describe("a confined command and a directory deeper than a path reaches", () => {
  it("is refused with the reason, and the classified file there is not read", async () => {
    const { dir, cleanup } = realTempDir("tacit-confined-deep-");
    try {
      const canary = makeCanary();
      mkdirSync(path.join(dir, "app"));
      writeFileSync(path.join(dir, "app", ".env"), `TOKEN=${canary}\n`);
      writeFileSync(path.join(dir, "script.ts"), SCRIPT);
      const run = await runCli(["run", "--no-check", "--command-permissions", "sh", "--confine-commands", "script.ts"], { cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('deepened: {"exitCode":0,"stdout":"moved\\n"');
      expect(run.stdout).toMatch(/refused: .*lies deeper than a path reaches \(4096 bytes/);
      expect(run.stdout).not.toMatch(/changed while it was set up/);
      expect(run.stdout).not.toContain(canary);
    } finally {
      // GNU rm goes down by steps; Node's rmSync names each path whole, which the system refuses past PATH_MAX.
      execFileSync("rm", ["-rf", dir]);
      cleanup();
    }
  });
});
