// The .env of a directory on Oh My Zsh's dotenv allowed list (runner/fs/zsh-dotenv.ts): the
// plugin's "always" answer remembers the directory's path, not the file's content, and loads
// the .env there at every cd without asking again. Through the real CLI, a script with
// requestFileSystem(".") alone may not write (nor create) the .env of an allowed directory,
// under the default list (~/.oh-my-zsh/cache) or the one $ZSH_DOTENV_ALLOWED_LIST names; reads,
// and the .env of a directory not on the list (the plugin asks there), go through. Then the
// user's next cd into the project: Oh My Zsh is not installed here, so a stand-in does what the
// plugin's releases before 2025 do for an allowed directory (`set -a; source .env`); no canary.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, writeTree } from "./fixtures.js";

/** The user's next cd into `dir`: the plugin's chpwd hook, for a directory on `list`, then the prompt. */
function cdInto(dir: string, list: string): void {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PROMPT_COMMAND;
  const hook = `if grep -Fxq "$(pwd -P)" ${JSON.stringify(list)} && [ -f .env ]; then set -a; . ./.env; set +a; fi`;
  execFileSync("bash", ["-c", `cd ${JSON.stringify(dir)} && ${hook}; eval "$PROMPT_COMMAND"`], { env, stdio: "ignore" });
}

describe("the .env of a directory Oh My Zsh's dotenv plugin always loads", () => {
  for (const where of ["default list", "ZSH_DOTENV_ALLOWED_LIST"] as const) {
    it(`is refused, where the allowed list is the ${where}; reads and other directories' .env are not`, async () => {
      const { dir, cleanup } = realTempDir("tacit-zsh-dotenv-");
      try {
        const marker = path.join(dir, "PWNED");
        const home = path.join(dir, "home");
        const list = where === "default list" ? path.join(home, ".oh-my-zsh/cache/dotenv-allowed.list") : path.join(dir, "lists/allowed");
        mkdirSync(path.dirname(list), { recursive: true });
        writeTree(dir, { "p/.env": "GREETING=hi\n", "p/notes.txt": "x\n", "q/.env": "A=1\n", "r/keep.txt": "x\n" });
        // The user answered "always" in p and in r (r has no .env yet).
        writeTree(path.dirname(list), { [path.basename(list)]: `${path.join(dir, "p")}\n${path.join(dir, "r")}\n` });
        const env: Record<string, string> = { HOME: home, ...(where === "default list" ? {} : { ZSH_DOTENV_ALLOWED_LIST: list }) };
        const payload = lit(`PROMPT_COMMAND="touch ${marker}"\ntouch ${marker}\n`);
        const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("allowed", () => fs.access("p/.env").write(${payload}));
  attempt("allowed append", () => fs.access("p/.env").append(${payload}));
  attempt("allowed, new", () => fs.access("r/.env").write(${payload}));
  attempt("allowed classified", () => fs.access("p/.env").writeClassified(classify(${payload})));
  attempt("read", () => { fs.access("p/.env").readClassified(); return "read"; });
  attempt("ordinary", () => fs.access("p/notes.txt").write("y\\n"));
  attempt("not allowed", () => fs.access("q/.env").write("A=2\\n"));
});
`;
        const r = await runScript(script, ["--quiet"], { cwd: dir, env });
        expect(r.code, r.stderr).toBe(0);
        const found = attempts(r.stdout);
        expectRefused(found, ["allowed", "allowed append", "allowed classified"], /the file Oh My Zsh's dotenv plugin loads in .*\/p, a directory on its allowed list .*without asking.*Ask the user/);
        expectRefused(found, ["allowed, new"], /dotenv plugin loads in .*\/r,/);
        // A .env is classified: read through readClassified, as ever.
        expect(attemptOf(found, "read")).toEqual({ status: "ok", value: "read" });
        for (const label of ["ordinary", "not allowed"]) expect(attemptOf(found, label).status, label).toBe("ok");
        expect(readFileSync(path.join(dir, "p/.env"), "utf8")).toBe("GREETING=hi\n");
        expect(existsSync(path.join(dir, "r/.env"))).toBe(false);
        for (const project of ["p", "r"]) cdInto(path.join(dir, project), list);
        expect(existsSync(marker)).toBe(false);
      } finally {
        cleanup();
      }
    }, 60_000);
  }
});
