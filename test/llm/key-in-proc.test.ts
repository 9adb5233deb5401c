// The LLM key is not left where Linux shows it to every process of the user: tacit's own
// /proc/<pid>/environ and cmdline (blanked once read, runner/hidden-key.ts), nor the
// environment of any process tacit starts (the type checker inherited it). Commands get a
// /proc of their own where the host allows; where it does not, a permitted `grep -a -o` read
// part of the key from tacit's environ, which no masking of whole keys recognises.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, expect, it } from "vitest";
import { connectServe, tacitBin, tempDir } from "../helpers.js";
import { commandLineOf, descendantsOf } from "../processes.js";

const ENV_KEY = "sk-env-canary-4f1d8e2a9b7c";
const FLAG_KEY = "sk-flag-canary-7a3e9c1b5d2f";
const LLM_FLAGS = ["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m"];

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** What /proc shows of `pid` and every process below it, environment and command line. */
function shownByProc(pid: number): string {
  return [pid, ...descendantsOf(pid)]
    .map((p) => {
      let environ = "";
      try {
        environ = readFileSync(`/proc/${p}/environ`, "latin1");
      } catch {
        // Gone meanwhile.
      }
      return `${p}: ${environ}\n${commandLineOf(p)}`;
    })
    .join("\n");
}

/** Polls until `ready` holds for `pid`'s descendants (up to 20 s). */
async function until(pid: number, ready: (commandLines: string[]) => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (ready(descendantsOf(pid).map(commandLineOf))) return;
    await sleep(50);
  }
  throw new Error("tacit did not get that far");
}

it.runIf(process.platform === "linux")("tacit run: the key given in the environment and as a flag is not in /proc while a command runs", async () => {
  const { dir, cleanup } = tempDir("tacit-key-proc-");
  cleanups.push(cleanup);
  const script = path.join(dir, "wait.ts");
  // The command runs until the test has read /proc, then the test ends it: no fixed wait either way.
  writeFileSync(script, 'requestExecPermission(["sleep"], (p) => p.exec("sleep", ["60"]));\nprintln("slept");\n');
  for (const [flags, keys] of [
    [LLM_FLAGS, [ENV_KEY]],
    [[...LLM_FLAGS, "--llm-api-key", FLAG_KEY], [ENV_KEY, FLAG_KEY]],
  ] as const) {
    const child = spawn(process.execPath, [tacitBin, "run", "--command-permissions", "sleep", ...flags, script], {
      cwd: dir,
      env: { ...process.env, TACIT_LLM_API_KEY: ENV_KEY },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise((resolve) => child.on("close", resolve));
    const isSleep = (line: string) => line.split("\0").some((word) => word.endsWith("/sleep"));
    await until(child.pid!, (lines) => lines.some(isSleep));
    const shown = shownByProc(child.pid!);
    for (const pid of descendantsOf(child.pid!).filter((p) => isSleep(commandLineOf(p)))) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone already: a wrapper's command line names the command too, and the command ends with it.
      }
    }
    await closed;
    expect(stdout, stderr).toBe("slept\n");
    // tacit was there, with its sandbox: what was read is the real thing.
    expect(shown).toContain("bootstrap.js");
    expect(shown).toContain("TACIT_LLM_API_KEY=*");
    for (const key of keys) expect(shown).not.toContain(key.slice(0, 12));
  }
});

it.runIf(process.platform === "linux")("tacit serve: the key is in no /proc environ of the server or of the type checker it keeps", async () => {
  const { dir, cleanup } = tempDir("tacit-key-proc-serve-");
  cleanups.push(cleanup);
  const client = await connectServe(LLM_FLAGS, dir, { env: { TACIT_LLM_API_KEY: ENV_KEY } });
  cleanups.push(() => void client.close());
  // A call that is type-checked starts the checker, which the server keeps.
  const result = await client.callTool({ name: "execute_typescript", arguments: { code: "const n: number = 1;\nprintln(n);" } });
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  const pid = (client.transport as StdioClientTransport).pid!;
  await until(pid, (lines) => lines.some((line) => line.includes("/lib/tsc")));
  const shown = shownByProc(pid);
  expect(shown).toContain("TACIT_LLM_API_KEY=*");
  expect(shown).not.toContain(ENV_KEY.slice(0, 12));
});
