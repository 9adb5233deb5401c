// A confined command cannot pass itself off as its confinement's setup. The setup reported that it
// gave up on stderr ("tacit-confinement-failed: <reason>", exit 125), which the command writes to
// as well: a command that printed that line and exited 125 after doing its work was reported to
// the script as refused, "nothing was run", and to the audit log as not started; one that printed
// the roots-changed reason was run again, three times in all. The setup now reports on a channel
// of its own that it closes before the command starts.

import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it, type TestContext } from "vitest";
import { confinementDir, tacit } from "./fixtures.js";

const confinedDir = (ctx: TestContext): string => confinementDir(ctx, "tacit-forged-setup-");

const REASONS: Array<[string, string]> = [
  ["the roots-changed reason (which made tacit run it again)", "the allowed roots changed while it was set up"],
  ["a mount's failure", "could not mount a private /tmp"],
];

it.for(REASONS)("a command that prints %s as the setup would, and exits 125, ran once and is reported as run", async ([, reason], ctx) => {
  const dir = confinedDir(ctx);
  const log = path.join(dir, "audit.jsonl");
  writeFileSync(path.join(dir, "ran.txt"), "");
  const line = `tacit-confinement-failed: ${reason}`;
  const script = `
requestExecPermission(["sh"], (p) => {
  const r = p.exec("sh", ["-c", ${JSON.stringify(`echo ran >> ran.txt; echo '${line}' >&2; exit 125`)}]);
  println("exit", r.exitCode);
  println("stderr", r.stderr.trim());
});`;
  const result = await tacit(dir, script, ["--confine-commands", "--command-permissions", "sh", "--audit-log", log], { TACIT_HOME: path.join(dir, "home") });
  expect(result.stderr + result.stdout).not.toMatch(/refused, nothing was run|could not be set up|changed while it was set up, \d+ times/);
  expect(result.stdout).toBe(`exit 125\nstderr ${line}\n`);
  expect(readFileSync(path.join(dir, "ran.txt"), "utf8")).toBe("ran\n");
  const results = readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.includes('"type":"action-result"'))
    .map((l) => JSON.parse(l).event);
  // The command's result (the other actions, the scope's, have no commandProgress).
  const commands = results.filter((event: { commandProgress?: string }) => event.commandProgress !== undefined);
  expect(commands.map((event: { commandProgress?: string; ok: boolean }) => [event.commandProgress, event.ok])).toEqual([["exited", true]]);
});
