// tacit killed outright (SIGKILL, the OOM killer, an MCP client's hard stop) runs no exit hook, so
// its type check's directory stays in the temporary directory. A later tacit that makes a check
// directory removes those left by tacits no longer running, after an hour untouched (and the input
// directories of the sandboxes they had just started), and nothing else: not a running tacit's, not
// a recent one's, not another name's, not what a link there leads to.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sandboxInput } from "../../runner/sandbox-input.js";
import { childEnv, runCli, slowToCheck, tacitBin, tempDir } from "../helpers.js";

const { dir, cleanup } = tempDir("tacit-left-dirs-");
afterAll(cleanup);

/** A pid no process has now: one that has just ended. */
function endedPid(): number {
  return spawnSync("true").pid!;
}

const TWO_HOURS_AGO = new Date(Date.now() - 2 * 60 * 60 * 1000);

/** Runs a checked script (never in the check cache: a fresh one each time) with `tmp` as its temporary directory. */
async function checkedRunIn(tmp: string): Promise<void> {
  const script = path.join(dir, `checked-${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(script, `const n: number = ${Date.now()};\nprintln(n > 0);\n`);
  const result = await runCli(["run", script], { cwd: dir, env: { TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" } });
  expect(result.stderr).toBe("");
  expect(result.stdout).toBe("true\n");
}

describe("check directories left by tacits killed outright", () => {
  it("are removed by the next checked run once their tacit is gone and an hour has passed; nothing else is", async () => {
    const tmp = mkdtempSync(path.join(dir, "tmp-"));
    const dead = endedPid();
    const made = (name: string, old: boolean): string => {
      const at = path.join(tmp, name);
      mkdirSync(at);
      writeFileSync(path.join(at, "script.ts"), "println(1);\n");
      if (old) utimesSync(at, TWO_HOURS_AGO, TWO_HOURS_AGO);
      return at;
    };
    const left = [made(`tacit-check-${dead}-AbCdEf`, true), made(`tacit-checker-${dead}-Gh12Ij`, true), made(`tacit-channel-${dead}-Kl34Mn`, true)];
    const kept = [
      made(`tacit-check-${dead}-Recent`, false), // its tacit gone, but not an hour ago
      made(`tacit-check-${process.pid}-LiveOn`, true), // a running process's
      made("tacit-check-NoPid1", true), // not a name with a pid
      made(`tacit-channel-${process.pid}-LiveOn`, true), // a running process's sandbox input
      made(`other-${dead}-AbCdEf`, true),
    ];
    // A link named as a left directory is not followed: what it leads to stays.
    const target = path.join(dir, "link-target");
    mkdirSync(target);
    writeFileSync(path.join(target, "canary"), "kept");
    const link = path.join(tmp, `tacit-check-${dead}-Linked`);
    symlinkSync(target, link);

    await checkedRunIn(tmp);

    for (const at of left) expect(existsSync(at), at).toBe(false);
    for (const at of [...kept, link]) expect(existsSync(at), at).toBe(true);
    expect(readFileSync(path.join(target, "canary"), "utf8")).toBe("kept");
    // This run's own directory went with its exit hooks.
    expect(readdirSync(tmp).filter((name) => !kept.concat(link).includes(path.join(tmp, name)))).toEqual([]);
  });

  it("a sandbox's input directory is named for the process that made it, so that a later run can tell it was left", () => {
    const tmp = mkdtempSync(path.join(dir, "tmp-"));
    // tmpdir() reads TMPDIR when called.
    const tmpBefore = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    const input = sandboxInput();
    try {
      expect(input.dir, "a socket pair, not the plain pipe").not.toBeNull();
      expect(readdirSync(tmp)).toEqual([path.basename(input.dir!)]);
      expect(path.basename(input.dir!)).toMatch(new RegExp(`^tacit-channel-${process.pid}-[A-Za-z0-9]{6}$`));
    } finally {
      input.close();
      if (tmpBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpBefore;
    }
  });

  it("a tacit run killed outright during its check leaves its directory, named for its pid; the next run removes it once it is old", async () => {
    const tmp = mkdtempSync(path.join(dir, "tmp-"));
    const slow = path.join(dir, "slow.ts");
    writeFileSync(slow, slowToCheck(10));
    const child = spawn(process.execPath, [tacitBin, "run", "--exec-timeout-ms", "600000", slow], {
      cwd: dir,
      env: childEnv({ TMPDIR: tmp, TACIT_TYPECHECK_CACHE: "off" }),
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    let checkDir: string | undefined;
    for (const until = Date.now() + 60_000; checkDir === undefined && Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 20))) {
      checkDir = readdirSync(tmp).find((name) => name.startsWith("tacit-check-"));
    }
    child.kill("SIGKILL");
    await exited;
    expect(checkDir, "the run's check directory appeared").toMatch(new RegExp(`^tacit-check-${child.pid}-[A-Za-z0-9]{6}$`));
    const at = path.join(tmp, checkDir!);
    expect(existsSync(at), "left by the killed run").toBe(true);

    await checkedRunIn(tmp);
    expect(existsSync(at), "kept while it is recent").toBe(true);

    utimesSync(at, TWO_HOURS_AGO, TWO_HOURS_AGO);
    await checkedRunIn(tmp);
    expect(existsSync(at), "removed once old").toBe(false);
    rmSync(tmp, { recursive: true, force: true });
  }, 120_000);
});
