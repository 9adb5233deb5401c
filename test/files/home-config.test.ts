// The user's own configuration in their home directory (runner/fs/home-config.ts): with tacit
// started in the home directory (the working directory is the default allowed root), a script
// could change ~/.bashrc, ~/.ssh/authorized_keys, ~/.config/autostart and the rest, which the
// shell, sshd and the desktop run or trust with the user's authority. Through the real CLI in a
// temporary home, a script with requestFileSystem(".") alone may read them but not change, create
// or delete anything in a hidden entry of the home directory (a scope opened inside one included);
// its other directories stay writable, and an allowed root of the operator's inside one lets
// scripts work there. Then the user's next interactive bash: no canary file.

import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, writeTree } from "./fixtures.js";

describe("the user's configuration in their home directory", () => {
  it("may be read but not changed, created or deleted by a script whose allowed root holds the home directory", async () => {
    const { dir, cleanup } = realTempDir("tacit-home-config-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      const bashrc = "export EDITOR=vi\n";
      const init = "vim.o.number = true\n";
      writeTree(home, {
        ".bashrc": bashrc,
        ".ssh/known_hosts": "",
        ".config/nvim/init.lua": init,
        "projects/app/notes.txt": "x\n",
      });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt(".bashrc", () => fs.access(".bashrc").append(${lit(`touch ${marker}\n`)}));
  attempt("authorized_keys", () => fs.access(".ssh/authorized_keys").write("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE attacker\\n"));
  attempt("a new .profile", () => fs.access(".profile").write(${lit(`touch ${marker}\n`)}));
  attempt("autostart", () => fs.access(".config/autostart").mkdir());
  attempt("a desktop entry", () => fs.access(".config/autostart/x.desktop").write(${lit(`[Desktop Entry]\nExec=touch ${marker}\n`)}));
  attempt("deleted", () => fs.access(".config/nvim/init.lua").delete());
  attempt("read", () => fs.access(".bashrc").read());
  attempt("a project", () => fs.access("projects/app/notes.txt").write("y\\n"));
});
requestFileSystem(".config/nvim", (fs) => {
  attempt("a scope opened inside one", () => fs.access("init.lua").write("os.execute('true')\\n"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: home, env: { HOME: home } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        [".bashrc", "authorized_keys", "a new .profile", "autostart", "a desktop entry", "deleted", "a scope opened inside one"],
        /refused: this is the user's own configuration in their home directory \(.*\/home\/\.[a-z]+\);.*run or trust what lies there .*outside the sandbox.*--allowed-roots ~\/\.config\/nvim/,
      );
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: bashrc });
      expect(attemptOf(found, "a project").status).toBe("ok");
      expect(readFileSync(path.join(home, ".bashrc"), "utf8")).toBe(bashrc);
      expect(readFileSync(path.join(home, ".config/nvim/init.lua"), "utf8")).toBe(init);
      for (const file of [".ssh/authorized_keys", ".profile", ".config/autostart"]) expect(existsSync(path.join(home, file)), file).toBe(false);
      // The operator's own allowed root inside one: editing that configuration is the point.
      const nvim = path.join(home, ".config/nvim");
      const chosen = await runScript(`requestFileSystem(".", (fs) => fs.access("init.lua").append("-- edited\\n"));\n`, ["--quiet", "--allowed-roots", nvim], { cwd: nvim, env: { HOME: home } });
      expect(chosen.code, chosen.stderr).toBe(0);
      expect(readFileSync(path.join(nvim, "init.lua"), "utf8")).toBe(`${init}-- edited\n`);
      // The user's next terminal.
      execFileSync("bash", ["-ic", "true"], { cwd: home, env: { ...process.env, HOME: home }, stdio: "ignore" });
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  // Started in that home (the probe it tries to make is removed, should it be made); a user the database gives no home directory has none to protect.
  it.skipIf(!existsSync(os.userInfo().homedir))("is protected where the password database puts the home directory, when HOME names another", async () => {
    // HOME elsewhere (a test, a sandboxed shell, a client that sets it): os.homedir() read HOME,
    // so the real home's hidden entries were ordinary files to a run started there, and a script
    // made a new one (as it could have appended to ~/.bashrc). Only a new, uniquely named entry is tried.
    const passwdHome = os.userInfo().homedir;
    const probe = `.tacit-home-config-probe-${randomUUID()}`;
    const { dir, cleanup } = realTempDir("tacit-home-config-passwd-");
    try {
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("a new entry", () => fs.access(${lit(probe)}).write("touch PWNED\\n"));
  attempt("a new directory", () => fs.access(${lit(`${probe}.d/x`)}).mkdir());
});
`;
      const r = await runScript(script, ["--quiet", "--no-check"], { cwd: passwdHome, env: { HOME: dir, TACIT_HOME: path.join(dir, "tacit") } });
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), ["a new entry", "a new directory"], /refused: this is the user's own configuration in their home directory/);
      for (const made of [probe, `${probe}.d`]) expect(existsSync(path.join(passwdHome, made)), made).toBe(false);
    } finally {
      rmSync(path.join(passwdHome, probe), { force: true });
      rmSync(path.join(passwdHome, `${probe}.d`), { recursive: true, force: true });
      cleanup();
    }
  });
});
