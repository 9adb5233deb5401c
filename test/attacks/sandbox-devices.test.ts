// In the sandbox's mount namespace no device node opens but /dev/null, zero, full, random and
// urandom (runner/sandbox-mounts.ts remounts every mount in view nodev). A user's device nodes are
// theirs to open: their terminals in /dev/pts (read what the person types, write what tacit did not
// say), on a desktop the sound card, webcam and GPU (the seat's ACLs), and as root /dev/kmsg (lines
// into the kernel's log). Deno's permissions keep a script off them, but native code in Deno does
// I/O no permission covers. Tested with a Deno program started the way a sandbox is, with every
// permission (what native code could do): it writes a canary to a terminal the test holds open.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readlinkSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { denoExecutable } from "../../runner/paths.js";
import { sandboxEnv, sandboxLaunch } from "../../runner/sandbox-process.js";
import { childrenOf } from "../processes.js";

/** Whether this host lets the test make the namespaces tacit makes (else the sandbox sees the host's files, and tacit warns). */
const hostMakesMounts =
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", "/usr/bin/mount -t tmpfs x /mnt"], { stdio: "ignore" }).status === 0;
const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

const CANARY = `device-canary-${process.pid}`;

/** Deno code that opens each of `paths` for writing and writes the canary: prints what became of each, as JSON. */
function writeEach(paths: readonly string[]): string {
  return `const said = {};
for (const path of ${JSON.stringify(paths)}) {
  try {
    const file = Deno.openSync(path, { write: true });
    file.writeSync(new TextEncoder().encode(${JSON.stringify(`\n${CANARY}\n`)}));
    file.close();
    said[path] = "written";
  } catch (error) {
    said[path] = error.name;
  }
}
for (const path of ["/dev/zero", "/dev/urandom"]) {
  try {
    const file = Deno.openSync(path);
    said[path] = "read " + file.readSync(new Uint8Array(4));
    file.close();
  } catch (error) {
    said[path] = error.name;
  }
}
console.log(JSON.stringify(said));`;
}

function confinedDeno(code: string): { status: number | null; stdout: string; stderr: string } {
  const { file, args } = sandboxLaunch(denoExecutable(), ["eval", code]);
  const run = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8", timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A pseudo-terminal (`script` running `cat`): its device, and everything shown on it so far. */
async function terminal(): Promise<{ device: string; shown: () => string; child: ChildProcess }> {
  const child = spawn("script", ["-qec", "cat", "/dev/null"], { stdio: ["pipe", "pipe", "ignore"], detached: true });
  let shown = "";
  child.stdout!.on("data", (chunk: Buffer) => (shown += chunk.toString("utf8")));
  for (let tries = 0; tries < 400; tries++) {
    const cat = childrenOf(child.pid!)[0];
    if (cat !== undefined) {
      try {
        const device = readlinkSync(`/proc/${cat}/fd/0`);
        if (device.startsWith("/dev/pts/")) return { device, shown: () => shown, child };
      } catch {
        // Not yet running cat.
      }
    }
    await sleep(50);
  }
  throw new Error("script made no terminal");
}

describe.skipIf(!hostMakesMounts || !hasScript)("device nodes in the sandbox's view", () => {
  it("native code in a program started the way a sandbox is writes nothing to the user's terminal or the kernel's log, and /dev/null, zero, urandom still work", async () => {
    const held = await terminal();
    try {
      const targets = [held.device, ...(existsSync("/dev/kmsg") ? ["/dev/kmsg"] : []), "/dev/null"];
      const run = confinedDeno(writeEach(targets));
      expect(run.status, run.stderr).toBe(0);
      const said = JSON.parse(run.stdout) as Record<string, string>;
      expect(said[held.device]).toBe("PermissionDenied");
      if (targets.includes("/dev/kmsg")) expect(said["/dev/kmsg"]).toBe("PermissionDenied");
      expect(said["/dev/null"]).toBe("written");
      expect(said["/dev/zero"]).toBe("read 4");
      expect(said["/dev/urandom"]).toBe("read 4");
      // What was written to the terminal would be shown by now: the write had returned.
      held.child.stdin!.write("shown-after\n");
      for (let tries = 0; tries < 400 && !held.shown().includes("shown-after"); tries++) await sleep(25);
      expect(held.shown()).toContain("shown-after");
      expect(held.shown()).not.toContain(CANARY);
    } finally {
      try {
        process.kill(-held.child.pid!, "SIGKILL");
      } catch {
        // Ended already.
      }
    }
  });
});
