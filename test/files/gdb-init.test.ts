// GDB's auto-loaded files (runner/fs/gdb-init.ts): where the user's GDB configuration puts a
// directory on its auto-load safe path (`set auto-load safe-path /`, as GDB's own warning suggests),
// GDB runs the .gdbinit of that directory, and a debugged program's `-gdb.gdb` script, unasked.
// Through the real CLI, with a temporary home whose ~/.gdbinit says so, a script with
// requestFileSystem(".") alone may not write nor create those files; with a ~/.gdbinit that does
// not, or whose safe path holds another directory, it may. Then the user starts the real GDB (where
// installed) in the project: no canary file.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { safePathOf } from "../../runner/fs/gdb-init.js";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, writeTree } from "./fixtures.js";

const HAS_GDB = spawnSync("gdb", ["--version"], { stdio: "ignore" }).status === 0;

/** The user starts GDB in `dir` and quits at once (batch mode reads the same init files). */
function startGdb(dir: string, home: string): void {
  if (!HAS_GDB) return;
  spawnSync("gdb", ["-batch"], { cwd: dir, env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config") }, stdio: "ignore", timeout: 30_000 });
}

describe("GDB's auto-loaded files", () => {
  it("reads the safe path as GDB's commands set it", () => {
    expect(safePathOf("set auto-load safe-path /", "/h")).toEqual(["/"]);
    expect(safePathOf("  set auto-load safe-path ~/src:$debugdir:$datadir/auto-load\n", "/h")).toEqual(["/h/src"]);
    expect(safePathOf("add-auto-load-safe-path /work/p/.gdbinit", "/h")).toEqual(["/work/p/.gdbinit"]);
    expect(safePathOf("set auto-l sa /srv", "/h")).toEqual(["/srv"]);
    expect(safePathOf("set auto-load safe-path /home/*/src", "/h")).toBe("every");
    expect(safePathOf("set auto-load safe-path $HOME", "/h")).toBe("every");
    expect(safePathOf("set pagination off\nset auto-load safe-path $debugdir:$datadir/auto-load", "/h")).toEqual([]);
  });

  it("where the GDB configuration puts the project on the safe path, a script may not write its .gdbinit; elsewhere it may", async () => {
    const { dir, cleanup } = realTempDir("tacit-gdb-init-");
    try {
      const marker = path.join(dir, "PWNED");
      const safeHome = path.join(dir, "safe-home");
      const plainHome = path.join(dir, "plain-home");
      const otherHome = path.join(dir, "other-home");
      const projectInit = "set pagination off\n";
      writeTree(dir, {
        "safe-home/.gdbinit": "set auto-load safe-path /\n",
        "plain-home/.gdbinit": "set pagination off\n",
        "other-home/.config/gdb/gdbinit": `add-auto-load-safe-path ${path.join(dir, "elsewhere")}\n`,
        "p/.gdbinit": projectInit,
        "p/sub/notes.txt": "x\n",
      });
      const commands = lit(`shell touch ${marker}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt(".gdbinit", () => fs.access("p/.gdbinit").write(${commands}));
  attempt("appended", () => fs.access("p/.gdbinit").append(${commands}));
  attempt("a new one", () => fs.access("p/sub/.gdbinit").write(${commands}));
  attempt("in another case", () => fs.access("p/sub/.GDBINIT").write(${commands}));
  attempt("a program's script", () => fs.access("p/app-gdb.gdb").write(${commands}));
  attempt("read", () => fs.access("p/.gdbinit").read());
  attempt("another name", () => fs.access("p/sub/gdbinit.txt").write("x\\n"));
});
`;
      const refused = await runScript(script, ["--quiet"], { cwd: dir, env: { HOME: safeHome } });
      expect(refused.code, refused.stderr).toBe(0);
      const found = attempts(refused.stdout);
      expectRefused(
        found,
        [".gdbinit", "appended", "a new one", "in another case", "a program's script"],
        /a file GDB runs when started in, or debugging a program in, .*p(\/sub)?: the GDB configuration \(.*safe-home\/\.gdbinit\) puts that directory on its auto-load safe path.*Ask the user/,
      );
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: projectInit });
      expect(attemptOf(found, "another name").status).toBe("ok");
      expect(readFileSync(path.join(dir, "p/.gdbinit"), "utf8")).toBe(projectInit);
      for (const file of ["p/sub/.gdbinit", "p/sub/.GDBINIT", "p/app-gdb.gdb"]) expect(existsSync(path.join(dir, file)), file).toBe(false);
      startGdb(path.join(dir, "p"), safeHome);
      startGdb(path.join(dir, "p/sub"), safeHome);
      expect(existsSync(marker)).toBe(false);

      // A user whose GDB loads no project file, or only another directory's: the same writes go through.
      for (const home of [plainHome, otherHome]) {
        const allowed = await runScript(script, ["--quiet"], { cwd: dir, env: { HOME: home, XDG_CONFIG_HOME: path.join(home, ".config") } });
        expect(allowed.code, allowed.stderr).toBe(0);
        const written = attempts(allowed.stdout);
        for (const label of [".gdbinit", "a new one", "a program's script"]) expect(attemptOf(written, label).status, `${home}: ${label}`).toBe("ok");
      }
    } finally {
      cleanup();
    }
  }, 60_000);
});
