// A script that may run the programs --strict leaves it ran tacit itself: on PATH as npm installs
// it (a link to bin/tacit.js, a node script the denylist did not see as node), a nested
// `tacit run --yes -` takes whatever flags and code the script hands it, without the policy. A
// security review deleted a file that an always-ask rule guards, with no one asked. tacit is now
// refused under --strict by its own name and by a link of another name that leads to it.

import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { runCli, tacitBin, tempDirWithHome } from "../helpers.js";

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

/** A nested tacit, run as `command`, told to delete important.txt with --yes. */
const nestedDelete = (command: string) => `
requestExecPermission([${JSON.stringify(command)}], (p) => {
  const nested = 'requestFileSystem(".", (fs) => { fs.access("important.txt").delete(); println("deleted by the nested tacit"); });';
  const run = p.exec(${JSON.stringify(command)}, ["run", "--yes", "--no-check", "-"], { input: nested });
  println(run.exitCode, run.stdout);
});
`;

for (const command of ["tacit", "helper"]) {
  it(`--strict refuses tacit run as "${command}": the nested tacit cannot do what an always-ask rule guards, unasked`, async () => {
    const ctx = tempDirWithHome("tacit-nested-");
    cleanup = ctx.cleanup;
    const work = path.join(ctx.dir, "work");
    const bin = path.join(ctx.dir, "bin");
    mkdirSync(work);
    mkdirSync(bin);
    // As npm installs it: a link on PATH to the package's bin/tacit.js (under another name too).
    symlinkSync(tacitBin, path.join(bin, command));
    writeFileSync(path.join(work, "important.txt"), "keep\n");
    writeFileSync(path.join(work, "script.ts"), nestedDelete(command));
    writeFileSync(
      path.join(work, "tacit.json"),
      JSON.stringify({ libraryConfig: { strictMode: true }, policy: { rules: [{ action: "fs.delete", tier: "always-ask" }] } }),
    );
    const run = await runCli(["run", "--config", "tacit.json", "script.ts"], { cwd: work, env: { ...ctx.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` } });
    // The bad thing: the file the rule guards, deleted with no one asked.
    expect(existsSync(path.join(work, "important.txt"))).toBe(true);
    expect(run.stdout).not.toContain("deleted by the nested tacit");
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stderr).toContain(`"${command}" is refused under --strict`);
    expect(run.stderr).toContain("it is tacit itself (tacit), and a nested tacit runs the code its arguments or input give it");
  }, 60_000);
}
