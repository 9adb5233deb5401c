// Native code in the sandbox's mount namespace (runner/sandbox-mounts.ts), as root of its user
// namespace without a capability, tries to lift what hides the host's files: unmount a cover,
// remount one or / read-write, mount a tmpfs of its own, create files, reach the host's view of
// its files through /proc/<tacit's pid>, and do the same from a user namespace of its own inside.
// Each is refused, and the host's canary directory stays out of sight. The program is Deno with
// every permission (libc through FFI, as native code would call it), started the way a sandbox is.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { denoExecutable } from "../../runner/paths.js";
import { sandboxEnv, sandboxLaunch } from "../../runner/sandbox-process.js";

/** Whether this host lets the test make the namespaces tacit makes (else the sandbox sees the host's files, and tacit warns). */
const hostMakesMounts =
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", "/usr/bin/mount -t tmpfs x /mnt"], { stdio: "ignore" }).status === 0;

let canary: string;
beforeAll(() => {
  canary = mkdtempSync(path.join(tmpdir(), "tacit-escape-canary-"));
});
/** What the attempts would create on the host were they not refused: removed, so that a failure does not outlive its run. */
const WOULD_BE_CREATED = ["/tacit-escape-file", "/tmp/tacit-escape-file", "/var/tmp/tacit-escape-file"];
afterAll(() => {
  rmSync(canary, { recursive: true, force: true });
  for (const file of WOULD_BE_CREATED) rmSync(file, { force: true });
});

/** Deno code: each attempt's outcome ("refused" or what it did), then whether the canary directory is in sight, as JSON. */
function attempts(hostPid: number, canaryDir: string): string {
  return `const libc = Deno.dlopen("libc.so.6", {
  mount: { parameters: ["buffer", "buffer", "buffer", "u64", "pointer"], result: "i32" },
  umount2: { parameters: ["buffer", "i32"], result: "i32" },
}).symbols;
const c = (text) => text === null ? null : new TextEncoder().encode(text + "\\0");
const MS_RDONLY = 1, MS_REMOUNT = 32, MS_BIND = 4096, MNT_DETACH = 2;
const said = {};
const call = (name, result) => { said[name] = result === 0 ? "done" : "refused"; };
call("umount2 /tmp", libc.umount2(c("/tmp"), MNT_DETACH));
call("umount2 /home", libc.umount2(c("/home"), 0));
call("remount /tmp read-write", libc.mount(null, c("/tmp"), null, BigInt(MS_REMOUNT | MS_BIND), null));
call("remount / read-write", libc.mount(null, c("/"), null, BigInt(MS_REMOUNT | MS_BIND), null));
call("mount a tmpfs on /mnt", libc.mount(c("x"), c("/mnt"), c("tmpfs"), 0n, null));
call("bind /proc/${hostPid}/root on /mnt", libc.mount(c("/proc/${hostPid}/root"), c("/mnt"), null, BigInt(MS_BIND), null));
for (const file of ${JSON.stringify(WOULD_BE_CREATED)}) {
  try { Deno.writeTextFileSync(file, "x"); said["create " + file] = "done"; } catch { said["create " + file] = "refused"; }
}
for (const file of ["/proc/${hostPid}/environ", "/proc/${hostPid}/root${canaryDir}", "/proc/${hostPid}/cwd"]) {
  try { Deno.readDirSync(file); said["read " + file] = "done"; } catch (error) {
    try { Deno.readFileSync(file); said["read " + file] = "done"; } catch { said["read " + file] = "refused"; }
  }
}
// Deno has threads, so unshare(2) of a user namespace is refused it: util-linux unshare tries from a process of its own.
const run = (command) => new Deno.Command("/bin/sh", { args: ["-c", command] }).outputSync().code === 0 ? "done" : "refused";
said["a mapped user namespace of its own"] = run("unshare --user --map-root-user --mount -- true");
said["umount -l /tmp in an unmapped user namespace of its own"] = run("unshare --user --mount -- umount -l /tmp");
try { Deno.statSync(${JSON.stringify(canaryDir)}); said.canary = "in sight"; } catch { said.canary = "out of sight"; }
console.log(JSON.stringify(said));`;
}

describe.skipIf(!hostMakesMounts)("native code in the sandbox's mount namespace cannot lift its covers", () => {
  it("unmounts, remounts, mounts, creates, reaches through the host's /proc, and does so from a user namespace of its own: each refused", () => {
    const { file, args } = sandboxLaunch(denoExecutable(), ["eval", attempts(process.pid, canary)]);
    const run = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8", timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const said = JSON.parse(run.stdout) as Record<string, string>;
    const { canary: seen, ...tried } = said;
    expect(Object.keys(tried).length).toBe(14);
    for (const [attempt, outcome] of Object.entries(tried)) expect(outcome, attempt).toBe("refused");
    expect(seen).toBe("out of sight");
    for (const file of WOULD_BE_CREATED) expect(existsSync(file), file).toBe(false);
  });
});
