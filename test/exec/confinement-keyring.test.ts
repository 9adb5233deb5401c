// A confined command (--confine-commands) gets a session keyring of its own, empty, as the sandbox
// does (runner/sandbox-mounts.ts). A process keeps the session keyring of the process that started
// it, user namespace or not: a confined `keyctl print` read a key tacit's session keyring held (a
// Kerberos ticket kept in a keyring, an encrypted home's passphrase), though the confinement covers
// ~/.ssh and the runtime directory's agents for the same reason. Tested with tacit started from a
// fresh session keyring that holds a canary key; the same command unconfined (which runs with the
// user's full authority, by design) reads it, which shows the key was there to read. Under --strict,
// keyctl is refused by name.

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, tacitBin } from "../helpers.js";
import { realTempDir } from "../files/fixtures.js";
import { makeCanary } from "./fixtures.js";

const hasKeyctl = spawnSync("keyctl", ["--version"], { stdio: "ignore" }).status === 0;

const SCRIPT = `
const keyctl = (args: string[]) => requestExecPermission(["keyctl"], (proc) => proc.exec("keyctl", args));
const found = keyctl(["request", "user", "tacit-canary"]);
println("request:", JSON.stringify(found));
if (found.exitCode === 0) println("print:", JSON.stringify(keyctl(["print", found.stdout.trim()])));
`;

describe.skipIf(!hasKeyctl).concurrent("a confined command and tacit's session keyring", () => {
  let dir: string;
  let cleanup: () => void;
  const canary = makeCanary();
  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-confined-keyring-"));
    writeFileSync(path.join(dir, "script.ts"), SCRIPT);
  });
  afterAll(() => cleanup());

  /** `tacit run` with `flags`, started from a new session keyring holding the canary key. */
  function runWithKey(flags: string[]): { status: number | null; stdout: string; stderr: string } {
    const tacit = [process.execPath, tacitBin, "run", "--no-check", ...flags, "script.ts"].map((word) => `'${word}'`).join(" ");
    const run = spawnSync("keyctl", ["session", "-", "/bin/sh", "-c", `keyctl add user tacit-canary '${canary}' @s >/dev/null && exec ${tacit}`], {
      cwd: dir,
      env: childEnv(),
      encoding: "utf8",
      timeout: 60_000,
    });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  }

  it("unconfined, the command reads the key (the user's full authority)", () => {
    const r = runWithKey(["--command-permissions", "keyctl"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(canary);
  });

  it("confined, it finds no key: its session keyring is a new, empty one", () => {
    const r = runWithKey(["--command-permissions", "keyctl", "--confine-commands"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/request: \{"exitCode":1,/);
    expect(r.stdout).not.toContain(canary);
  });

  it("under --strict, keyctl is refused: a credential tool, as gpg is", () => {
    // A ninth review: under --strict, unconfined, keyctl printed the key of tacit's session keyring.
    const r = runWithKey(["--strict"]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/"keyctl" is refused under --strict: it is a privilege or credential tool/);
    expect(r.stdout + r.stderr).not.toContain(canary);
  });
});
