// In a confined command's view (--confine-commands) no device node opens but the few programs
// use (runner/exec/confinement.ts, KEPT_DEVICES): every mount in view but the roots is nodev. A
// confined command of tacit run as root read a classified `.env` in a root off the block device
// that holds it (`grep -a` on the loop device), past the empty file that covers it, and wrote a
// line into the kernel's log (/dev/kmsg). Tested with an ext2 image on a loop device, mounted in
// the allowed root (as root only: the test makes the loop device and the mount). The devices
// programs use still work, and a program that makes a terminal (`script`) gets one of its own.

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { realTempDir } from "../files/fixtures.js";
import { makeCanary } from "./fixtures.js";

/** Whether this host lets the test make a loop device and mount it: root, with the tools. */
const makesLoopMounts =
  process.getuid?.() === 0 &&
  ["losetup", "mount", "umount", "script"].every((tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0) &&
  spawnSync("mke2fs", ["-V"], { stdio: "ignore" }).status === 0 &&
  spawnSync("losetup", ["-f"], { stdio: "ignore" }).status === 0;

describe.skipIf(!makesLoopMounts)("a confined command and the host's device nodes", () => {
  const canary = makeCanary();
  let dir: string;
  let cleanup: () => void;
  let root: string;
  let disk: string;
  let loop = "";
  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-confined-devices-"));
    root = path.join(dir, "root");
    disk = path.join(root, "disk");
    mkdirSync(disk, { recursive: true });
    const image = path.join(dir, "disk.img");
    writeFileSync(image, Buffer.alloc(4 * 1024 * 1024));
    execFileSync("mke2fs", ["-q", "-F", image], { stdio: "ignore" });
    loop = execFileSync("losetup", ["-f", "--show", image], { encoding: "utf8" }).trim();
    execFileSync("mount", [loop, disk]);
    writeFileSync(path.join(disk, ".env"), `TOKEN=${canary}\n`);
    execFileSync("sync");
  });
  afterAll(() => {
    spawnSync("umount", [disk]);
    if (loop !== "") spawnSync("losetup", ["-d", loop]);
    cleanup();
  });

  it("cannot read the block device under a classified file, nor write the kernel's log; null, urandom and a terminal of its own work", async () => {
    const command = [
      `cat disk/.env`,
      `grep -a -c ${canary.slice(0, 16)} ${loop} && echo read-the-device`,
      `echo tacit-kmsg > /dev/kmsg && echo wrote-kmsg`,
      `echo x > /dev/null && echo null-ok`,
      `head -c 4 /dev/urandom | wc -c`,
      `script -qc 'echo in-a-terminal' /dev/null`,
    ].join("; ");
    writeFileSync(
      path.join(root, "script.ts"),
      `println(JSON.stringify(requestExecPermission(["sh"], (proc) => proc.exec("sh", ["-c", ${JSON.stringify(command)}]))));\n`,
    );
    const run = await runCli(["run", "--no-check", "--command-permissions", "sh", "--confine-commands", "script.ts"], { cwd: root });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain(canary.slice(0, 16));
    expect(run.stdout).not.toContain("read-the-device");
    expect(run.stdout).not.toContain("wrote-kmsg");
    expect(run.stdout).toContain("null-ok");
    expect(run.stdout).toMatch(/\\n4\\n/);
    expect(run.stdout).toContain("in-a-terminal");
  });
});
