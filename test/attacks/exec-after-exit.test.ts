// A command may not outlive its evaluation's time limit. The stub waits for each reply, so a
// command runs while the script is blocked, and the clock kills the sandbox (and the command
// with it) at the limit. Code that has the raw channel need not wait: a security review wrote
// an Exec request (timeoutMs: ten minutes) straight to the protocol channel and ended the Deno
// process at once. The sandbox then counted as exited, not killed, so the host stopped the
// clock and waited for the request in progress without a bound: the command ran on past the
// limit, and tacit (its run, or a serve call) hung until the command ended.

import { existsSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defaultConfig } from "../../runner/config.js";
import { evaluate } from "../../runner/evaluate.js";
import { killLive, leftAlive, livePrograms, uniqueSleep } from "../exec/fixtures.js";
import { tempDir } from "../helpers.js";
import { lit } from "./fixtures.js";

it("a command requested on the raw channel by a sandbox that then exits is killed at the time limit, and the evaluation ends", async () => {
  const sleep = uniqueSleep(); // about 31 s: past the limit and the test's bound below
  const { dir, cleanup } = tempDir("tacit-exec-after-exit-");
  const marker = path.join(dir, "started");
  const config = {
    ...defaultConfig,
    typeCheck: false,
    executionTimeoutMs: 2000,
    library: { ...defaultConfig.library, commandPermissions: ["sh"] },
  };
  const code = `
const encoder = new TextEncoder();
const send = (frame: unknown) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(frame) + "\\n"));
send({ type: "request", id: 1, action: { kind: "ExecOpenScope", commands: ["sh"] } });
const buffer = new Uint8Array(65536);
let text = "";
while (!text.includes("\\n")) {
  const n = Deno.stdin.readSync(buffer);
  if (n === null) break;
  text += new TextDecoder().decode(buffer.subarray(0, n));
}
const scope = JSON.parse(text.slice(0, text.indexOf("\\n"))).value.scope;
send({ type: "request", id: 2, action: { kind: "Exec", scope, command: "sh", args: ["-c", ${lit(`touch ${marker}; exec sleep ${sleep}`)}], cwd: null, timeoutMs: 600000, input: null } });
Deno.exit(0);
`;
  const started = Date.now();
  try {
    const ended = await Promise.race([
      evaluate({
        code,
        displayName: "script.ts",
        config,
        input: { kind: "unavailable", reason: "no input in this test" },
        unsafeSkipValidation: true,
        unsafeKeepRuntime: true,
      }).then((result) => ({ result })),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 15_000)),
    ]);
    // The bad things: the evaluation waits for the command past its limit, and the command runs on.
    expect(ended, "the evaluation was still waiting for the command 15 s into a 2 s limit").not.toBeNull();
    expect(Date.now() - started).toBeLessThan(2000 + 8000);
    expect(existsSync(marker), "the command started").toBe(true);
    expect(await leftAlive(`sleep ${sleep}`)).toEqual([]);
  } finally {
    if (livePrograms(`sleep ${sleep}`).length > 0) killLive(`sleep ${sleep}`);
    cleanup();
  }
}, 60_000);
