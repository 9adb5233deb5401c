// What a person states on the command line is what tacit runs under, or tacit refuses: a flag
// given twice kept only its last value in silence (commander's way), so a classified pattern or a
// whole config file given first was dropped, and the script read what the person had classified.
// And a secret named as the script is refused: the checks' messages quoted its words.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, watch, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tacitBin, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-stated-policy-");
afterAll(cleanup);

const CANARY = "CANARY-stated-policy-7f3a";
writeFileSync(path.join(dir, ".secret"), `${CANARY}\n`);
writeFileSync(path.join(dir, "strict.json"), JSON.stringify({ libraryConfig: { classifiedPaths: [".secret", ".env"] } }));
writeFileSync(path.join(dir, "loose.json"), JSON.stringify({}));
const readSecret = path.join(dir, "read-secret.ts");
writeFileSync(readSecret, `requestFileSystem(".", (fs) => { println(fs.access(".secret").read()); });\n`);

describe.concurrent("a value flag given twice is refused, not half-read", () => {
  it("--classified-paths twice: the first list is not dropped (the script does not read what it classified)", async () => {
    const r = await runCli(["run", "--no-check", "--classified-paths", ".secret", "--classified-paths", ".env", readSecret], { cwd: dir, env });
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--classified-paths is given twice");
    expect(r.stderr).toContain("one comma-separated list (--classified-paths a,b)");
  });

  it("--config twice, the second with = : the first file's policy is not dropped", async () => {
    const r = await runCli(["run", "--no-check", "--config", "strict.json", "--config=loose.json", readSecret], { cwd: dir, env });
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--config is given twice");
  });

  it("--llm-api-key twice: refused with --json too, and neither key is repeated in the error", async () => {
    const r = await runCli(["run", "--json", "--llm-api-key", "sk-first-4b1d", "--llm-api-key", "sk-second-9c2e", readSecret], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ exitCode: 2, outcome: "usage" });
    expect(r.stdout + r.stderr).toContain("--llm-api-key is given twice");
    expect(r.stdout + r.stderr).not.toMatch(/sk-first|sk-second/);
  });

  it("--classified-paths with no pattern (an unset variable's empty value), even with --quiet: refused, and .env stays classified", async () => {
    const project = path.join(dir, "empty-list");
    mkdirSync(project);
    writeFileSync(path.join(project, ".env"), `ENV_CANARY=${CANARY}-env\n`);
    writeFileSync(path.join(project, "read-env.ts"), `requestFileSystem(".", (fs) => { println(fs.access(".env").read()); });\n`);
    for (const empty of ["", " , "]) {
      const r = await runCli(["run", "--no-check", "--quiet", `--classified-paths=${empty}`, "read-env.ts"], { cwd: project, env });
      expect(r.stdout + r.stderr).not.toContain(CANARY);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("--classified-paths names no pattern, and its list replaces the defaults");
    }
  });

  it("--classified-paths whose value was left out, the next flag taken for it: refused, and .env stays classified", async () => {
    const project = path.join(dir, "value-left-out");
    mkdirSync(project);
    writeFileSync(path.join(project, ".env"), `ENV_CANARY=${CANARY}-left-out\n`);
    writeFileSync(path.join(project, "read-env.ts"), `requestFileSystem(".", (fs) => { println(fs.access(".env").read()); });\n`);
    const r = await runCli(["run", "--no-check", "--classified-paths", "--quiet", "read-env.ts"], { cwd: project, env });
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--classified-paths takes a value, but the word after it is the flag --quiet: was the value left out?");
  });

  it("each value flag once (one list, one file) runs as stated", async () => {
    const r = await runCli(["run", "--no-check", "--quiet", "--config", "strict.json", readSecret], { cwd: dir, env });
    expect(r.stdout).not.toContain(CANARY);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("read refused: the path is classified");
  });
});

describe.concurrent("a secret named as the script is refused before the checks' messages quote it", () => {
  // Identifiers, which the validator's unknown-global errors name one by one.
  const envCanary = "AKIACANARYENVWORD";
  writeFileSync(path.join(dir, ".env"), `AWS_ACCESS_KEY_ID=${envCanary}\n`);
  symlinkSync(".env", path.join(dir, "linked.ts"));

  it("run .env: a classified file", async () => {
    const r = await runCli(["run", ".env"], { cwd: dir, env });
    expect(r.stdout + r.stderr).not.toContain(envCanary);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the script ".env" is a classified path (${path.join(dir, ".env")})`);
  });

  it("run .env: refused before the type checker is given its text (no check directory is made for it)", async () => {
    // The checker writes the script into a directory of its own under TMPDIR (and keeps a digest
    // of it in its cache): watched here, none may appear for a secret tacit refuses to run.
    const tmp = mkdtempSync(path.join(dir, "tmp-"));
    const made: string[] = [];
    const watcher = watch(tmp, (_event, name) => {
      if (name !== null) made.push(name.toString());
    });
    try {
      const r = await runCli(["run", ".env"], { cwd: dir, env: { ...env, TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" } });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`the script ".env" is a classified path`);
      // A check of a script that is no secret, the same way, does make one: the watch sees it.
      writeFileSync(path.join(dir, "plain-check.ts"), 'println("plain");\n');
      const plain = await runCli(["run", "plain-check.ts"], { cwd: dir, env: { ...env, TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" } });
      expect(plain.code, plain.stderr).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      watcher.close();
    }
    const checkDirs = made.filter((name) => name.startsWith("tacit-check-"));
    // Every check directory seen belongs to the plain script's run (one), none to .env's.
    expect(new Set(checkDirs).size).toBe(1);
  });

  it("check --json linked.ts: a link to a classified file", async () => {
    const r = await runCli(["check", "--json", "linked.ts"], { cwd: dir, env });
    expect(r.stdout + r.stderr).not.toContain(envCanary);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, exitCode: 2 });
    expect(r.stderr).toContain(`which leads to ${path.join(dir, ".env")}): tacit does not read a secret as a script`);
  });

  it("run /dev/stdin with the script piped in still runs: a pipe is no file, and no secret of one", async () => {
    // Through a shell's pipe: a Node child's stdin is a socket, which /dev/stdin cannot open (ENXIO).
    const pipeline = `printf '%s\\n' 'println("piped ran");' | "${process.execPath}" "${tacitBin}" run --no-check /dev/stdin`;
    const r = await runCli([pipeline], { cwd: dir, env, node: "/bin/sh", bin: "-c" });
    expect(r.stdout).toBe("piped ran\n");
    expect(r.code).toBe(0);
  });

  it("run sink.log: the secure output an earlier run wrote plaintext to", async () => {
    const sinkCanary = "SINKCANARYWORD";
    writeFileSync(path.join(dir, "sink-writer.ts"), `println(classify(${JSON.stringify(sinkCanary)}));\n`);
    const first = await runCli(["run", "--no-check", "--quiet", "--secure-output", "sink.log", "sink-writer.ts"], { cwd: dir, env });
    expect(first.code).toBe(0);
    expect(readFileSync(path.join(dir, "sink.log"), "utf8")).toContain(sinkCanary);
    const r = await runCli(["run", "sink.log"], { cwd: dir, env });
    expect(r.stdout + r.stderr).not.toContain(sinkCanary);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the script "sink.log" is the secure output file');
  });
});

describe.concurrent("a path or pattern holding ~ or $HOME, which no shell expanded, is refused", () => {
  it("a classified pattern ~/… in a flag's list: refused, naming the path meant, and the file it meant is not read", async () => {
    const r = await runCli(["run", "--no-check", "--allowed-roots", dir, "--classified-paths", `.env,~/${path.basename(dir)}/.secret`, readSecret], {
      cwd: dir,
      env: { ...env, HOME: path.dirname(dir) },
    });
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`"~/${path.basename(dir)}/.secret" holds ~, which tacit does not expand`);
    expect(r.stderr).toContain(`Write the path out (${path.join(dir, ".secret")})`);
  });

  it('"secureOutput": "~/sink.log" and "recordPath": "$HOME/rec" in a config file: refused, and nothing is made in the working directory', async () => {
    const config = path.join(dir, "tilde.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { secureOutput: "~/tilde-sink.log" } }));
    const bySink = await runCli(["run", "--no-check", "--config", config, readSecret], { cwd: dir, env });
    expect(bySink.code).toBe(2);
    expect(bySink.stderr).toContain(`libraryConfig.secureOutput (--secure-output): "~/tilde-sink.log" holds ~`);
    expect(existsSync(path.join(dir, "~"))).toBe(false);
    const record = path.join(dir, "home-record.json");
    writeFileSync(record, JSON.stringify({ recordPath: "$HOME/rec" }));
    const byRecord = await runCli(["run", "--no-check", "--config", record, readSecret], { cwd: dir, env: { ...env, HOME: dir } });
    expect(byRecord.code).toBe(2);
    expect(byRecord.stderr).toContain(`recordPath (--record): "$HOME/rec" holds $HOME, which tacit does not expand`);
    expect(byRecord.stderr).toContain(`Give the absolute path (${dir}/rec)`);
    expect(existsSync(path.join(dir, "$HOME"))).toBe(false);
  });
});

describe("a classified pattern with a leading !, read as in .gitignore, is not what tacit does", () => {
  it("warns that it classifies every other path, and says how to leave a name out", async () => {
    const r = await runCli(["run", "--no-check", "--classified-paths", ".env*,!.env.example", readSecret], { cwd: dir, env });
    expect(r.stderr).toContain(`classified path "!.env.example" classifies every path but what ".env.example" matches`);
    expect(r.stderr).toContain(`".env.[!e]*" classifies every .env.* but .env.example`);
    // Everything else is classified, the script too: nothing of .secret is read.
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
  });
});

describe.concurrent("a TACIT_HOME that is a file, not a directory", () => {
  it.each([["approvals", "grant", "exec git status"], ["audit", "key"]])("tacit %s %s: exit 2, saying what is wrong and what to set", async (...args) => {
    const home = path.join(dir, `home-file-${args[0]}`);
    writeFileSync(home, "not a directory\n");
    const r = await runCli(args, { cwd: dir, env: { ...env, TACIT_HOME: home } });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("internal error");
    expect(r.stderr).toContain(`tacit's home ${home} (TACIT_HOME) cannot be made: it, or a directory above it, is a file, not a directory; set TACIT_HOME`);
    expect(readFileSync(home, "utf8")).toBe("not a directory\n");
  });
});

describe("a config key with an invisible character in it", () => {
  it("is refused, naming the key it reads as (the key itself is not shown)", async () => {
    const config = path.join(dir, "invisible-key.json");
    writeFileSync(config, `{"libraryConfig": {"classifiedPaths\\u200b": [".secret"], "allowed Roots": ["."]}}`);
    const r = await runCli(["run", "--no-check", "--config", config, readSecret], { cwd: dir, env });
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`(it reads as "classifiedPaths" but holds a space or an invisible character: retype it)`);
    expect(r.stderr).toContain(`(it reads as "allowedRoots" but holds a space or an invisible character: retype it)`);
  });
});

describe("--classified-paths beside a config file's classifiedPaths", () => {
  it("replaces the file's list, warning with the file's patterns it drops", async () => {
    const r = await runCli(["run", "--no-check", "--config", "strict.json", "--classified-paths", ".env", readSecret], { cwd: dir, env });
    expect(r.stderr).toContain(
      "--classified-paths replaces the config file's libraryConfig.classifiedPaths, so these patterns of the file are not classified in this run (scripts can read them as plain text): .secret;",
    );
  });
});

describe.concurrent("a relative TACIT_HOME or XDG_CONFIG_HOME, which would put tacit's home inside the project", () => {
  it("TACIT_HOME=home: refused (exit 2) before anything runs, and no home is made in the working directory", async () => {
    const project = path.join(dir, "relative-home");
    mkdirSync(project);
    writeFileSync(path.join(project, "s.ts"), `println("ran");\n`);
    const r = await runCli(["run", "--no-check", "--secure-output", path.join(dir, "relative-home-sink.log"), "s.ts"], {
      cwd: project,
      env: { ...env, TACIT_HOME: "home" },
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`TACIT_HOME is a relative path ("home")`);
    expect(r.stderr).toContain(`set it to an absolute path (such as ${path.join(project, "home")})`);
    expect(existsSync(path.join(project, "home"))).toBe(false);
  });

  it("XDG_CONFIG_HOME=config, TACIT_HOME unset: refused too, and nothing is made in the working directory", async () => {
    const project = path.join(dir, "relative-xdg");
    mkdirSync(project);
    const r = await runCli(["audit", "key"], { cwd: project, env: { ...env, TACIT_HOME: "", XDG_CONFIG_HOME: "config" } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`XDG_CONFIG_HOME is a relative path ("config")`);
    expect(existsSync(path.join(project, "config"))).toBe(false);
  });
});

describe("a script in a record directory", () => {
  it("runs (a record holds scripts and what they printed, no secret), with --record naming the directory and in a later run", async () => {
    const project = path.join(dir, "recorded");
    mkdirSync(project);
    writeFileSync(path.join(project, "s.ts"), `println("recorded ran");\n`);
    for (const flags of [["--record", "."], []]) {
      const r = await runCli(["run", "--no-check", "--quiet", ...flags, "s.ts"], { cwd: project, env });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("recorded ran\n");
      expect(r.code).toBe(0);
    }
  });
});

describe("--allowed-roots naming a directory whose name holds a comma", () => {
  it("is refused rather than split into other directories the script may then open", async () => {
    const project = path.join(dir, "comma-root");
    for (const sub of ["a,b", "a", "b"]) mkdirSync(path.join(project, sub), { recursive: true });
    writeFileSync(path.join(project, "a", "other.txt"), `${CANARY}-comma\n`);
    writeFileSync(path.join(project, "s.ts"), `requestFileSystem("a", (fs) => { println(fs.access("other.txt").read()); });\n`);
    const r = await runCli(["run", "--no-check", "--allowed-roots", "a,b", "s.ts"], { cwd: project, env });
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`a directory of that very name exists, but the list is comma-separated, so it would name "a" and "b" instead`);
  });
});
