// The --record directory is refused when a directory on its way was replaced by a link since tacit
// made it, and tacit says on stderr where its path leads now: a name the link's maker (a command
// a script ran) chose. A directory named "\x1b]52;c;…\x07\ntacit: warning: …" reached the
// person's terminal as it was, which set their clipboard (OSC 52) and started a line that read as
// tacit's own. It is now shown as escapes.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const FORGED = "tacit: warning: everything was recorded";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("the --record directory's refusal on stderr", () => {
  it("shows where a swapped directory now leads as escapes: no terminal control, no line of tacit's own", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-record-refusal-text-");
    cleanups.push(cleanup);
    const work = path.join(dir, "work");
    const parent = path.join(dir, "rd");
    mkdirSync(work);
    mkdirSync(parent);
    const record = path.join(parent, "rec");
    const evil = path.join(work, `\x1b]52;c;cm0gLXJmIH4=\x07\n${FORGED}`);
    writeFileSync(path.join(work, "first.ts"), 'println("first");\n');
    // The record directory's parent moved away, a link to a directory with that name put in its place.
    writeFileSync(
      path.join(work, "swap.ts"),
      `requestExecPermission(["mkdir", "mv", "ln"], (p) => {
  p.exec("mkdir", ["-p", ${JSON.stringify(evil)}]);
  p.exec("mv", [${JSON.stringify(parent)}, ${JSON.stringify(`${parent}.old`)}]);
  p.exec("ln", ["-s", ${JSON.stringify(evil)}, ${JSON.stringify(parent)}]);
});
println("swapped");
`,
    );
    const first = await runCli(["run", "--no-check", "--record", record, "first.ts"], { cwd: work, env });
    expect(first.code, first.stderr).toBe(0);
    const run = await runCli(["run", "--no-check", "--record", record, "--command-permissions", "mkdir,mv,ln", "swap.ts"], { cwd: work, env });

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("swapped\n");
    expect(run.stderr).toContain("tacit: --record: the record directory");
    expect(run.stderr).toContain(`\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u000a${FORGED}`);
    expect(run.stderr).not.toMatch(/[\x1b\x07]/);
    expect(run.stderr.split("\n").filter((line) => line.startsWith(FORGED))).toEqual([]);
    expect(existsSync(path.join(evil, "rec"))).toBe(false);
  });
});
