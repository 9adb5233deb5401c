// No heap snapshot of tacit, whatever NODE_OPTIONS asks: one is all of the host's memory (the LLM
// key, classified plaintext), and Node writes it into the working directory, the default allowed
// root, where the next script reads it. --heapsnapshot-signal had Node write one on a signal any
// process of the user may send; --heapsnapshot-near-heap-limit, which cannot be turned off once
// Node runs, is refused. Through the real CLI, with the signal sent as a script holds a secret.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childEnv, runCli, tacitBin, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-review-h166-heap-");
afterAll(cleanup);

const CANARY = "CANARY-heap-snapshot-3b7d";

describe.concurrent("a heap snapshot that NODE_OPTIONS asks for", () => {
  it("--heapsnapshot-signal=SIGUSR2 (spelled with _ too): the signal writes no snapshot into the working directory", async () => {
    const project = path.join(dir, "on-signal");
    mkdirSync(project);
    writeFileSync(path.join(project, ".env"), `${CANARY}\n`);
    // Holds the secret's plaintext in the host, says so, and runs until it is stopped.
    writeFileSync(path.join(project, "hold.ts"), `const held = requestFileSystem(".", (fs) => fs.readClassified(".env"));\nprintln("holding " + String(held));\nwhile (true) {}\n`);
    const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--exec-timeout-ms", "60000", "hold.ts"], {
      cwd: project,
      env: childEnv({ ...env, NODE_OPTIONS: "--heapsnapshot_signal=SIGUSR2" }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    const holding = new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("holding")) resolve();
      });
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, "exit");
    // A run that ends before it holds the secret fails here, with what it said, rather than waiting.
    await Promise.race([holding, exited.then(() => expect.fail(`tacit ended before the script held the secret: ${stderr}`))]);
    // Signals of different numbers are dispatched in the order they arrive: SIGUSR2's handling is done before SIGTERM ends tacit.
    child.kill("SIGUSR2");
    child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(143);
    expect(stdout).not.toContain(CANARY);
    expect(readdirSync(project).filter((name) => name.endsWith(".heapsnapshot"))).toEqual([]);
  });

  it("--heapsnapshot-near-heap-limit: refused (exit 2) before anything runs, saying to run without it", async () => {
    const project = path.join(dir, "near-limit");
    mkdirSync(project);
    writeFileSync(path.join(project, "s.ts"), `println("ran");\n`);
    const r = await runCli(["run", "--no-check", "s.ts"], { cwd: project, env: { ...env, NODE_OPTIONS: "--heapsnapshot-near-heap-limit=1" } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("tacit: NODE_OPTIONS (or node's command line) holds --heapsnapshot-near-heap-limit");
    expect(r.stderr).toContain("Run tacit without it");
  });
});
