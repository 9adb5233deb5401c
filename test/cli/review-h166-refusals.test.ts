// Refusals that had a second spelling, through the real CLI: tacit's home named by a relative HOME
// (as by a relative TACIT_HOME or XDG_CONFIG_HOME), a classified file given as the script on
// standard input (as `tacit run .env` or `/dev/stdin < .env`), and Node's inspector opened by a
// SIGUSR1 that reached tacit before its own handler was installed.

import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CliResult, childEnv, runCli, tacitBin, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-review-h166-");
afterAll(cleanup);

/** Runs the CLI with the file `stdinFile` as its standard input (a shell's `< file`), not a pipe. */
function runCliWithStdinFile(args: string[], stdinFile: string, cwd: string): Promise<CliResult> {
  const fd = openSync(stdinFile, "r");
  try {
    const child = spawn(process.execPath, [tacitBin, ...args], { cwd, env: childEnv(env), stdio: [fd, "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  } finally {
    closeSync(fd);
  }
}

describe.concurrent("a classified file on standard input, given as the script", () => {
  // An identifier, which the validator's unknown-global error names.
  const canary = "AKIACANARYSTDINWORD";
  const project = path.join(dir, "stdin-secret");
  mkdirSync(project);
  writeFileSync(path.join(project, ".env"), `AWS_ACCESS_KEY_ID=${canary}\n`);
  writeFileSync(path.join(project, "ok.ts"), `println("ran from stdin");\n`);

  it("run - < .env: refused as run .env is, and no word of it is quoted", async () => {
    const r = await runCliWithStdinFile(["run", "-"], path.join(project, ".env"), project);
    expect(r.stdout + r.stderr).not.toContain(canary);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the script on standard input is a classified path (/proc/self/fd/0, which leads to ${path.join(project, ".env")})`);
  });

  it("check - < .env: refused too", async () => {
    const r = await runCliWithStdinFile(["check", "-"], path.join(project, ".env"), project);
    expect(r.stdout + r.stderr).not.toContain(canary);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the script on standard input is a classified path");
  });

  it("run - < ok.ts, a file of one's own, and a piped script still run", async () => {
    const fromFile = await runCliWithStdinFile(["run", "--no-check", "-"], path.join(project, "ok.ts"), project);
    expect(fromFile.stderr).toBe("");
    expect(fromFile.stdout).toBe("ran from stdin\n");
    const piped = await runCli(["run", "--no-check", "-"], { cwd: project, env, input: `println("ran from a pipe");\n` });
    expect(piped.stdout).toBe("ran from a pipe\n");
    expect(piped.code).toBe(0);
  });
});

describe.concurrent("a relative HOME, TACIT_HOME and XDG_CONFIG_HOME unset, which would put tacit's home inside the project", () => {
  it("HOME=proj: refused (exit 2) before anything runs, and no home is made in the working directory", async () => {
    const cwd = path.join(dir, "relative-home-parent");
    mkdirSync(path.join(cwd, "proj"), { recursive: true });
    writeFileSync(path.join(cwd, "s.ts"), `println("ran");\n`);
    const r = await runCli(["run", "--no-check", "s.ts"], { cwd, env: { ...env, TACIT_HOME: "", XDG_CONFIG_HOME: "", HOME: "proj" } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`HOME is a relative path ("proj")`);
    expect(r.stderr).toContain("or set TACIT_HOME to an absolute path for tacit's home");
    expect(existsSync(path.join(cwd, "proj", ".config"))).toBe(false);
  });

  it("TACIT_HOME=~/.tacit (as an MCP client's settings pass it, unexpanded): the fix it names is the home's .tacit, not one in the working directory", async () => {
    const cwd = path.join(dir, "tilde-home");
    mkdirSync(cwd);
    const home = path.join(dir, "a-home");
    const r = await runCli(["run", "--no-check", "s.ts"], { cwd, env: { ...env, TACIT_HOME: "~/.tacit", HOME: home } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`set it to an absolute path (such as ${path.join(home, ".tacit")}: ~ is expanded by a shell, not by tacit)`);
    expect(r.stderr).not.toContain(path.join(cwd, "~"));
  });

  it("a relative HOME beside an absolute TACIT_HOME names no home, and the run goes on", async () => {
    const cwd = path.join(dir, "relative-home-tacit-home-set");
    mkdirSync(cwd);
    writeFileSync(path.join(cwd, "s.ts"), `println("ran");\n`);
    const r = await runCli(["run", "--no-check", "s.ts"], { cwd, env: { ...env, HOME: "proj" } });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("ran\n");
  });
});

describe("Node's inspector, opened by a SIGUSR1 before tacit's own handler was in place", () => {
  it("is refused before anything runs (exit 2); asked for with --inspect, it is not", async () => {
    // A preload that sends tacit's process SIGUSR1 as it starts, and waits for the inspector that
    // Node opens for it: what a process sending SIGUSR1 over and over at a starting tacit got.
    // --inspect-port=0 only sets the port it opens on (no clash with other tests), and asks for no inspector.
    const cwd = path.join(dir, "inspector");
    mkdirSync(cwd);
    const preload = path.join(cwd, "sigusr1.cjs");
    writeFileSync(
      preload,
      `process.kill(process.pid, "SIGUSR1");\n` +
        `const inspector = require("node:inspector");\n` +
        `const waiting = new Int32Array(new SharedArrayBuffer(4));\n` +
        `for (let i = 0; i < 2000 && inspector.url() === undefined; i++) Atomics.wait(waiting, 0, 0, 5);\n` +
        `if (inspector.url() === undefined) throw new Error("the inspector did not open");\n`,
    );
    writeFileSync(path.join(cwd, "s.ts"), `println("ran with the inspector open");\n`);
    const r = await runCli(["run", "--no-check", "s.ts"], { cwd, env: { ...env, NODE_OPTIONS: `--inspect-port=0 --require ${preload}` } });
    expect(r.stdout).not.toContain("ran with the inspector open");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("tacit: Node's inspector is open in this process, though neither its command line nor NODE_OPTIONS asked for it");
    expect(r.stderr).toContain("to debug tacit, start it with node --inspect");

    const asked = await runCli(["run", "--no-check", "s.ts"], { cwd, env: { ...env, NODE_OPTIONS: "--inspect=127.0.0.1:0" } });
    expect(asked.stdout).toBe("ran with the inspector open\n");
    expect(asked.code).toBe(0);
  });
});

describe.concurrent("commander's own -h given as a value flag's value", () => {
  it("--classified-paths -h (the value left out): refused, and .env stays classified", async () => {
    const canary = "CANARY-help-as-value-5e21";
    const project = path.join(dir, "help-as-value");
    mkdirSync(project);
    writeFileSync(path.join(project, ".env"), `TOKEN=${canary}\n`);
    writeFileSync(path.join(project, "read-env.ts"), `requestFileSystem(".", (fs) => { println(fs.access(".env").read()); });\n`);
    const r = await runCli(["run", "--no-check", "--classified-paths", "-h", "read-env.ts"], { cwd: project, env });
    expect(r.stdout + r.stderr).not.toContain(canary);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--classified-paths takes a value, but the word after it is the flag -h: was the value left out?");
  });
});

describe.concurrent("the refusal of a script that leads to a classified file whose name holds terminal controls", () => {
  it("shows the name as escapes: the terminal is not retitled, and no line of the refusal reads as tacit's own", async () => {
    const project = path.join(dir, "controls-in-name");
    mkdirSync(project);
    const secret = ".env.\u001b]0;RETITLED\u0007\ntacit: warning: forged by the name";
    writeFileSync(path.join(project, secret), "X\n");
    symlinkSync(secret, path.join(project, "run.ts"));
    const r = await runCli(["run", "run.ts"], { cwd: project, env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`which leads to ${path.join(project, ".env.\\u001b]0;RETITLED\\u0007\\u000atacit: warning: forged by the name")}`);
    expect(r.stderr).not.toContain("\u001b");
    expect(r.stderr.split("\n").filter((line) => line.startsWith("tacit: warning: forged"))).toEqual([]);
  });
});
