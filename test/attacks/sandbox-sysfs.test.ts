// What the sandbox sees of the host's /sys (runner/sandbox-sysfs.ts): an empty read-only tmpfs,
// with copies of the few files Deno reads there (the online CPUs, the cgroup's CPU quota). With the
// host's sysfs in view, native code in Deno (which no permission binds) listed the host's network
// interfaces and read their MAC addresses in /sys/class/net (a machine identifier; the sandbox's
// network namespace hides the interfaces, not sysfs), the product and vendor names in
// /sys/class/dmi/id, the disks in /sys/block, and the cgroup tree in /sys/fs/cgroup. Tested with
// Deno's own file APIs (all permissions: the validator and Deno's permissions bypassed) in a program
// started the way a sandbox is, against what the test reads of the host's own /sys; and through
// `tacit run` and `tacit serve`, which must still work.

import { readdirSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { denoExecutable } from "../../runner/paths.js";
import { sandboxEnv, sandboxLaunch } from "../../runner/sandbox-process.js";
import { connectServe, createSession, repoRoot, runCli, runInSession, tempDir } from "../helpers.js";

/** Whether this host lets the test make the namespaces tacit makes (else the sandbox sees the host's files, and tacit warns). */
const hostMakesMounts =
  spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", "/usr/bin/mount -t tmpfs x /mnt"], { stdio: "ignore" }).status === 0;

/** A file's first line, or null where it cannot be read. */
function firstLine(file: string): string | null {
  try {
    return readFileSync(file, "utf8").split("\n")[0]!.trim();
  } catch {
    return null;
  }
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** What identifies this machine in its /sys, as the test reads it: interface names and MAC addresses, DMI names, disks. */
function hostIdentifiers(): { interfaces: string[]; addresses: string[]; dmi: string[]; disks: string[] } {
  const interfaces = entries("/sys/class/net").filter((name) => name !== "lo");
  const addresses = interfaces
    .map((name) => firstLine(`/sys/class/net/${name}/address`) ?? "")
    .filter((address) => address !== "" && !/^[0:]*$/.test(address));
  // Names short or common enough to turn up by chance in what the program prints are left out.
  const dmi = ["product_name", "sys_vendor", "board_name", "board_vendor", "product_uuid", "product_serial", "chassis_vendor"]
    .map((field) => firstLine(`/sys/class/dmi/id/${field}`) ?? "")
    .filter((value) => value.length >= 4 && !/^(none|default string|to be filled by o\.e\.m\.)$/i.test(value));
  return { interfaces, addresses, dmi, disks: entries("/sys/block") };
}

/**
 * Deno code that lists what /sys shows of the machine: every interface in /sys/class/net and its
 * address, every file of /sys/class/dmi/id, the disks in /sys/block, and (`walk`) every name in /sys
 * it can walk to, links not followed. Prints it as JSON.
 */
function looksAtSys(walk: boolean): string {
  return `const read = (file) => { try { return Deno.readTextFileSync(file).trim(); } catch (error) { return "(" + error.name + ")"; } };
const list = (dir) => { try { return [...Deno.readDirSync(dir)].map((entry) => entry.name).sort(); } catch (error) { return ["(" + error.name + ")"]; } };
const net = list("/sys/class/net").map((name) => name + " " + read("/sys/class/net/" + name + "/address"));
const dmi = list("/sys/class/dmi/id").map((name) => name + " " + read("/sys/class/dmi/id/" + name));
const walked = [];
const walk = (dir, depth) => {
  for (const name of list(dir)) {
    walked.push(dir + "/" + name);
    if (depth < 8 && !name.startsWith("(")) { try { if (Deno.lstatSync(dir + "/" + name).isDirectory) walk(dir + "/" + name, depth + 1); } catch {} }
  }
};
if (${walk}) walk("/sys", 0);
console.log(JSON.stringify({ net, dmi, disks: list("/sys/block"), walked }));`;
}

/** What Deno reads of a cgroup: its CPU quota (Rust's std::thread::available_parallelism, see runner/sandbox-sysfs.ts). */
const QUOTA_FILES = ["cpu.max", "cgroup.controllers", "cpu.cfs_quota_us", "cpu.cfs_period_us"];

function denoEval(code: string, confined: boolean): { status: number | null; stdout: string; stderr: string } {
  const { file, args } = confined ? sandboxLaunch(denoExecutable(), ["eval", code]) : { file: denoExecutable(), args: ["eval", code] };
  const run = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8", timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

interface SysSeen {
  net: string[];
  dmi: string[];
  disks: string[];
  walked: string[];
}

describe.skipIf(!hostMakesMounts)("the host's /sys, from the sandbox", () => {
  it("native code in a program started the way a sandbox is finds none of the host's interfaces, MAC addresses, DMI names or disks", () => {
    const host = hostIdentifiers();
    // As the program's JSON writes them (a DMI name may hold a quote or a backslash).
    const identifiers = [...host.interfaces, ...host.addresses, ...host.dmi, ...host.disks].map((identifier) => JSON.stringify(identifier).slice(1, -1));
    // The control: the same code, Deno started plainly, finds what the host's /sys shows.
    const plain = denoEval(looksAtSys(false), false);
    expect(plain.status, plain.stderr).toBe(0);
    for (const identifier of identifiers) expect(plain.stdout).toContain(identifier);

    const confined = denoEval(looksAtSys(true), true);
    expect(confined.status, confined.stderr).toBe(0);
    const read = identifiers.filter((identifier) => (confined.stdout + confined.stderr).includes(identifier));
    expect(read, "what the sandbox read of the host's /sys").toEqual([]);
    const seen = JSON.parse(confined.stdout) as SysSeen;
    expect(seen.net).toEqual(["(NotFound) (NotFound)"]);
    expect(seen.dmi).toEqual(["(NotFound) (NotFound)"]);
    expect(seen.disks).toEqual(["(NotFound)"]);
    // All that is left of /sys: the CPUs online, the CPU quota files of the cgroup tacit runs in (and
    // of those above it), and the directories on the way to them.
    const kept = seen.walked.filter((place) => place === "/sys/devices/system/cpu/online" || (place.startsWith("/sys/fs/cgroup/") && QUOTA_FILES.includes(path.basename(place))));
    for (const place of seen.walked) {
      expect(kept.some((file) => file === place || file.startsWith(`${place}/`)), `${place} is in view in the sandbox's /sys`).toBe(true);
    }
  });

  it("nothing can be written in the sandbox's /sys", () => {
    const code = `const tries = ["/sys/tacit-canary", "/sys/devices/system/cpu/online", "/sys/devices/tacit-canary"].map((file) => {
  try { Deno.writeTextFileSync(file, "1"); return file + ": written"; } catch (error) { return file + ": " + error.name; }
});
console.log(JSON.stringify(tries));`;
    const confined = denoEval(code, true);
    expect(confined.status, confined.stderr).toBe(0);
    expect(confined.stdout).not.toContain("written");
  });

  it("Deno counts as many CPUs in the sandbox as outside it", () => {
    const code = "console.log(navigator.hardwareConcurrency);";
    const plain = denoEval(code, false);
    const confined = denoEval(code, true);
    expect(confined.status, confined.stderr).toBe(0);
    expect(confined.stdout).toBe(plain.stdout);
  });

  it("`tacit run examples/hello.ts` and a `tacit serve` session still run", async () => {
    const run = await runCli(["run", path.join(repoRoot, "examples", "hello.ts")]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Hello, world!");
    expect(run.stderr).not.toContain("sees the host's");

    const { dir, cleanup } = tempDir("tacit-sysfs-serve-");
    const client = await connectServe([], dir);
    try {
      const session = await createSession(client);
      const first = await runInSession(client, session, "const doubled = classify(21).map((n) => n * 2);\nprintln('first');");
      expect(first.error).toBeNull();
      const second = await runInSession(client, session, "println('second', 1 + 1);");
      expect(second.error).toBeNull();
      expect(second.stdout).toBe("second 2\n");
    } finally {
      await client.close();
      cleanup();
    }
  });
});
