// A directory its user may write and enter but not list (mode -wx, a drop box): tacit opened every
// directory it creates or looks up a name in to read it, which such a directory refuses (EACCES),
// so nothing could be put there that the user could put there with `cp` or `>`: the secure output,
// the audit log, the --record file, a file the script writes. Such directories are now opened as a
// path only (O_PATH, runner/fs/checked-open.ts), which needs no read permission; listing one still
// fails, as it does for the user.
//
// Run where permission bits bind (root without CAP_DAC_OVERRIDE, see nodeBoundByPermissions): as
// plain root every directory can be read, and the test would show nothing.

import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { type CliResult, lit, makeCanary, nodeBoundByPermissions, realTempDir } from "./fixtures.js";

let base: string;
let cleanup: () => void;
let node: string;
let work: string;
const canary = makeCanary();

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-write-only-"));
  node = nodeBoundByPermissions(base);
  work = path.join(base, "work");
  mkdirSync(work);
  writeFileSync(path.join(work, ".env"), canary);
  for (const drop of [path.join(base, "out"), path.join(work, "drop")]) {
    mkdirSync(drop);
    chmodSync(drop, 0o300);
  }
  // The premise: the Node tacit runs with cannot list a directory of mode -wx.
  const probe = `try { require("node:fs").readdirSync(${lit(path.join(base, "out"))}); console.log("listed"); } catch (e) { console.log(e.code); }`;
  expect(execFileSync(node, ["-e", probe], { encoding: "utf8" }).trim(), "the tests' tacit lists a directory of mode -wx: the test would show nothing").toBe("EACCES");
});

afterAll(() => {
  execFileSync("chmod", ["-R", "u+rwx", base]);
  cleanup();
});

function run(script: string, args: string[]): Promise<CliResult> {
  return runCli(unchecked(["run", ...args, "-"]), { cwd: work, input: script, env: { TACIT_HOME: path.join(base, "home") }, node });
}

/** What `file` holds, read by root (the test may read what tacit's user cannot list). */
function contentOf(file: string): string {
  return readFileSync(file, "utf8");
}

describe.concurrent("a directory that may be written and entered but not listed (mode -wx)", () => {
  it("holds the secure output: the classified value printed lands there, not on stdout", async () => {
    const sink = path.join(base, "out", "secure.txt");
    const r = await run(`requestFileSystem(".", (fs) => println("token:", fs.readClassified(".env")));`, ["--secure-output", sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(canary);
    expect(contentOf(sink)).toContain(canary);
  });

  it("holds the audit log, which verifies", async () => {
    const log = path.join(base, "out", "audit.log");
    const r = await run(`requestFileSystem(".", (fs) => println(fs.access("a.txt").exists));`, ["--audit-log", log]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe("false");
    const verified = await runCli(["audit", "verify", log], { cwd: work, env: { TACIT_HOME: path.join(base, "home") }, node });
    expect(verified.stdout + verified.stderr).toMatch(/verified|OK/i);
    expect(verified.code).toBe(0);
  });

  it("holds the --record file", async () => {
    const rec = path.join(base, "out", "rec");
    mkdirSync(rec);
    chmodSync(rec, 0o300);
    const r = await run(`println("recorded run");`, ["--record", rec]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(contentOf(path.join(rec, "tacit-record.jsonl"))).toContain("recorded run");
  });

  it("takes a file a script writes in its scope, and tells that it exists; listing it still fails as it does for the user", async () => {
    const r = await run(
      `requestFileSystem(".", (fs) => {
        fs.access("drop/new.txt").write("dropped");
        println(fs.access("drop/new.txt").exists);
        try { fs.access("drop").children(); println("listed"); } catch (e) { println("not listed: " + (e as Error).message); }
      });`,
      [],
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [exists, listing] = r.stdout.trim().split("\n");
    expect(exists).toBe("true");
    expect(listing).toMatch(/^not listed: .*permission denied/i);
    expect(listing).not.toMatch(/\/proc\//);
    expect(contentOf(path.join(work, "drop", "new.txt"))).toBe("dropped");
  });
});

