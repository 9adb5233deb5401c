// mise's configuration in a directory mise trusts (runner/fs/mise.ts): mise trusts a directory by
// its path, so a changed or new configuration there, and what it names, load at the user's next
// prompt or cd without a new question. Through the real CLI, a script with requestFileSystem(".")
// alone may not change the trusted mise.toml (a [hooks] enter of its own), create a
// mise.local.toml beside it, nor write the script its `_.source` names or the dotenv file its
// `_.file` names, nor a script a hook names; the same in an untrusted directory, and reads, go
// through. Then the user's next prompt there with the real mise where it is installed (its shell
// hook runs `mise hook-env`): no canary file.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, writeTree } from "./fixtures.js";

const HAS_MISE = spawnSync("mise", ["--version"], { stdio: "ignore" }).status === 0;

/** The environment of a user whose home is `home` (mise keeps what they trusted under it). */
const userEnv = (home: string): Record<string, string> => ({
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, ".config"),
  XDG_DATA_HOME: path.join(home, ".local/share"),
  XDG_STATE_HOME: path.join(home, ".local/state"),
  XDG_CACHE_HOME: path.join(home, ".cache"),
});

/** The user trusts `project` with mise (where it is installed; else the link `mise trust` makes). */
function trust(project: string, home: string): void {
  if (HAS_MISE) {
    execFileSync("mise", ["trust", path.join(project, "mise.toml")], { cwd: project, env: { ...process.env, ...userEnv(home) }, stdio: "ignore" });
    return;
  }
  const records = path.join(home, ".local/state/mise/trusted-configs");
  mkdirSync(records, { recursive: true });
  symlinkSync(project, path.join(records, `${path.basename(project)}-0000000000000000`));
}

/** What bash does at the next prompt in `dir` with mise's hook: load what `mise hook-env` exports, then run PROMPT_COMMAND. */
function nextPrompt(dir: string, home: string): void {
  const env: NodeJS.ProcessEnv = { ...process.env, ...userEnv(home) };
  delete env.PROMPT_COMMAND;
  execFileSync("bash", ["-c", 'eval "$(mise hook-env -s bash 2>/dev/null)"; eval "$PROMPT_COMMAND"'], { cwd: dir, env, stdio: "ignore" });
}

describe("mise's configuration in a directory mise trusts", () => {
  it("the trusted configuration, a new one beside it, and the files it sources or hooks name are refused; untrusted directories are not", async () => {
    const { dir, cleanup } = realTempDir("tacit-mise-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      mkdirSync(home);
      const config = '[env]\n_.source = "./scripts/env.sh"\n_.file = ".env.local"\nGREETING = "hi"\n\n[hooks]\nenter = "bash tools/enter.sh"\n';
      writeTree(dir, {
        "p/mise.toml": config,
        "p/scripts/env.sh": "export FROM_SOURCE=1\n",
        "p/.env.local": "FROM_FILE=1\n",
        "p/tools/enter.sh": "true\n",
        "p/notes.txt": "x\n",
        "q/mise.toml": "[tools]\n",
      });
      const project = path.join(dir, "p");
      trust(project, home);
      const touch = `touch ${marker}`;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("config", () => fs.access("p/mise.toml").write(${lit(`[hooks]\nenter = "${touch}"\n`)}));
  attempt("config append", () => fs.access("p/mise.toml").append(${lit(`\n[hooks.cd]\nscript = "${touch}"\n`)}));
  attempt("new local config", () => fs.access("p/mise.local.toml").write(${lit(`[hooks]\nenter = "${touch}"\n`)}));
  attempt("config dir", () => fs.access("p/.config/mise").mkdir());
  attempt("new config dir", () => fs.access("p/.config/mise/config.toml").write(${lit(`[hooks]\nenter = "${touch}"\n`)}));
  attempt("tool versions", () => fs.access("p/.tool-versions").write("node path:./tools\\n"));
  attempt("sourced", () => fs.access("p/scripts/env.sh").write(${lit(`${touch}\n`)}));
  attempt("dotenv", () => fs.access("p/.env.local").write(${lit(`PROMPT_COMMAND="${touch}"\n`)}));
  attempt("hook script", () => fs.access("p/tools/enter.sh").write(${lit(`${touch}\n`)}));
  attempt("read config", () => fs.access("p/mise.toml").read());
  attempt("ordinary", () => fs.access("p/notes.txt").write("y\\n"));
  attempt("untrusted project", () => fs.access("q/mise.toml").write(${lit(`[hooks]\nenter = "${touch}"\n`)}));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: userEnv(home) });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["config", "config append", "new local config", "new config dir", "tool versions"], /mise's configuration of .*\/p, a directory mise trusts.*by its path.*Ask the user/);
      expectRefused(found, ["sourced"], /a file mise loads or runs for .*mise\.toml \(env\._\.source = "\.\/scripts\/env\.sh"\).*Ask the user/);
      expectRefused(found, ["dotenv"], /a file mise loads or runs for .*mise\.toml \(env\._\.file = "\.env\.local"\)/);
      expectRefused(found, ["hook script"], /a file mise loads or runs for .*mise\.toml \(hooks\.enter = "bash tools\/enter\.sh"\)/);
      expect(attemptOf(found, "read config")).toEqual({ status: "ok", value: config });
      for (const label of ["config dir", "ordinary", "untrusted project"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(readFileSync(path.join(project, "mise.toml"), "utf8")).toBe(config);
      expect(existsSync(path.join(project, "mise.local.toml"))).toBe(false);
      expect(readFileSync(path.join(project, "scripts/env.sh"), "utf8")).toBe("export FROM_SOURCE=1\n");
      // The user's next prompt in the project, and in the untrusted one (mise asks first there).
      if (HAS_MISE) {
        nextPrompt(project, home);
        nextPrompt(path.join(dir, "q"), home);
      }
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
