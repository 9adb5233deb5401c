// The secure output is refused when a directory on its way was replaced by a link since the run
// began, and tacit says on stderr where the link leads now. That path is whatever the link's
// maker chose (a command the script runs, with the person's authority): a directory named
// "\x1b]52;c;…\x07\ntacit: warning: …" reached the person's terminal as it was, which set their
// clipboard (OSC 52) and started a line that read as tacit's own. It is now shown as escapes.

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const FORGED = "tacit: warning: the secure output is fine";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("the secure output's refusal on stderr", () => {
  it("shows where a swapped directory now leads as escapes: no terminal control, no line of tacit's own", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-sink-refusal-text-");
    cleanups.push(cleanup);
    const work = path.join(dir, "work");
    const sinkParent = path.join(dir, "sd");
    mkdirSync(work);
    mkdirSync(path.join(sinkParent, "sinkdir"), { recursive: true });
    const evil = path.join(work, `\x1b]52;c;cm0gLXJmIH4=\x07\n${FORGED}`);
    // After the run began (the sink's directory is found then), its parent is moved away and a
    // link to a directory with that name is put in its place; then a classified value is printed.
    writeFileSync(
      path.join(work, "swap.ts"),
      `requestExecPermission(["mkdir", "mv", "ln"], (p) => {
  p.exec("mkdir", ["-p", ${JSON.stringify(path.join(evil, "sinkdir"))}]);
  p.exec("mv", [${JSON.stringify(sinkParent)}, ${JSON.stringify(`${sinkParent}.old`)}]);
  p.exec("ln", ["-s", ${JSON.stringify(evil)}, ${JSON.stringify(sinkParent)}]);
});
println("value:", classify("s3cret"));
`,
    );
    const sink = path.join(sinkParent, "sinkdir", "s.log");
    const run = await runCli(["run", "--no-check", "--command-permissions", "mkdir,mv,ln", "--secure-output", sink, "swap.ts"], { cwd: work, env });

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("value: Classified(***)\n");
    // The refusal was given, and names the link's target as escapes.
    expect(run.stderr).toContain("is no longer where tacit first found its directory");
    expect(run.stderr).toContain(`\\u001b]52;c;cm0gLXJmIH4=\\u0007\\u000a${FORGED}`);
    expect(run.stderr).not.toMatch(/[\x1b\x07]/);
    expect(run.stderr.split("\n").filter((line) => line.startsWith(FORGED))).toEqual([]);
    // Nothing was written where the link leads.
    expect(existsSync(path.join(evil, "sinkdir", "s.log"))).toBe(false);
  });
});
