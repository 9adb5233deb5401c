// `tacit run - < dir`, a mistyped redirection: Node reads a directory on standard input as
// nothing, and tacit ran an empty script and exited 0, as if the script had run. Through the real
// CLI with a shell's redirection: refused, exit 2, saying what to give instead; a piped script
// still runs.

import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { childEnv, tacitBin, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-stdin-directory-");
afterAll(cleanup);

/** tacit with `args`, its standard input set up by `shellInput` before it in sh (an `exec <` redirection, or a pipe from printf). */
function tacitWithStdin(args: string[], shellInput: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync("sh", ["-c", `${shellInput} "$0" "$@"`, process.execPath, tacitBin, ...args], { cwd: dir, env: childEnv(env), encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.concurrent("a directory as the script on standard input", () => {
  for (const command of ["run", "check"]) {
    it(`tacit ${command} - < dir is refused, saying so, not taken for an empty script`, () => {
      const r = tacitWithStdin(command === "run" ? ["run", "--no-check", "-"] : ["check", "-"], `exec < "${dir}";`);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("tacit: the script on standard input: standard input is a directory, not a script. Redirect a .ts file (tacit run - < script.ts)");
      expect(r.stdout).toBe("");
    });
  }

  it("a script piped in still runs", () => {
    const r = tacitWithStdin(["run", "--no-check", "-"], `printf '%s\\n' 'println("piped ran");' |`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("piped ran\n");
  });
});
