// What a confined command left is checked once it has ended (confinement.ts, afterwards), and a
// check that cannot look somewhere says why, quoting the system's error. That error's text names
// the path the command chose: a directory whose name held ESC, a carriage return and a
// right-to-left override, made deeper than a path reaches (4096 bytes), was quoted raw in the note
// added to the command's stderr, and in the one tacit writes on its own stderr when it ends while
// the command runs: a terminal showing it could be cleared (ESC [2J), a line overwritten (CR), or
// the rest of it read reversed. The error's text is now shown as the paths beside it are (printable).

import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { confinementDir } from "./fixtures.js";

/** What a terminal acts on or lays out otherwise: ESC, CR, the right-to-left override. */
const RAW_CONTROLS = /[\u001b\r\u202e]/;

/** sh that makes "e<ESC>[2J<CR>X<RLO>Y/w", then moves w deeper than a path reaches (as confinement-deep.test.ts does). */
const DEEPEN = String.raw`set -e; evil=$(printf 'e\033[2J\rX\342\200\256Y'); mkdir -p "$evil/w"; cd "$evil"; for i in $(seq 1 18); do mkdir t; mv w t/$0; mv t w; done`;

/** A script that runs DEEPEN confined, then `after` in the same shell. */
const script = (after: string) => `
const name = "n".repeat(250);
const result = requestExecPermission(["sh"], (proc) => proc.exec("sh", ["-c", ${JSON.stringify(DEEPEN)} + "; ${after}", name]));
println("result:", JSON.stringify(result));
`;

describe("a confined command's check that fails on a path the command chose", () => {
  it("says so on the command's stderr with the path's controls escaped", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confined-note-escapes-");
    try {
      const run = await runCli(["run", "--no-check", "--command-permissions", "sh", "--confine-commands", "-"], { cwd: dir, input: script("echo moved") });
      expect(run.code, run.stderr.slice(0, 2000)).toBe(0);
      const line = run.stdout.split("\n").find((l) => l.startsWith("result: "));
      expect(line, run.stdout).toBeDefined();
      const result = JSON.parse(line!.slice("result: ".length)) as { exitCode: number; stdout: string; stderr: string };
      expect(result.stdout).toBe("moved\n");
      // The note is there, and the path in the system's error is shown escaped.
      expect(result.stderr).toContain("tacit could not look in it for one: ENAMETOOLONG");
      expect(result.stderr).toContain(String.raw`e\u001b[2J\u000dX\u202eY`);
      expect(result.stderr).not.toMatch(RAW_CONTROLS);
      expect(run.stderr).not.toMatch(RAW_CONTROLS);
    } finally {
      // GNU rm goes down by steps; Node's rmSync names each path whole, which the system refuses past PATH_MAX.
      execFileSync("rm", ["-rf", dir]);
    }
  }, 60_000);

  it("says so on tacit's stderr, escaped, when the script's time limit ends tacit while the command runs", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confined-note-escapes-exit-");
    try {
      const run = await runCli(["run", "--no-check", "--exec-timeout-ms", "4000", "--command-permissions", "sh", "--confine-commands", "-"], {
        cwd: dir,
        input: script("sleep 60"),
      });
      expect(run.code, run.stderr.slice(0, 2000)).not.toBe(0);
      expect(run.stderr).toContain("tacit could not look in it for one: ENAMETOOLONG");
      expect(run.stderr).toContain(String.raw`e\u001b[2J\u000dX\u202eY`);
      expect(run.stderr).not.toMatch(RAW_CONTROLS);
    } finally {
      execFileSync("rm", ["-rf", dir]);
    }
  }, 60_000);
});
