// The secure output receives classified plaintext; the audit log must never hold any. A security
// review named one file as both (`--audit-log F --secure-output F`): the script ran, its canary went
// into F in plaintext, and none of the run's events did. And a run given an earlier run's audit log
// as --secure-output appended the canary to that log, exit 0, with no word. Both are refused before
// the script runs (exit 2), saying why and what to do.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { auditedWork, verifyJson } from "./fixtures.js";

const CANARY = "CANARY-3b71c0de-plaintext-in-the-audit-log";

/** Prints a classified canary (plaintext: the secure output only) and leaves a mark that it ran. */
const SCRIPT = `
requestFileSystem(".", (fs) => {
  fs.access("ran.txt").write("ran");
  println("secret:", fs.readClassified(".env"));
});
`;

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

function setUp() {
  const ctx = auditedWork();
  cleanup = ctx.cleanup;
  writeFileSync(path.join(ctx.work, ".env"), `TOKEN=${CANARY}\n`);
  writeFileSync(path.join(ctx.work, "secret.ts"), SCRIPT);
  return ctx;
}

it("--audit-log and --secure-output naming one file are refused before the script runs; no plaintext reaches the file", async () => {
  const ctx = setUp();
  const run = await runCli(["run", "--audit-log", ctx.log, "--secure-output", ctx.log, "secret.ts"], { cwd: ctx.work, env: ctx.env });
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toContain(`--secure-output and --audit-log name the same file (${ctx.log})`);
  expect(run.stderr).toContain("Give each its own file");
  expect(existsSync(path.join(ctx.work, "ran.txt"))).toBe(false);
  // The bad thing: the canary in the file (made by the log, then written by the secure output); now neither opens it.
  expect(existsSync(ctx.log)).toBe(false);
});

it("an earlier run's audit log given as --secure-output is refused; the log keeps no plaintext and still verifies", async () => {
  const ctx = setUp();
  const logged = await runCli(["run", "--audit-log", ctx.log, "script.ts"], { cwd: ctx.work, env: ctx.env });
  expect(logged.code, logged.stderr).toBe(0);
  const before = readFileSync(ctx.log, "utf8");

  const run = await runCli(["run", "--secure-output", ctx.log, "secret.ts"], { cwd: ctx.work, env: ctx.env });
  expect(run.code, run.stderr).toBe(2);
  expect(run.stderr).toContain(`the secure output ${ctx.log} is a tacit audit log`);
  expect(run.stderr).toContain("Give --secure-output (config libraryConfig.secureOutput) a file of its own");
  expect(existsSync(path.join(ctx.work, "ran.txt"))).toBe(false);
  // The bad thing: the canary appended to the log.
  expect(readFileSync(ctx.log, "utf8")).toBe(before);
  const { result } = await verifyJson(ctx.log, ctx.env);
  expect(result.code, result.stdout).toBe(0);

  // The same script with a secure output of its own runs, and its plaintext goes there: what was refused above is the file.
  const sink = path.join(ctx.dir, "secure.txt");
  const allowed = await runCli(["run", "--secure-output", sink, "secret.ts"], { cwd: ctx.work, env: ctx.env });
  expect(allowed.code, allowed.stderr).toBe(0);
  expect(readFileSync(sink, "utf8")).toContain(CANARY);
});
