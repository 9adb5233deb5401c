// What direnv runs without `direnv allow` of its content (runner/fs/direnv-trust.ts, direnv.ts):
// an .envrc (and, with load_dotenv, a .env) its configuration's whitelist trusts by path, and
// what the .envrc files the user once allowed load from outside their own directory (source_up,
// source_up_if_exists, `source_env ../..`), and an .envrc written back to a content the user
// allowed before (direnv keeps a record of each). Through the real CLI with the user's direnv setup in
// a temporary home, a script with requestFileSystem(".") alone may not change nor create those
// files; untrusted .envrc files, reads and ordinary files go through. Then the user's next prompt
// in each directory, with the real direnv where it is installed: no canary file.

import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, writeTree } from "./fixtures.js";

const HAS_DIRENV = spawnSync("direnv", ["version"], { stdio: "ignore" }).status === 0;

/** The environment of a user whose home is `home` (direnv keeps its configuration and what they allowed under it). */
const userEnv = (home: string): Record<string, string> => ({
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, ".config"),
  XDG_DATA_HOME: path.join(home, ".local/share"),
});

/** The user allows the .envrc in `dir`: with direnv where it is installed, else its record written as direnv writes one (a file naming the .envrc). */
function allow(dir: string, home: string): void {
  if (HAS_DIRENV) {
    execFileSync("direnv", ["allow", "."], { cwd: dir, env: { ...process.env, ...userEnv(home) } });
    return;
  }
  const envrc = path.join(dir, ".envrc");
  const records = path.join(home, ".local/share/direnv/allow");
  mkdirSync(records, { recursive: true });
  writeFileSync(path.join(records, createHash("sha256").update(`${envrc}\n${readFileSync(envrc, "utf8")}`).digest("hex")), `${envrc}\n`);
}

/** The user's next prompt in `dir` with direnv's shell hook (where direnv is installed): load what it exports, run PROMPT_COMMAND. */
function nextPrompt(dir: string, home: string): void {
  if (!HAS_DIRENV) return;
  const env: NodeJS.ProcessEnv = { ...process.env, ...userEnv(home) };
  delete env.PROMPT_COMMAND;
  execFileSync("bash", ["-c", 'eval "$(direnv export bash 2>/dev/null)"; eval "$PROMPT_COMMAND"'], { cwd: dir, env, stdio: "ignore" });
}

describe("what direnv runs without asking about its content", () => {
  it("an .envrc or .env under the whitelist's prefix or exact entries is refused; prefixes match as strings, as direnv's do", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-whitelist-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      const envrc = "export GREETING=hello\n";
      writeTree(dir, {
        "home/.config/direnv/direnv.toml": `[global]\nload_dotenv = true\n\n[whitelist]\nprefix = [\n  "${dir}/code/proj",\n]\nexact = ["${dir}/other/one"]\n`,
        "code/proj/.envrc": envrc,
        "code/proj/notes.txt": "x\n",
        "code/proj-evil/notes.txt": "x\n",
        "other/one/notes.txt": "x\n",
        "other/two/notes.txt": "x\n",
      });
      const run = lit(`touch ${marker}\n`);
      const prompt = lit(`PROMPT_COMMAND="touch ${marker}"\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("whitelisted .envrc", () => fs.access("code/proj/.envrc").write(${run}));
  attempt("new .envrc below the prefix", () => fs.access("code/proj/sub/.envrc").write(${run}));
  attempt("prefix as a string", () => fs.access("code/proj-evil/.envrc").write(${run}));
  attempt("in another case", () => fs.access("code/proj/deeper/.ENVRC").write(${run}));
  attempt(".env with load_dotenv", () => fs.access("code/proj/.env").write(${prompt}));
  attempt(".env classified", () => fs.access("code/proj/.env").writeClassified(classify(${prompt})));
  attempt("exact", () => fs.access("other/one/.envrc").write(${run}));
  attempt("exact .env", () => fs.access("other/one/.env").write(${prompt}));
  attempt("delete", () => fs.access("code/proj/.envrc").delete());
  attempt("read", () => fs.access("code/proj/.envrc").read());
  attempt("not whitelisted", () => fs.access("other/two/.envrc").write("export A=1\\n"));
  attempt("ordinary", () => fs.access("code/proj/notes.txt").write("y\\n"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: userEnv(home) });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["whitelisted .envrc", "new .envrc below the prefix", "prefix as a string", "in another case", ".env with load_dotenv", ".env classified", "exact", "exact .env", "delete"],
        /a file direnv runs without asking: its whitelist in .*direnv\.toml trusts it by path.*without `direnv allow`.*Ask the user/,
      );
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: envrc });
      for (const label of ["not whitelisted", "ordinary"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(readFileSync(path.join(dir, "code/proj/.envrc"), "utf8")).toBe(envrc);
      for (const file of ["code/proj/sub/.envrc", "code/proj-evil/.envrc", "code/proj/deeper", "code/proj/.env", "other/one/.envrc", "other/one/.env"]) {
        expect(existsSync(path.join(dir, file)), file).toBe(false);
      }
      for (const at of ["code/proj", "code/proj-evil", "other/one"]) nextPrompt(path.join(dir, at), home);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("the whitelist is read from $DIRENV_CONFIG and from config.toml, with ~ and through links", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-whitelist-config-");
    try {
      const home = path.join(dir, "home");
      writeTree(dir, {
        "conf/config.toml": `whitelist.prefix = ["~/code", "${dir}/linked"]\n`,
        "home/code/p/notes.txt": "x\n",
        "elsewhere/q/notes.txt": "x\n",
        "free/notes.txt": "x\n",
      });
      symlinkSync(path.join(dir, "elsewhere"), path.join(dir, "linked"));
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("under ~", () => fs.access("home/code/p/.envrc").write("touch x\\n"));
  attempt("where the prefix leads", () => fs.access("elsewhere/q/.envrc").write("touch x\\n"));
  attempt("through the link", () => fs.access("linked/q/.envrc").write("touch x\\n"));
  attempt(".env without load_dotenv", () => fs.access("home/code/p/.env").write("A=1\\n"));
  attempt("not whitelisted", () => fs.access("free/.envrc").write("export A=1\\n"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: { ...userEnv(home), DIRENV_CONFIG: path.join(dir, "conf") } });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["under ~", "where the prefix leads", "through the link"], /its whitelist in .*conf\/config\.toml trusts it by path/);
      for (const label of [".env without load_dotenv", "not whitelisted"]) expect(attemptOf(found, label).status, label).toBe("ok");
      for (const file of ["home/code/p/.envrc", "elsewhere/q/.envrc"]) expect(existsSync(path.join(dir, file)), file).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("what an allowed .envrc loads from above or beside its directory (source_up, source_env ../..) is refused", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-up-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      mkdirSync(home);
      const top = "export PROJECT=s\n";
      writeTree(dir, {
        "s/.envrc": top,
        "s/a/b/.envrc": "source_up\n",
        "s/a/c/.envrc": "source_env ../../lib/env.sh\nsource_up_if_exists shared.sh\n",
        "s/lib/env.sh": "export LIB=1\n",
        "u/v/.envrc": "source_env ..\n",
        "u/v/notes.txt": "x\n",
        "s/a/b/c/notes.txt": "x\n",
      });
      for (const at of ["s/a/b", "s/a/c", "u/v"]) allow(path.join(dir, at), home);
      const run = lit(`touch ${marker}\n`);
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("source_up, the nearest", () => fs.access("s/.envrc").write(${run}));
  attempt("source_up, a nearer one", () => fs.access("s/a/.envrc").write(${run}));
  attempt("source_env up and across", () => fs.access("s/lib/env.sh").append(${run}));
  attempt("source_up_if_exists name", () => fs.access("s/shared.sh").write(${run}));
  attempt("source_up_if_exists name, nearer", () => fs.access("s/a/shared.sh").write(${run}));
  attempt("source_env of a directory", () => fs.access("u/.envrc").write(${run}));
  attempt("read", () => fs.access("s/.envrc").read());
  attempt("below the loader", () => fs.access("s/a/b/c/.envrc").write("export C=1\\n"));
  attempt("the loader itself", () => fs.access("s/a/b/.envrc").append("# direnv asks again for a changed .envrc\\n"));
  attempt("beside a directory's .envrc", () => fs.access("u/v/notes.txt").write("y\\n"));
});
`;
      const r = await runScript(script, ["--quiet"], { cwd: dir, env: userEnv(home) });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(found, ["source_up, the nearest", "source_up, a nearer one"], /a file direnv loads for .*s\/a\/b\/\.envrc \(source_up\).*Ask the user/);
      expectRefused(found, ["source_env up and across"], /a file direnv loads for .*s\/a\/c\/\.envrc \(source_env \.\.\/\.\.\/lib\/env\.sh\)/);
      expectRefused(found, ["source_up_if_exists name", "source_up_if_exists name, nearer"], /\(source_up_if_exists shared\.sh\)/);
      expectRefused(found, ["source_env of a directory"], /a file direnv loads for .*u\/v\/\.envrc \(source_env \.\.\)/);
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: top });
      for (const label of ["below the loader", "the loader itself", "beside a directory's .envrc"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expect(readFileSync(path.join(dir, "s/.envrc"), "utf8")).toBe(top);
      for (const file of ["s/a/.envrc", "s/shared.sh", "s/a/shared.sh", "u/.envrc"]) expect(existsSync(path.join(dir, file)), file).toBe(false);
      // The user's next prompts, with the loader as it was allowed.
      writeTree(dir, { "s/a/b/.envrc": "source_up\n" });
      for (const at of ["s/a/b", "s/a/c", "u/v"]) nextPrompt(path.join(dir, at), home);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);

  it("an .envrc may not be written back to a content the user allowed before, after the file that content loads", async () => {
    const { dir, cleanup } = realTempDir("tacit-direnv-allowed-before-");
    try {
      const marker = path.join(dir, "PWNED");
      const home = path.join(dir, "home");
      mkdirSync(home);
      const loader = "source_env_if_exists .envrc.local\n";
      const now = "export X=1\n";
      const secret = "export TOKEN=s3cr3t\n";
      writeTree(dir, { "s/.envrc": loader, "p/.envrc": loader, "w/.envrc": now, "c/.envrc": secret });
      // The user allowed the loader once, then changed the .envrc and allowed that: direnv keeps both records.
      for (const at of ["s", "p"]) allow(path.join(dir, at), home);
      writeTree(dir, { "s/.envrc": now, "p/.envrc": now });
      for (const at of ["s", "p", "w", "c"]) allow(path.join(dir, at), home);
      symlinkSync(path.join(dir, "s"), path.join(dir, "via"));
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("the file it loads", () => fs.access("s/.envrc.local").write(${lit(`touch ${marker}\n`)}));
  attempt("the file it loads, in p", () => fs.access("p/.envrc.local").write(${lit(`touch ${marker}\n`)}));
  attempt("back to the allowed content", () => fs.access("s/.envrc").write(${lit(loader)}));
  attempt("in pieces", () => {
    fs.access("p/.envrc").write("source_env_if_exists");
    fs.access("p/.envrc").append(" .envrc.local\\n");
  });
  attempt("through a link", () => fs.access("via/.envrc").write(${lit(loader)}));
  attempt("after deleting it", () => {
    fs.access("w/.envrc").delete();
    fs.access("w/.envrc").write(${lit(now)});
  });
  attempt("classified, its content guessed", () => fs.access("c/.envrc").write(${lit(secret)}));
  attempt("classified, another guess", () => fs.access("c/.envrc").write("export TOKEN=guess\\n"));
  attempt("writeClassified", () => fs.access("c/.envrc").writeClassified(classify(${lit(secret)})));
  attempt("a content never allowed", () => fs.access("w/.envrc").write("export Y=2\\n"));
});
`;
      const r = await runScript(script, ["--quiet", "--classified-paths", "**/c/.envrc"], { cwd: dir, env: userEnv(home) });
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      for (const label of ["the file it loads", "the file it loads, in p"]) expect(attemptOf(found, label).status, label).toBe("ok");
      expectRefused(
        found,
        ["back to the allowed content", "in pieces", "through a link", "after deleting it"],
        /refused: it would leave this \.envrc holding a content the user allowed before .*direnv's shell hook runs such an \.envrc .*without asking.*Write other content .*`direnv allow`/,
      );
      expectRefused(found, ["classified, its content guessed", "classified, another guess"], /refused: the path is classified, and tacit judges a write here by what the file holds now/);
      expectRefused(found, ["writeClassified"], /writeClassified\(\) refused: this is an \.envrc the user allowed before/);
      expect(attemptOf(found, "a content never allowed").status).toBe("ok");
      expect(readFileSync(path.join(dir, "s/.envrc"), "utf8")).toBe(now);
      expect(readFileSync(path.join(dir, "p/.envrc"), "utf8")).toBe("source_env_if_exists");
      expect(readFileSync(path.join(dir, "c/.envrc"), "utf8")).toBe(secret);
      // The user's next prompts there: s/.envrc still holds the content last allowed, p/.envrc one never allowed; neither loads the script's file.
      for (const at of ["s", "p"]) nextPrompt(path.join(dir, at), home);
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 60_000);
});
