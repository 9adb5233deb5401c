// tacit run stopped by SIGTERM or SIGINT said "cancelled: the evaluation was cancelled by its
// caller", as if an MCP client had cancelled it, and its --json said exit code 1 while tacit
// exited 143 or 130; tacit repl said "cancelled: the session ended", and tacit serve logged its
// sessions as ended because "the server stopped". Each now names the signal, the same way.

import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { childEnv, connectServe, createSession, tacitBin, tempDirWithHome } from "../helpers.js";
import { commandRunsBelow, loggedEvents } from "../audit/ended-steps.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A script that runs a command until it is stopped: once the command runs, the script is under way (its output is not streamed with --json or by the repl). */
const ENDLESS = 'requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["93"]));';

/** Runs `tacit …args` with `input`, sends `signal` once the script's command runs, and collects everything. */
async function stoppedWhileRunning(args: string[], input: string, signal: NodeJS.Signals): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { dir, env, cleanup } = tempDirWithHome("tacit-stop-named-");
  cleanups.push(cleanup);
  const child = spawn(process.execPath, [tacitBin, ...args, "--no-check", "--command-permissions", "sleep"], { cwd: dir, env: childEnv(env), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  // The repl's input stays open: it runs the snippet, not the end of its input.
  child.stdin.write(`${input}\n`);
  if (args[0] === "run") child.stdin.end();
  await commandRunsBelow(child.pid!, "sleep 93", () => child.exitCode !== null);
  child.kill(signal);
  const code = await closed;
  child.stdin.destroy();
  return { code, stdout, stderr };
}

describe("tacit stopped by a signal says which", () => {
  it("tacit run, SIGTERM: the script's error names the signal; exit 143", async () => {
    const { code, stderr } = await stoppedWhileRunning(["run", "-"], ENDLESS, "SIGTERM");
    expect(code).toBe(143);
    expect(stderr).toBe("cancelled: tacit was stopped by SIGTERM\n");
  });

  it("tacit run --json, SIGINT: the error names the signal, and exitCode is the 130 tacit exits with", async () => {
    const { code, stdout } = await stoppedWhileRunning(["run", "--json", "-"], ENDLESS, "SIGINT");
    expect(code).toBe(130);
    const result = JSON.parse(stdout) as { error: string; exitCode: number };
    expect(result.error).toBe("cancelled: tacit was stopped by SIGINT");
    expect(result.exitCode).toBe(130);
  });

  it("tacit repl, SIGTERM: the snippet under way is told the same; exit 143", async () => {
    const { code, stderr } = await stoppedWhileRunning(["repl"], ENDLESS, "SIGTERM");
    expect(code).toBe(143);
    expect(stderr).toContain("cancelled: tacit was stopped by SIGTERM\n");
    expect(stderr).not.toContain("the session ended");
  });

  it("tacit serve, SIGTERM: its log says it was stopped by SIGTERM, and each session ended for it (stderr and audit log); exit 143", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-stop-named-");
    cleanups.push(cleanup);
    const log = path.join(dir, "audit.jsonl");
    const work = path.join(dir, "work");
    mkdirSync(work);
    let stderr = "";
    const client = await connectServe(["--no-check", "--audit-log", log], work, { env, onStderr: (text) => (stderr += text) });
    const transport = client.transport as StdioClientTransport;
    const exited = new Promise<number | null>((resolve) => {
      const child = (transport as unknown as { _process: import("node:child_process").ChildProcess })._process;
      child.once("exit", (code) => resolve(code));
    });
    const session = await createSession(client);
    process.kill(transport.pid!, "SIGTERM");
    expect(await exited).toBe(143);
    await client.close();
    expect(stderr).toContain("tacit: stopped by SIGTERM: the calls under way are ended");
    expect(stderr).toContain(`tacit: session ${session} ended: the server was stopped by SIGTERM\n`);
    const ended = loggedEvents(log).filter((event) => event.type === "session-ended");
    expect(ended.map((event) => (event as { reason?: string }).reason)).toEqual(["the server was stopped by SIGTERM"]);
  });
});
