// Vim's 'exrc' (runner/fs/vim-exrc.ts): where the user's Vim configuration sets it, Vim runs the
// .vimrc or .exrc of the directory it starts in, unasked. Through the real CLI, with a temporary
// home whose ~/.vimrc says `set exrc`, a script with requestFileSystem(".") alone may not write
// nor create those files; with a ~/.vimrc that does not, and for other names, it may. Then the
// user starts the real Vim (where installed) in the project, on a terminal: no canary file.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { luaSetsExrc, setsExrc } from "../../runner/fs/vim-exrc.js";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, writeTree } from "./fixtures.js";

const HAS_VIM = spawnSync("vim", ["--version"], { stdio: "ignore" }).status === 0 && spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

/** The user starts Vim in `dir` on a terminal (util-linux's script gives it one) and quits at once. */
function startVim(dir: string, home: string): void {
  if (!HAS_VIM) return;
  spawnSync("script", ["-qc", "vim -c 'qa!'", "/dev/null"], { cwd: dir, env: { ...process.env, HOME: home, TERM: "xterm" }, stdio: "ignore", timeout: 20_000 });
}

describe("Vim's exrc", () => {
  it("reads 'exrc' being set as Vim does", () => {
    for (const text of ["set exrc", "  :se ex", "set ts=4 exrc secure", 'set nocompatible | set exrc " local', "setglobal exrc", "let &exrc = 1", "if 1 | set exrc | endif"]) {
      expect(setsExrc(text), text).toBe(true);
    }
    for (const text of ["set noexrc", '" set exrc', "set expandtab", "set exrc?", "let &exrc = 0", "set ts=4"]) expect(setsExrc(text), text).toBe(false);
  });

  it("reads 'exrc' being set in Neovim's Lua", () => {
    for (const text of ["vim.o.exrc = true", "vim.opt.exrc = true", "vim.opt_global.exrc=true", 'vim.cmd("set exrc")', "vim.cmd [[set secure exrc]]"]) {
      expect(luaSetsExrc(text), text).toBe(true);
    }
    for (const text of ["vim.o.exrc = false", "vim.opt.expandtab = true", 'vim.cmd("set noexrc")', "vim.o.exrc_extra = true"]) expect(luaSetsExrc(text), text).toBe(false);
  });

  it("where the Vim configuration sets 'exrc', a script may not write a .vimrc or .exrc; elsewhere, and other names, it may", async () => {
    const { dir, cleanup } = realTempDir("tacit-vim-exrc-");
    try {
      const marker = path.join(dir, "PWNED");
      const exrcHome = path.join(dir, "exrc-home");
      const plainHome = path.join(dir, "plain-home");
      const projectVimrc = '" project settings\nset shiftwidth=2\n';
      writeTree(dir, {
        "exrc-home/.vimrc": "set nocompatible\nset exrc\n",
        "plain-home/.vimrc": "set nocompatible\nset expandtab\n",
        "p/.vimrc": projectVimrc,
        "p/sub/notes.txt": "x\n",
      });
      const vimscript = lit(`call system("touch ${marker}")\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt(".vimrc", () => fs.access("p/.vimrc").write(${vimscript}));
  attempt(".exrc", () => fs.access("p/sub/.exrc").write(${lit(`!touch ${marker}\n`)}));
  attempt("_vimrc", () => fs.access("p/sub/_vimrc").write(${vimscript}));
  attempt(".gvimrc", () => fs.access("p/.gvimrc").write(${vimscript}));
  attempt("in another case", () => fs.access("p/sub/.VIMRC").write(${vimscript}));
  attempt("read", () => fs.access("p/.vimrc").read());
  attempt("another name", () => fs.access("p/sub/vimrc.txt").write("x\\n"));
});
`;
      const refused = await runScript(script, ["--quiet"], { cwd: dir, env: { HOME: exrcHome } });
      expect(refused.code, refused.stderr).toBe(0);
      const found = attempts(refused.stdout);
      expectRefused(found, [".vimrc", ".exrc", "_vimrc", ".gvimrc", "in another case"], /a file Vim runs when started in .*p(\/sub)?: the Vim configuration \(.*exrc-home\/\.vimrc\) sets 'exrc'.*Ask the user/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: projectVimrc });
      expect(attemptOf(found, "another name").status).toBe("ok");
      expect(readFileSync(path.join(dir, "p/.vimrc"), "utf8")).toBe(projectVimrc);
      for (const file of ["p/sub/.exrc", "p/sub/_vimrc", "p/.gvimrc", "p/sub/.VIMRC"]) expect(existsSync(path.join(dir, file)), file).toBe(false);
      startVim(path.join(dir, "p"), exrcHome);
      startVim(path.join(dir, "p/sub"), exrcHome);
      expect(existsSync(marker)).toBe(false);

      // A user whose Vim does not read local files: the same writes go through ($VIMINIT unset).
      const allowed = await runScript(script, ["--quiet"], { cwd: dir, env: { HOME: plainHome, VIMINIT: "", EXINIT: "" } });
      expect(allowed.code, allowed.stderr).toBe(0);
      const written = attempts(allowed.stdout);
      for (const label of [".vimrc", ".exrc", "_vimrc", ".gvimrc"]) expect(attemptOf(written, label).status, label).toBe("ok");
    } finally {
      cleanup();
    }
  }, 60_000);

  it("where Neovim's init.lua sets 'exrc', its .nvim.lua, .nvimrc and .exrc are refused; Vim's .vimrc is not", async () => {
    const { dir, cleanup } = realTempDir("tacit-nvim-exrc-");
    try {
      writeTree(dir, { "home/.config/nvim/init.lua": "vim.opt.number = true\nvim.o.exrc = true\n", "p/notes.txt": "x\n" });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt(".nvim.lua", () => fs.access("p/.nvim.lua").write("os.execute('true')\\n"));
  attempt(".nvimrc", () => fs.access("p/.nvimrc").write("!true\\n"));
  attempt(".exrc", () => fs.access("p/.exrc").write("!true\\n"));
  attempt(".vimrc", () => fs.access("p/.vimrc").write("set ts=2\\n"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: { HOME: path.join(dir, "home"), XDG_CONFIG_HOME: path.join(dir, "home/.config"), VIMINIT: "" } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, [".nvim.lua", ".nvimrc", ".exrc"], /a file Neovim runs when started in .*p: the Neovim configuration \(.*nvim\/init\.lua\) sets 'exrc'.*before 0\.9.*Ask the user/);
      expect(attemptOf(found, ".vimrc").status).toBe("ok");
      for (const file of [".nvim.lua", ".nvimrc", ".exrc"]) expect(existsSync(path.join(dir, "p", file)), file).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("$VIMINIT that sets 'exrc' counts as a vimrc", async () => {
    const { dir, cleanup } = realTempDir("tacit-vim-viminit-");
    try {
      writeTree(dir, { "home/.keep": "", "p/notes.txt": "x\n" });
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt(".exrc", () => fs.access("p/.exrc").write("!true\\n"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: { HOME: path.join(dir, "home"), VIMINIT: "set nocp | set exrc" } });
      expect(r.code, r.stderr).toBe(0);
      expectRefused(attempts(r.stdout), [".exrc"], /the Vim configuration \(\$VIMINIT\) sets 'exrc'/);
      expect(existsSync(path.join(dir, "p/.exrc"))).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
