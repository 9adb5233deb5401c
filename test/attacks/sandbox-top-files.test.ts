// Files at the top of / are covered in the sandbox's mount namespace too (runner/sandbox-mounts.ts
// binds an empty read-only file over each entry of / that is neither a directory nor a link). Only
// directories were: a swap file there (/swapfile, /swap.img), which root owns and root's sandbox
// could read without a capability, or a file a container was given, stayed in view of native code
// in Deno, which no permission binds. The test makes a root of its own (a tmpfs in a user and mount
// namespace of the test's, every entry of the host's / bound in, and a canary file added at its
// top), and there runs Deno with every permission, started the way a sandbox is.

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, tempDir } from "../helpers.js";

/** Whether this host lets the test make the namespaces tacit makes (else the sandbox sees the host's files, and tacit warns). */
const hostMakesMounts =
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", "/usr/bin/mount -t tmpfs x /mnt"], { stdio: "ignore" }).status === 0;
const hasChroot = spawnSync("/bin/sh", ["-c", "command -v chroot"], { stdio: "ignore" }).status === 0;

const CANARY = `top-level-canary-${process.pid}`;

/** Makes `$1` a root holding every entry of / (bound in; links copied) and the canary file, and runs the rest of the arguments there. */
const IN_A_ROOT_OF_ITS_OWN = `set -e
new=$1; shift
mount -t tmpfs tacit-test-root "$new"
for entry in /* /.[!.]*; do
  [ -e "$entry" ] || [ -L "$entry" ] || continue
  name=\${entry#/}
  if [ -L "$entry" ]; then cp -P "$entry" "$new/$name"
  elif [ -d "$entry" ]; then mkdir "$new/$name" && mount --rbind "$entry" "$new/$name"
  else : > "$new/$name" && mount --bind "$entry" "$new/$name"; fi
done
printf '%s' '${CANARY}' > "$new/tacit-top-canary"
exec chroot "$new" "$@"`;

/** A Node program that runs Deno reading the canary file, confined as a sandbox is (with "confined") or plainly. */
const READER = `import { spawnSync } from "node:child_process";
const { sandboxLaunch, sandboxEnv } = await import(${JSON.stringify(path.join(repoRoot, "dist", "runner", "sandbox-process.js"))});
const { denoExecutable } = await import(${JSON.stringify(path.join(repoRoot, "dist", "runner", "paths.js"))});
const code = 'try { console.log("read: [" + Deno.readTextFileSync("/tacit-top-canary") + "]"); } catch (error) { console.log("refused: " + error.name); }';
const plain = { file: denoExecutable(), args: ["eval", code] };
const { file, args } = process.argv[2] === "confined" ? sandboxLaunch(plain.file, plain.args) : plain;
const run = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8" });
process.stdout.write(run.stdout);
process.stderr.write(run.stderr);
`;

function readInOwnRoot(dir: string, how: "confined" | "plain"): { status: number | null; stdout: string; stderr: string } {
  const setup = path.join(dir, "in-a-root-of-its-own.sh");
  const reader = path.join(dir, "reader.mjs");
  const root = path.join(dir, "root");
  writeFileSync(setup, IN_A_ROOT_OF_ITS_OWN, { mode: 0o755 });
  writeFileSync(reader, READER);
  spawnSync("mkdir", [root]);
  const run = spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", setup, root, process.execPath, reader, how], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe.skipIf(!hostMakesMounts || !hasChroot)("a file at the top of /", () => {
  it("is an empty file to native code in a program started the way a sandbox is", () => {
    const { dir, cleanup } = tempDir("tacit-top-files-");
    try {
      // The control: in the same root, Deno started plainly reads the canary.
      const plain = readInOwnRoot(dir, "plain");
      expect(plain.stdout, plain.stderr).toBe(`read: [${CANARY}]\n`);
      const confined = readInOwnRoot(dir, "confined");
      expect(confined.status, confined.stderr).toBe(0);
      expect(confined.stdout + confined.stderr).not.toContain(CANARY);
      expect(confined.stdout).toBe("read: []\n");
    } finally {
      cleanup();
    }
  });
});
