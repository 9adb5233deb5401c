// Files a direnv .envrc loads (runner/fs/direnv.ts): direnv runs an .envrc only once the user
// allowed its content, but not what that .envrc loads. Through the real CLI, a script with
// requestFileSystem(".") alone may not write the .envrc.local an allowed .envrc loads with
// source_env_if_exists (code run at the next prompt) nor the .env it loads with dotenv_if_exists
// (PROMPT_COMMAND exported into the user's shell, run at the next prompt); the .envrc itself,
// reads, and ordinary files still go through. Then the user's next prompt in the project: with
// direnv where it is installed (its shell hook runs `direnv export bash`), else a stand-in that
// loads the same files the same way; no canary file either way.

import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

const HAS_DIRENV = spawnSync("direnv", ["version"], { stdio: "ignore" }).status === 0;

/** The environment of a user whose home is `home` (direnv keeps what they allowed under it). */
const userEnv = (home: string): NodeJS.ProcessEnv => ({ ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), XDG_DATA_HOME: path.join(home, ".local/share") });

/** The user allows the .envrc in `project` (where direnv is installed). */
function allow(project: string, home: string): void {
  if (HAS_DIRENV) execFileSync("direnv", ["allow", "."], { cwd: project, env: userEnv(home) });
}

/** What bash does at the next prompt in `dir` with direnv's hook: load the environment direnv exports (or the stand-in's), then run PROMPT_COMMAND. */
function nextPrompt(dir: string, home: string, typed = ""): void {
  const env = userEnv(home);
  delete env.PROMPT_COMMAND;
  const load = HAS_DIRENV
    ? 'eval "$(direnv export bash 2>/dev/null)"'
    : // direnv's stdlib, for these two: source the file if it exists; export the KEY=value lines of a dotenv file.
      'source_env_if_exists() { [ -f "$1" ] && . "./$1"; }; dotenv_if_exists() { [ -f "${1:-.env}" ] && { set -a; . "./${1:-.env}"; set +a; }; }; . ./.envrc';
  execFileSync("bash", ["-c", `${load}; eval "$PROMPT_COMMAND"; ${typed}`], { cwd: dir, env, stdio: "ignore" });
}

describe("files a direnv .envrc loads", () => {
  it("an allowed .envrc's source_env_if_exists and dotenv_if_exists files are refused, the .envrc itself is not", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      mkdirSync(home);
      const envrc = "source_env_if_exists .envrc.local\ndotenv_if_exists\n";
      writeTree(dir, { "p/.envrc": envrc, "p/notes.txt": "x\n", "q/notes.txt": "x\n" });
      const project = path.join(dir, "p");
      allow(project, home);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("sourced", () => fs.access("p/.envrc.local").write(${lit(`touch ${marker}\n`)}));
  attempt("dotenv", () => fs.access("p/.env").write(${lit(`PROMPT_COMMAND="touch ${marker}"\n`)}));
  attempt("dotenv classified", () => fs.access("p/.env").writeClassified(classify(${lit(`PROMPT_COMMAND="touch ${marker}"\n`)})));
  attempt("read envrc", () => fs.access("p/.envrc").read());
  attempt("envrc itself", () => fs.access("p/.envrc").append("# direnv blocks a changed .envrc until allowed again\\n"));
  attempt("ordinary", () => fs.access("p/notes.txt").write("y\\n"));
  attempt("another project's .env", () => fs.access("q/.env").write("A=1\\n"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["sourced"], /a file direnv loads for .*\.envrc \(source_env_if_exists \.envrc\.local\).*next prompt.*Ask the user/);
      expectRefused(found, ["dotenv", "dotenv classified"], /a file direnv loads for .*\.envrc \(dotenv_if_exists\)/);
      expect(attemptOf(found, "read envrc")).toEqual({ status: "ok", value: envrc });
      for (const label of ["envrc itself", "ordinary", "another project's .env"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(existsSync(path.join(project, ".envrc.local"))).toBe(false);
      expect(existsSync(path.join(project, ".env"))).toBe(false);
      // The user's next prompt in the project (with the .envrc as it was allowed: the script's line is taken back, as a re-allow would keep it out).
      writeTree(dir, { "p/.envrc": envrc });
      nextPrompt(project, home);
      expect(readFileSync(path.join(project, ".envrc"), "utf8")).toBe(envrc);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("executables in the directories an .envrc puts first on PATH are refused; other files there, and new ones (never executable), are not", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-path-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      mkdirSync(home);
      const envrc = 'PATH_add bin tools\npath_add PATH scripts\nlayout node\nexport PATH="$PWD/local/bin:$PATH"\n';
      const program = "#!/bin/sh\nexit 0\n";
      const programs = ["p/bin/deploy", "p/tools/lint", "p/scripts/check", "p/node_modules/pkg/bin/tsc.js", "p/local/bin/ship", "p/lib/helper.sh", "q/bin/deploy"];
      writeTree(dir, {
        "p/.envrc": envrc,
        ...Object.fromEntries(programs.map((file) => [file, program])),
        "p/node_modules/.bin/tsc": { symlink: "../pkg/bin/tsc.js" },
        "p/bin/notes.txt": "x\n",
      });
      for (const file of programs) chmodSync(path.join(dir, file), 0o755);
      const project = path.join(dir, "p");
      allow(project, home);
      const payload = lit(`#!/bin/sh\ntouch ${marker}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("PATH_add", () => fs.access("p/bin/deploy").write(${payload}));
  attempt("PATH_add, second", () => fs.access("p/tools/lint").append(${payload}));
  attempt("path_add PATH", () => fs.access("p/scripts/check").write(${payload}));
  attempt("layout node, through the link", () => fs.access("p/node_modules/.bin/tsc").write(${payload}));
  attempt("layout node, the link's target", () => fs.access("p/node_modules/pkg/bin/tsc.js").write(${payload}));
  attempt("PATH=", () => fs.access("p/local/bin/ship").write(${payload}));
  attempt("delete", () => fs.access("p/bin/deploy").delete());
  attempt("read", () => fs.access("p/bin/deploy").read());
  attempt("new file", () => fs.access("p/bin/ls").write(${payload}));
  attempt("not executable", () => fs.access("p/bin/notes.txt").append("y\\n"));
  attempt("not on PATH", () => fs.access("p/lib/helper.sh").write("#!/bin/sh\\nexit 0\\n"));
  attempt("another project", () => fs.access("q/bin/deploy").write("#!/bin/sh\\nexit 0\\n"));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["PATH_add", "delete"], /an executable program in .*p\/bin, a directory direnv puts first on the user's PATH for .*\.envrc \(PATH_add bin tools\).*whenever they type its name.*Ask the user/);
      expectRefused(found, ["PATH_add, second"], /PATH_add bin tools/);
      expectRefused(found, ["path_add PATH"], /path_add PATH scripts/);
      expectRefused(found, ["layout node, through the link", "layout node, the link's target"], /node_modules\/\.bin.*layout node/);
      expectRefused(found, ["PATH="], /export PATH=/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: program });
      for (const label of ["new file", "not executable", "not on PATH", "another project"]) expect(attemptOf(found, label).status, label).toBe("ok");
      for (const file of programs.slice(0, 5)) expect(readFileSync(path.join(dir, file), "utf8"), file).toBe(program);
      // What tacit creates has no execute bit, so the shell skips the script's bin/ls and runs the system's.
      expect(statSync(path.join(project, "bin/ls")).mode & 0o111).toBe(0);
      // The user's next prompt in the project, then the commands they type there.
      if (HAS_DIRENV) nextPrompt(project, home, "deploy; lint; check; tsc; ship; ls >/dev/null");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("the programs of the environments direnv's layouts put first on PATH (python's virtual environment, php, go, ruby, pipenv) are refused", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-layouts-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      mkdirSync(home);
      const program = "#!/bin/sh\nexit 0\n";
      writeTree(dir, {
        "py/.envrc": "layout python3 --without-pip\n",
        "php/.envrc": "layout php\n",
        "php/vendor/bin/phpunit": program,
        "go/.envrc": "layout go\n",
        "go/.direnv/go/bin/gopls": program,
        "rb/.envrc": "layout ruby\n",
        "rb/.direnv/bin/rails": program,
        "rb/.direnv/ruby/bin/rake": program,
        "pe/.envrc": "layout pipenv\n",
        "pe/.venv/bin/black": program,
      });
      const py = path.join(dir, "py");
      // The user allows it and enters the project once: direnv makes the virtual environment (where it is installed; else one in its place), then a tool is installed in it.
      allow(py, home);
      if (HAS_DIRENV) execFileSync("direnv", ["exec", ".", "true"], { cwd: py, env: userEnv(home), stdio: "ignore" });
      else writeTree(dir, { "py/.direnv/python-3.11.7/bin/python3": program });
      const venv = readdirSync(path.join(py, ".direnv")).find((entry) => entry.startsWith("python-"))!;
      writeTree(py, { [`.direnv/${venv}/bin/pytest`]: program });
      const programs = [`py/.direnv/${venv}/bin/pytest`, "php/vendor/bin/phpunit", "go/.direnv/go/bin/gopls", "rb/.direnv/bin/rails", "rb/.direnv/ruby/bin/rake", "pe/.venv/bin/black"];
      for (const file of programs) chmodSync(path.join(dir, file), 0o755);
      const payload = lit(`#!/bin/sh\ntouch ${marker}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
${programs.map((file) => `  attempt(${lit(file)}, () => fs.access(${lit(file)}).write(${payload}));`).join("\n")}
  attempt("a new file there", () => fs.access(${lit(`py/.direnv/${venv}/bin/ls`)}).write(${payload}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, [programs[0]!], /an executable program in .*py\/\.direnv\/python-[^/]+\/bin, a directory direnv puts first on the user's PATH for .*py\/\.envrc \(layout python3 --without-pip\).*Ask the user/);
      expectRefused(found, programs.slice(1), /a directory direnv puts first on the user's PATH for .*\(layout (?:php|go|ruby|pipenv)\)/);
      expect(attemptOf(found, "a new file there").status).toBe("ok");
      for (const file of programs) expect(readFileSync(path.join(dir, file), "utf8"), file).toBe(program);
      // The user's next prompt in the project, then the tool they type there.
      if (HAS_DIRENV) nextPrompt(py, home, "pytest");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("the Nix files an .envrc evaluates with use nix, use flake and use devenv are refused; a remote flake's directory is not", async () => {
    // Nix is not installed here: this shows the refusals, not a run. nix-shell (use nix) runs a
    // shell.nix's shellHook, and use flake / use devenv a flake's or devenv's shell hook, as bash
    // code at the user's next prompt; direnv watches those files and reloads when they change.
    const { dir, cleanup } = realTempDir("tacit-direnv-nix-");
    try {
      const nix = "{ pkgs ? import <nixpkgs> {} }: pkgs.mkShell { }\n";
      writeTree(dir, {
        "p/.envrc": "use nix\n",
        "p/default.nix": nix,
        "q/.envrc": "use flake ./dev#shell\n",
        "q/dev/flake.nix": nix,
        "r/.envrc": 'if has nix; then\n  use nix --arg x 1 "ci/env.nix"\nfi\nuse devenv\n',
        "s/.envrc": "use flake github:owner/repo#shell\n",
      });
      const hook = lit('{ pkgs ? import <nixpkgs> {} }: pkgs.mkShell { shellHook = "touch PWNED"; }\n');
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("shell.nix", () => fs.access("p/shell.nix").write(${hook}));
  attempt("default.nix", () => fs.access("p/default.nix").write(${hook}));
  attempt("flake.nix", () => fs.access("q/dev/flake.nix").write(${hook}));
  attempt("flake.lock", () => fs.access("q/dev/flake.lock").write("{}\\n"));
  attempt("a .nix argument", () => fs.access("r/ci/env.nix").write(${hook}));
  attempt("devenv.nix", () => fs.access("r/devenv.nix").write(${hook}));
  attempt("another flake", () => fs.access("q/flake.nix").write("{}\\n"));
  attempt("remote flake", () => fs.access("s/flake.nix").write("{}\\n"));
  attempt("read", () => fs.access("p/default.nix").read());
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["shell.nix", "default.nix"], /a file direnv loads for .*p\/\.envrc \(use nix\).*Ask the user/);
      expectRefused(found, ["flake.nix", "flake.lock"], /\(use flake \.\/dev#shell\)/);
      expectRefused(found, ["a .nix argument"], /\(use nix --arg x 1 "ci\/env\.nix"\)/);
      expectRefused(found, ["devenv.nix"], /\(use devenv\)/);
      for (const label of ["another flake", "remote flake"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: nix });
      expect(readFileSync(path.join(dir, "p/default.nix"), "utf8")).toBe(nix);
      for (const file of ["p/shell.nix", "q/dev/flake.lock", "r/ci/env.nix", "r/devenv.nix"]) expect(existsSync(path.join(dir, file)), file).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("commands inside blocks are found: indented, after else, in braces and in a function", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-blocks-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      mkdirSync(home);
      const envrc = 'if [ -n "$NEVER_SET_HERE" ]; then\n  :\nelse\n  source_env_if_exists .envrc.local\nfi\nload_local() {\n  dotenv_if_exists .env.local\n}\nload_local\n{ PATH_add bin; }\n';
      const program = "#!/bin/sh\nexit 0\n";
      writeTree(dir, { "p/.envrc": envrc, "p/bin/deploy": program });
      chmodSync(path.join(dir, "p/bin/deploy"), 0o755);
      const project = path.join(dir, "p");
      allow(project, home);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("indented, after else", () => fs.access("p/.envrc.local").write(${lit(`touch ${marker}\n`)}));
  attempt("in a function", () => fs.access("p/.env.local").write(${lit(`PROMPT_COMMAND="touch ${marker}"\n`)}));
  attempt("in braces", () => fs.access("p/bin/deploy").write(${lit(`#!/bin/sh\ntouch ${marker}\n`)}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["indented, after else"], /\(source_env_if_exists \.envrc\.local\)/);
      expectRefused(found, ["in a function"], /\(dotenv_if_exists \.env\.local\)/);
      expectRefused(found, ["in braces"], /\(PATH_add bin\)/);
      for (const file of ["p/.envrc.local", "p/.env.local"]) expect(existsSync(path.join(dir, file)), file).toBe(false);
      expect(readFileSync(path.join(dir, "p/bin/deploy"), "utf8")).toBe(program);
      if (HAS_DIRENV) nextPrompt(project, home, "deploy");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("names written with quotes or escapes are read as the shell reads them", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-quoted-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      mkdirSync(home);
      // The shell makes these .envrc.local, bin and tools, as direnv runs the .envrc with bash.
      const envrc = `source_env_if_exists ".envrc"'.local' # personal settings\nPATH_add "b"in to\\ols\n`;
      const program = "#!/bin/sh\nexit 0\n";
      writeTree(dir, { "p/.envrc": envrc, "p/bin/deploy": program, "p/tools/lint": program });
      for (const file of ["p/bin/deploy", "p/tools/lint"]) chmodSync(path.join(dir, file), 0o755);
      const project = path.join(dir, "p");
      allow(project, home);
      const payload = lit(`#!/bin/sh\ntouch ${marker}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("sourced", () => fs.access("p/.envrc.local").write(${lit(`touch ${marker}\n`)}));
  attempt("quoted PATH_add", () => fs.access("p/bin/deploy").write(${payload}));
  attempt("escaped PATH_add", () => fs.access("p/tools/lint").write(${payload}));
});
`;
      const r = await tacit(dir, script, ["--quiet"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["sourced"], /a file direnv loads for .*\.envrc \(source_env_if_exists/);
      expectRefused(found, ["quoted PATH_add", "escaped PATH_add"], /a directory direnv puts first on the user's PATH/);
      writeTree(dir, { "p/.envrc": envrc });
      nextPrompt(project, home, HAS_DIRENV ? "deploy; lint" : "");
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
