// --strict and xdg-user-dirs-update (runner/exec/strict-denylist.ts), tried for real through the CLI
// where the host has it (skipped where it has not). It writes `XDG_<NAME>_DIR="<path>"` lines without
// escaping a quote or a line break in the path --set gives it: a path of `/x"`, a command line and
// `#` put that command line into the file as a line of its own. Into ~/.config/user-dirs.dirs, which
// xdg-user-dir (and session scripts) source with a shell: the user's next `xdg-user-dir DESKTOP` ran
// it, unconfined; and --dummy-output writes the same to any file (a .bashrc outside the roots).

import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("--strict and xdg-user-dirs-update", () => {
  it("is refused: it writes a command line of the script's into a file a shell sources", async (ctx) => {
    ctx.skip(findOnPath("xdg-user-dirs-update") === null, "xdg-user-dirs-update is not installed here");
    const { dir, cleanup } = realTempDir("tacit-strict-xdg-");
    ctx.onTestFinished(cleanup);
    writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/.keep": "" });
    const project = path.join(dir, "project");
    const home = path.join(dir, "home");
    const bashrc = path.join(dir, "outside", "bashrc");
    writeFileSync(bashrc, "# the user's own\n");
    const proofs = { dirs: path.join(dir, "outside", "USER_DIRS_RAN"), bashrc: path.join(dir, "outside", "BASHRC_RAN") };
    const line = (proof: string) => `/x"\ntouch ${proof}\n#`;
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
const run = (args: string[]) => requestExecPermission(["xdg-user-dirs-update"], (proc) => proc.exec("xdg-user-dirs-update", args));
attempt("dirs", () => run(["--set", "DESKTOP", ${lit(line(proofs.dirs))}]));
attempt("bashrc", () => run(["--dummy-output", ${lit(bashrc)}, "--set", "DESKTOP", ${lit(line(proofs.bashrc))}]));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    // What the user runs next, unconfined: xdg-user-dir, and a shell that reads the startup file.
    spawnSync("xdg-user-dir", ["DESKTOP"], { env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config") } });
    spawnSync("/bin/sh", [bashrc]);
    expect(existsSync(proofs.dirs)).toBe(false);
    expect(existsSync(proofs.bashrc)).toBe(false);
    for (const label of ["dirs", "bashrc"]) {
      const { status, value } = attemptOf(attempts(r.stdout), label);
      expect(status, `${label}: ${JSON.stringify(value)}`).toBe("SecurityError");
      expect(String(value)).toContain('"xdg-user-dirs-update" is refused under --strict');
    }
  });
});
