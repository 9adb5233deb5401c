// `tacit run s.ts < .env`: standard input redirected from a classified file. readInput() gave the
// script the file's plaintext, which the policy keeps from every script (readClassified is the
// way to use it). Standard input is now judged where its descriptor leads, as a script file is
// (cli/script-origin.ts), when the script first asks for it: a classified file, or one the file
// tools refuse every script, is refused with a SecurityError saying what to do instead. Through
// the real CLI, with standard input a real descriptor of the file, as a shell's `<` gives it.

import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childEnv, type CliResult, tacitBin, tempDirWithHome } from "../helpers.js";

const CANARY = "canary-stdin-7f3e91";
const { dir, env, cleanup } = tempDirWithHome("tacit-input-classified-");
afterAll(cleanup);

writeFileSync(path.join(dir, ".env"), `API_TOKEN=${CANARY}\n`);
mkdirSync(path.join(dir, "secrets"));
writeFileSync(path.join(dir, "secrets", "token"), `${CANARY}\n`);
writeFileSync(path.join(dir, "data.csv"), "a,b\n1,2\n");
symlinkSync(".env", path.join(dir, "notes.txt"));
writeFileSync(path.join(dir, "reads.ts"), `println("got: " + readInput());\n`);
writeFileSync(path.join(dir, "catches.ts"), `try { println(readInput()); } catch (e) { println("caught " + (e as Error).name); }\nprintln("went on");\n`);
writeFileSync(path.join(dir, "ignores.ts"), `println("no input asked for");\n`);

/** `tacit run --no-check <script> …extra` with standard input the file `input` opened for reading. */
function runWithInputFile(script: string, input: string, extra: string[] = []): Promise<CliResult> {
  const fd = openSync(path.join(dir, input), "r");
  try {
    const child = spawn(process.execPath, [tacitBin, "run", "--no-check", ...extra, script], { cwd: dir, env: childEnv(env), stdio: [fd, "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on("data", (c: Buffer) => out.push(c));
    child.stderr!.on("data", (c: Buffer) => err.push(c));
    return new Promise((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }));
    });
  } finally {
    closeSync(fd);
  }
}

function expectNoCanary(r: CliResult): void {
  expect(r.stdout).not.toContain(CANARY);
  expect(r.stderr).not.toContain(CANARY);
}

describe.concurrent("readInput() and a classified file on standard input", () => {
  it("< .env: refused with a SecurityError that says what to do instead; the plaintext reaches nothing", async () => {
    const r = await runWithInputFile("reads.ts", ".env");
    expectNoCanary(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`SecurityError: readInput(): standard input is a classified file (/proc/self/fd/0, which leads to ${path.join(dir, ".env")})`);
    expect(r.stderr).toContain("readClassified()");
    expect(r.stdout).toBe("");
  });

  it("< a link to .env: judged where it leads", async () => {
    const r = await runWithInputFile("reads.ts", "notes.txt");
    expectNoCanary(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`which leads to ${path.join(dir, ".env")}`);
  });

  it("< a file the operator's --classified-paths name", async () => {
    const r = await runWithInputFile("reads.ts", "secrets/token", ["--classified-paths", "secrets"]);
    expectNoCanary(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("SecurityError: readInput(): standard input is a classified file");
  });

  it("< a file in tacit's home, which scripts are refused", async () => {
    const home = env.TACIT_HOME!;
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, "kept.txt"), `${CANARY}\n`);
    const r = await runWithInputFile("reads.ts", path.relative(dir, path.join(home, "kept.txt")));
    expectNoCanary(r);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("SecurityError: readInput(): standard input is tacit's home");
  });

  it("the script can catch the refusal and go on", async () => {
    const r = await runWithInputFile("catches.ts", ".env");
    expectNoCanary(r);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("caught SecurityError\nwent on\n");
  });

  it("a script that never asks for its input runs as before", async () => {
    const r = await runWithInputFile("ignores.ts", ".env");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("no input asked for\n");
  });

  it("an ordinary file on standard input is read as before", async () => {
    const r = await runWithInputFile("reads.ts", "data.csv");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("got: a,b\n1,2\n\n");
  });
});
