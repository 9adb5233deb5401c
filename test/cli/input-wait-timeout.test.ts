// In a pipeline or a container, a script's readInput() waits for its standard input to end, and
// a producer that never closes the pipe (one still running, `docker run -i`, an ssh session)
// holds it there until the time limit. The timeout said "the script ran longer than 1000 ms",
// as if the script had been busy. It now says it was waiting in readInput() for the pipe to end,
// and what to do when there is nothing to pipe. A script that was busy is told as before.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { childEnv, tacitBin, tempDirWithHome } from "../helpers.js";

const WAITING = "and when the limit came it was waiting in readInput() for its standard input to end";

/**
 * Runs `code` (with a 1 s limit), its standard input a pipe this test holds open until tacit ends,
 * or one that carries "data" and ends (`close`). Its directory is removed with the test
 * (`onTestFinished`, the test's own: the tests run concurrently).
 */
function run(code: string, close: boolean, onTestFinished: TestContext["onTestFinished"]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { dir, env, cleanup } = tempDirWithHome("tacit-input-wait-");
  onTestFinished(cleanup);
  writeFileSync(path.join(dir, "script.ts"), code);
  const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--exec-timeout-ms", "1000", "script.ts"], { cwd: dir, env: childEnv(env), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.on("error", () => undefined);
  if (close) child.stdin.end("data");
  return new Promise((resolve) =>
    child.on("close", (exitCode) => {
      child.stdin.destroy();
      resolve({ code: exitCode, stdout, stderr });
    }),
  );
}

// Concurrent: each run has a directory and home of its own, and the first only waits for its limit.
describe.concurrent("a time limit reached while readInput() waits for a pipe that stays open", () => {
  it("says the script was waiting for its standard input to end, and what to do; exit 124", async ({ onTestFinished }) => {
    const result = await run('println("started");\nconst input = readInput();\nprintln(input.length);\n', false, onTestFinished);
    expect(result.code).toBe(124);
    expect(result.stdout).toBe("started\n");
    expect(result.stderr).toContain("timed out: the script ran longer than 1000 ms, " + WAITING);
    expect(result.stderr).toContain("readInput() reads until whatever pipes into tacit closes the pipe, and it had not (run tacit with </dev/null when there is nothing to pipe)");
  }, 30_000);

  it("a script that was busy, its input read, is told as before", async ({ onTestFinished }) => {
    const result = await run("const input = readInput();\nwhile (input.length > 0) {}\n", true, onTestFinished);
    expect(result.code).toBe(124);
    expect(result.stderr).toContain("timed out: the script ran longer than 1000 ms, so it was killed.");
    expect(result.stderr).not.toContain("readInput");
  }, 30_000);
});
