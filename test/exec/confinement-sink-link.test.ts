// The secure output in the allowed roots, made by tacit before the first confined command (so that
// the command cannot make it first: runner/exec/confinement.ts, ownPlacesMade). It was made by its
// path, directories and all (mkdir -p, then an exclusive create): a directory on its way that was
// missing when the run began, then put there as a link by someone else (a confined command of
// another run whose roots hold this one, say), was followed, and tacit created the file where the
// link led. Now it is made as the secure output makes it (runner/secure-sink.ts): in the directory
// tacit first found, each missing directory made in the one above as opened and checked, so the
// link is refused and the command with it, and nothing is created where the link leads.
//
// The script waits for its piped input, after tacit has found the sink's directory and before its
// first command: the test puts the link there meanwhile, then ends the input. It prints nothing
// before: the secure output is opened (its directory made) at the first thing a script prints, so
// a script that said "waiting" first raced the test's link with tacit's mkdir. It writes a file
// the test waits for instead.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { childEnv, tacitBin } from "../helpers.js";
import { realTempDir } from "../files/fixtures.js";

const SCRIPT = `
requestFileSystem(".", (fs) => fs.access("started").write("the script runs"));
readInput();
requestExecPermission(["true"], (proc) => {
  try {
    proc.exec("true");
    println("the command ran");
  } catch (e) {
    println("refused: " + (e as Error).message);
  }
});
`;

describe("the secure output's directory, missing when the run began and then a link, as tacit makes the file before a confined command", () => {
  let base: string;
  let cleanup: () => void;
  let work: string;
  let elsewhere: string;
  beforeEach(() => {
    ({ dir: base, cleanup } = realTempDir("tacit-confined-sink-"));
    work = path.join(base, "work");
    elsewhere = path.join(base, "elsewhere");
    mkdirSync(work);
    mkdirSync(elsewhere);
    writeFileSync(path.join(work, "script.ts"), SCRIPT);
  });
  afterEach(() => cleanup());

  it("refuses the command and creates nothing where the link leads", async () => {
    const child = spawn(
      process.execPath,
      [tacitBin, "run", "--no-check", "--command-permissions", "true", "--confine-commands", "--secure-output", "out/secure.log", "script.ts"],
      { cwd: work, env: childEnv(), stdio: ["pipe", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    let ended = false;
    child.on("exit", () => (ended = true));
    // tacit found the sink's directory as the run began; the script has written its file and now waits for its input.
    while (!existsSync(path.join(work, "started"))) {
      if (ended) throw new Error(`tacit ended before the script waited: ${stdout}${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(existsSync(path.join(work, "out")), "the sink's directory, made before the link (nothing was printed)").toBe(false);
    symlinkSync(elsewhere, path.join(work, "out"));
    child.stdin.end("go\n");
    const code = await exited;

    expect(readdirSync(elsewhere), "what tacit created where the link leads").toEqual([]);
    expect(stdout, stderr).not.toContain("the command ran");
    expect(stdout).toContain(`refused: exec("true"): refused, nothing was run: the secure output ${path.join(work, "out", "secure.log")} is no longer where tacit first found its directory`);
    expect(stdout).toContain(`${path.join(work, "out")} is now a symbolic link`);
    expect(existsSync(path.join(elsewhere, "secure.log"))).toBe(false);
    expect(code).toBe(0);
  });
});
