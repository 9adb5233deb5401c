// The sandbox and the pure evaluator do not keep tacit's session keyring (runner/sandbox-mounts.ts:
// the mount namespace's setup runs `keyctl new_session` where keyutils is installed). A process keeps
// the session keyring of the process that started it, user namespace or not, and may read the keys
// it holds: a Kerberos ticket kept in a keyring, an encrypted home's passphrase. Deno's permissions
// keep a script from the keyctl system call, but native code in Deno is bound by no permission.
// Tested with a program started the way a sandbox is (keyctl itself, as native code would call it),
// from a process whose session keyring holds a canary key.

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, tempDir } from "../helpers.js";

/** Whether this host lets the test make the namespaces tacit makes (else the sandbox sees the host's files, and tacit warns). */
const hostMakesMounts =
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", "/usr/bin/mount -t tmpfs x /mnt"], { stdio: "ignore" }).status === 0;
const hasKeyctl = spawnSync("keyctl", ["--version"], { stdio: "ignore" }).status === 0;

const CANARY = `keyring-canary-${process.pid}`;

/** A Node program that runs `keyctl print <key>` (argv[3]), confined as a sandbox is (argv[2] "confined") or plainly. */
const READER = `import { spawnSync } from "node:child_process";
const { sandboxLaunch, sandboxEnv } = await import(${JSON.stringify(path.join(repoRoot, "dist", "runner", "sandbox-process.js"))});
const plain = { file: "/bin/sh", args: ["-c", "keyctl print " + process.argv[3]] };
const { file, args } = process.argv[2] === "confined" ? sandboxLaunch(plain.file, plain.args) : plain;
const run = spawnSync(file, args, { env: { ...sandboxEnv(), PATH: "/usr/bin:/bin" }, cwd: "/", encoding: "utf8" });
process.stdout.write(run.stdout);
process.stderr.write(run.stderr);
`;

/** Runs the reader from a new session keyring that holds the canary key. */
function readKey(dir: string, how: "confined" | "plain"): { stdout: string; stderr: string } {
  const reader = path.join(dir, "reader.mjs");
  writeFileSync(reader, READER);
  const withKey = `key=$(keyctl add user tacit-canary '${CANARY}' @s) && exec '${process.execPath}' '${reader}' ${how} "$key"`;
  const run = spawnSync("keyctl", ["session", "-", "/bin/sh", "-c", withKey], { encoding: "utf8", timeout: 60_000 });
  return { stdout: run.stdout, stderr: run.stderr };
}

describe.skipIf(!hostMakesMounts || !hasKeyctl)("the session keyring tacit runs with", () => {
  it("holds no key native code in a program started the way a sandbox is can read", () => {
    const { dir, cleanup } = tempDir("tacit-keyring-");
    try {
      // The control: the same read, started plainly, prints the key.
      expect(readKey(dir, "plain").stdout).toBe(`${CANARY}\n`);
      const confined = readKey(dir, "confined");
      expect(confined.stdout + confined.stderr).not.toContain(CANARY);
      expect(confined.stderr).toContain("Permission denied");
    } finally {
      cleanup();
    }
  });
});
