// The script named on the command line is judged by what tacit read, not by where its name leads a
// moment later: a link swapped between a harmless script and a classified file, over and over while
// tacit runs, had the classified file read and run (and its words quoted in the checks' errors)
// while the judgement, made by name after the read, saw the harmless file.

import { spawn } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-script-link-swap-");
afterAll(cleanup);

/** Printed by the classified file when run, and named (an unknown global) in the checks' errors when checked. */
const ranCanary = "h169-link-swap-canary-ran";
const wordCanary = "H169_LINK_SWAP_CANARY_WORD";

/**
 * A process that points `link` at `first`, then `second`, then `first`, … every 0.2 ms, each time
 * atomically (a new link renamed over the old), until killed. Not faster: a loop that never sleeps
 * takes a core from the runs it races.
 */
function swapLinkForever(link: string, first: string, second: string): () => void {
  const loop =
    `const fs = require("node:fs"); const [link, a, b] = process.argv.slice(1); const next = link + ".next";` +
    `const pause = new Int32Array(new SharedArrayBuffer(4));` +
    `for (let i = 0; ; i++) { try { fs.unlinkSync(next); } catch {} fs.symlinkSync(i % 2 ? b : a, next); fs.renameSync(next, link); Atomics.wait(pause, 0, 0, 0.2); }`;
  const child = spawn(process.execPath, ["-e", loop, link, first, second], { stdio: "ignore" });
  return () => child.kill("SIGKILL");
}

describe.concurrent("a script link swapped between a harmless file and a classified one while tacit reads it", () => {
  for (const command of ["run", "check"] as const) {
    it(`${command}: the classified file's words never appear, and each ${command} refuses or takes the harmless file`, async () => {
      const project = path.join(dir, command);
      mkdirSync(project);
      writeFileSync(path.join(project, ".env"), `println("${ranCanary}");\n${wordCanary};\n`);
      writeFileSync(path.join(project, "ok.ts"), `println("harmless ran");\n`);
      symlinkSync("ok.ts", path.join(project, "script.ts"));
      const stopSwapping = swapLinkForever(path.join(project, "script.ts"), "ok.ts", ".env");
      try {
        const outcomes = { refused: 0, harmless: 0 };
        // Runs in pairs: each read and judgement lands at a different point of the swapping.
        for (let round = 0; round < 6; round++) {
          const runs = await Promise.all([0, 1].map(() => runCli([command, "--no-check", "script.ts"], { cwd: project, env })));
          for (const r of runs) {
            expect(r.stdout + r.stderr).not.toContain(ranCanary);
            expect(r.stdout + r.stderr).not.toContain(wordCanary);
            if (r.code === 2) {
              expect(r.stderr).toMatch(/the script "script\.ts" (?:is a classified path|was renamed or replaced while tacit read it)/);
              outcomes.refused++;
            } else {
              expect(r.code).toBe(0);
              expect(r.stderr).not.toContain("classified");
              if (command === "run") expect(r.stdout).toBe("harmless ran\n");
              outcomes.harmless++;
            }
          }
        }
        expect(outcomes.refused + outcomes.harmless).toBe(12);
      } finally {
        stopSwapping();
      }
    });
  }
});
