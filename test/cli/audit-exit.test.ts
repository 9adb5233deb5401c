// An audit log tacit cannot write makes it exit 2, which the exit-code table gives to usage and
// config errors and to output tacit could not write: the log is output of tacit's own. Shown
// before: a log that failed while the script ran (another process wrote to it) ended tacit run
// with the log's message only, the script's result lost, and --json printed no object at all.
// Now the message says why tacit exits 2, and the run's result is still printed, with exit 2.

import { appendFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childEnv, runCli, tacitBin, tempDirWithHome } from "../helpers.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function world(): { work: string; dir: string; env: Record<string, string> } {
  const { dir, env, cleanup } = tempDirWithHome("tacit-audit-exit-");
  cleanups.push(cleanup);
  const work = path.join(dir, "work");
  mkdirSync(work);
  return { work, dir, env };
}

/**
 * Prints, writes started.txt (an effect: the log's lines are in the file by then), waits for its
 * input, then writes a file: the write needs the audit log.
 */
const SCRIPT =
  'println("before");\nrequestFileSystem(".", (fs) => fs.access("started.txt").write("1"));\nconst got = readInput();\n' +
  'requestFileSystem(".", (fs) => fs.access("out.txt").write(got));\nprintln("written");\n';

const EXIT_2_SAID = "tacit exits 2: it could not write its audit log";
/** What the script's caller is told, without the host's internals (the log's path and message are the operator's). */
const SCRIPT_ENDED_SAID = "tacit could not write its audit log (every action is logged before it is carried out), so it ended the script: ";

/** Runs SCRIPT with --audit-log, appends a line of another process's to the log once it is open, then gives the script its input. */
function runWhileLogIsWrittenUnder(w: ReturnType<typeof world>, json: boolean): Promise<{ code: number | null; stdout: string; stderr: string; log: string }> {
  const log = path.join(w.dir, "audit.jsonl");
  writeFileSync(path.join(w.work, "script.ts"), SCRIPT);
  const args = ["run", "--no-check", ...(json ? ["--json"] : []), "--audit-log", log, "script.ts"];
  const child = spawn(process.execPath, [tacitBin, ...args], { cwd: w.work, env: childEnv(w.env), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  return (async () => {
    // Once the script runs: appended as soon as the log existed, the line was sometimes there when
    // tacit read the new log's tail on opening it (CI, on a loaded machine), and tacit rightly
    // refused to start (exit 2, no --json object): not the case this test is about.
    const started = path.join(w.work, "started.txt");
    while (!existsSync(started) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
    appendFileSync(log, '{"written by":"another process"}\n');
    child.stdin.end("data");
    return { code: await closed, stdout, stderr, log };
  })();
}

describe("an audit log tacit cannot write: exit 2, and the message says why", () => {
  it("one that cannot be opened (a directory): exit 2 before the script runs; nothing is written", async () => {
    const w = world();
    const log = path.join(w.dir, "a-directory");
    mkdirSync(log);
    writeFileSync(path.join(w.work, "script.ts"), 'requestFileSystem(".", (fs) => fs.access("out.txt").write("ran"));\n');
    const { code, stdout, stderr } = await runCli(["run", "--no-check", "--audit-log", log, "script.ts"], { cwd: w.work, env: w.env });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(new RegExp(`^tacit: cannot open the audit log ${log.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: .*\\. ${EXIT_2_SAID}\\n$`));
    expect(existsSync(path.join(w.work, "out.txt"))).toBe(false);
  });

  it("one whose message ends a sentence (a log deleted after this machine signed it): one full stop before why tacit exits 2", async () => {
    const w = world();
    const log = path.join(w.dir, "audit.jsonl");
    writeFileSync(path.join(w.work, "script.ts"), 'println("ran");\n');
    const first = await runCli(["run", "--no-check", "--audit-log", log, "script.ts"], { cwd: w.work, env: w.env });
    expect(first.code, first.stderr).toBe(0);
    rmSync(log);
    const { code, stdout, stderr } = await runCli(["run", "--no-check", "--audit-log", log, "script.ts"], { cwd: w.work, env: w.env });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("there is no such file any more: it was deleted or moved away");
    expect(stderr).toMatch(new RegExp(`[^.]\\. ${EXIT_2_SAID}\\n$`));
  });

  it("one written under tacit while the script runs: the write is refused, the output so far is shown, exit 2 with why", async () => {
    const w = world();
    const { code, stdout, stderr } = await runWhileLogIsWrittenUnder(w, false);
    expect(code).toBe(2);
    expect(stdout).toBe("before\n");
    expect(stderr).toContain("another process wrote to it");
    expect(stderr.trimEnd().split("\n").at(-1)).toMatch(new RegExp(`^tacit: the audit log .* grew by \\d+ bytes .*\\. ${EXIT_2_SAID}$`));
    // The script's error, before tacit's own line: what happened and to tell the operator; no class name of the
    // host, no path outside the script's scope (it was "protocol violation: the host failed to answer a request: AuditLogError: the audit log /…").
    const scriptError = stderr.trimEnd().split("\n").slice(0, -1).join("\n");
    expect(scriptError).toContain(SCRIPT_ENDED_SAID);
    expect(scriptError).not.toMatch(/AuditLogError|protocol violation|the host failed/);
    expect(scriptError).not.toContain(w.dir);
    expect(existsSync(path.join(w.work, "out.txt"))).toBe(false);
  });

  it("--json: the object is still printed, with exitCode 2 and the log's failure in its error", async () => {
    const w = world();
    const { code, stdout } = await runWhileLogIsWrittenUnder(w, true);
    expect(code).toBe(2);
    const result = JSON.parse(stdout) as { stdout: string; error: string; exitCode: number };
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe("before\n");
    expect(result.error).toContain(EXIT_2_SAID);
    expect(result.error.startsWith(SCRIPT_ENDED_SAID)).toBe(true);
    expect(result.error).not.toMatch(/AuditLogError|protocol violation|the host failed/);
    expect(existsSync(path.join(w.work, "out.txt"))).toBe(false);
  });
});
