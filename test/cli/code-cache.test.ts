// tacit's V8 code cache (cli/code-cache.ts) holds compiled code that V8 checks only against the
// source's length: whatever bytes a cache file holds run as tacit, with the user's authority. So
// a cache someone else could have written is not loaded, tacit never makes its cache writable by
// others, it never writes a cache through a link planted at its temporary file's name, and a
// cache older than its bundle file's last change (an edit that kept the length) is not taken. Each
// test runs a copy of this build installed in a temp project (installTacitIn), so the repository's
// own cache is not touched.

import { chmodSync, chownSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { childEnv, installTacitIn, runCli, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-code-cache-");
afterAll(cleanup);

let bin = "";
let runCache = "";

beforeAll(async () => {
  const installed = installTacitIn(dir);
  bin = path.join(installed, "bin", "tacit.js");
  runCache = path.join(installed, "dist", "bundle", ".v8-cache", "run");
  writeFileSync(path.join(dir, "hello.ts"), 'console.log("hello from the sandbox");\n');
});

const run = () => runCli(["run", "--no-check", "hello.ts"], { bin, cwd: dir, env });

/** A cache file whose compiled code has bytes changed, as one crafted by someone else would have. */
function tamper(file: string): void {
  const bytes = readFileSync(file);
  for (let i = 200; i < bytes.length; i += 13) bytes[i]! ^= 0x5a;
  writeFileSync(file, bytes);
}

describe("tacit's code cache", () => {
  it("0: a cache file others may write is not loaded (its changed bytes crashed tacit), and is replaced by one they may not", async () => {
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    const cache = path.join(runCache, "tacit.cjs.bin");
    expect(existsSync(cache)).toBe(true);
    tamper(cache);
    chmodSync(cache, 0o666);
    const r = await run();
    // Loaded, the changed cache ended tacit with a segmentation fault (null code, SIGSEGV).
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("hello from the sandbox\n");
    expect(statSync(cache).mode & 0o022).toBe(0);
  });

  it.runIf(process.geteuid?.() === 0)("0: a cache file owned by another user (not the bundle's owner) is not loaded", async () => {
    const seed = await run();
    expect(seed.code, seed.stderr).toBe(0);
    const cache = path.join(runCache, "tacit.cjs.bin");
    tamper(cache);
    chownSync(cache, 65534, 65534);
    chmodSync(cache, 0o644);
    const r = await run();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("hello from the sandbox\n");
    expect(statSync(cache).uid).toBe(0);
  });

  it("0: under a umask of 000, the cache directory and files tacit makes are not writable by others", async () => {
    rmSync(path.join(runCache, ".."), { recursive: true, force: true });
    const r = await runCli(['umask 000; exec "$0" "$@"', process.execPath, bin, "run", "--no-check", "hello.ts"], { node: "/bin/sh", bin: "-c", cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(runCache).mode & 0o022).toBe(0);
    expect(statSync(path.join(runCache, "tacit.cjs.bin")).mode & 0o022).toBe(0);
  });

  it("0: a link planted at the name of a cache's temporary file is not written through", async () => {
    const victim = path.join(dir, "precious.txt");
    writeFileSync(victim, "the user's own file\n");
    rmSync(path.join(runCache, "tacit.cjs.bin"), { force: true });
    // `exec` keeps the shell's pid, so $$ is the pid tacit names its temporary file with.
    const plant = 'ln -s "$1" "$2/tacit.cjs.bin.$$.tmp" && exec "$3" "$4" run --no-check hello.ts';
    const r = await runCli([plant, "sh", victim, runCache, process.execPath, bin], { node: "/bin/sh", bin: "-c", cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("the user's own file\n");
    expect(existsSync(path.join(runCache, "tacit.cjs.bin"))).toBe(true);
  });

  it("0: a bundle file changed in place after its cache was written runs as changed, not as cached", async () => {
    const installed = path.dirname(path.dirname(bin));
    const help = () => runCli(["--help"], { bin, cwd: dir, env });
    const before = await help();
    expect(before.stdout).toContain("validate, type-check and run a script");
    expect(existsSync(path.join(installed, "dist", "bundle", ".v8-cache", "other", "tacit.cjs.bin"))).toBe(true);
    // Same length: V8 checks a cache against the source's length alone.
    const main = path.join(installed, "dist", "bundle", "tacit.cjs");
    const source = readFileSync(main, "utf8");
    const patched = source.replace("validate, type-check and run a script", "VALIDATE, type-check and run a script");
    expect(patched.length).toBe(source.length);
    writeFileSync(main, patched);
    const after = await help();
    expect(after.code, after.stderr).toBe(0);
    // With the cache taken, --help still said "validate" (the functions compiled before the edit).
    expect(after.stdout).toContain("VALIDATE, type-check and run a script");
  });

  it("1: a bundle file changed while a run was under way does not get that run's cache of it", async () => {
    const bundle = path.join(path.dirname(path.dirname(bin)), "dist", "bundle");
    rmSync(runCache, { recursive: true, force: true });
    writeFileSync(path.join(dir, "wait.ts"), 'import { println, readInput } from "tacit";\nprintln("ready");\nconst line = readInput();\nthrow new Error("boom " + line.trim());\n');
    // The exit codes' table: a script that threw exits with 1.
    const table = readdirSync(bundle).find((name) => name.startsWith("stop-reason-") && name.endsWith(".cjs"))!;
    const tableFile = path.join(bundle, table);
    const source = readFileSync(tableFile, "utf8");
    expect(source).toContain("threw:1,");

    const child = spawn(process.execPath, [bin, "run", "--no-check", "wait.ts"], { cwd: dir, env: childEnv(env), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (stdout.includes("ready\n")) resolve();
      });
      child.on("error", reject);
      child.on("close", () => reject(new Error(`ended before it was ready: ${stdout}`)));
    });
    // Rebuilt meanwhile, to the same length (V8's only check): a script that threw now exits with 6.
    writeFileSync(tableFile, source.replace("threw:1,", "threw:6,"));
    const firstCode = await new Promise<number | null>((resolve) => {
      child.on("close", (code) => resolve(code));
      child.stdin.end("hi\n");
    });
    expect(firstCode).toBe(1);

    const r = await runCli(["run", "--no-check", "wait.ts"], { bin, cwd: dir, env, input: "hi\n" });
    // Given the cache the first run wrote, it exited with 1, the table as it was before the change.
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain("boom hi");
  });
});
