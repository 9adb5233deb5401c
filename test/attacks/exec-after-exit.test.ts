// A command may not outlive its evaluation's time limit. The stub waits for each reply, so a
// command runs while the script is blocked, and the clock kills the sandbox (and the command
// with it) at the limit. Code that has the raw channel need not wait: a security review wrote
// an Exec request (timeoutMs: ten minutes) straight to the protocol channel and ended the Deno
// process at once. The sandbox then counted as exited, not killed, so the host stopped the
// clock and waited for the request in progress without a bound: the command ran on past the
// limit, and tacit (its run, or a serve call) hung until the command ended.

import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it, onTestFinished } from "vitest";
import { defaultConfig } from "../../runner/config.js";
import { killLive, leftAlive, livePrograms } from "../exec/fixtures.js";
import { runBypassed, tempDir } from "../helpers.js";
import { lit } from "./fixtures.js";

it("a command requested on the raw channel by a sandbox that then exits is killed at the time limit, and the evaluation ends", async () => {
  const { dir, cleanup } = tempDir("tacit-exec-after-exit-");
  const marker = path.join(dir, "started");
  // The command ends only once this file exists, and the test makes it only after the evaluation
  // has ended: an evaluation that waits for the command cannot end (the vitest timeout fails the
  // test). Ordering, not milliseconds. Its path, unique, finds the command among live processes.
  const release = path.join(dir, "release");
  onTestFinished(() => {
    if (livePrograms(release).length > 0) killLive(release);
  });
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
send({ type: "request", id: 2, action: { kind: "Exec", scope, command: "sh", args: ["-c", ${lit(`touch ${marker}; until [ -e ${release} ]; do sleep 0.1; done`)}], cwd: null, timeoutMs: 600000, input: null } });
Deno.exit(0);
`;
  try {
    // The bad things: the evaluation waits for the command past its limit, and the command runs on.
    await runBypassed(code, { config, keepRuntime: true });
    expect(existsSync(release), "the evaluation ended before the command could").toBe(false);
    expect(existsSync(marker), "the command started").toBe(true);
    expect(await leftAlive(release)).toEqual([]);
  } finally {
    writeFileSync(release, "");
    cleanup();
  }
}, 60_000);
