// Which cgroup's CPU quota the sandbox's /sys holds copies of (runner/sandbox-sysfs.ts): the one
// Rust's std::thread::available_parallelism reads in Deno, chosen from /proc/self/cgroup as it
// chooses. The copies themselves are tested through a sandbox in test/attacks/sandbox-sysfs.test.ts.

import { statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cgroupOfCpuQuota, sysfsFilesDenoReads } from "../../runner/sandbox-sysfs.js";
import { tempDir } from "../helpers.js";

describe("cgroupOfCpuQuota", () => {
  it("takes the cgroup v2 line where there is no v1 cpu controller", () => {
    expect(cgroupOfCpuQuota("0::/user.slice/user-1000.slice/session-2.scope\n")).toEqual({ version: 2, path: "/user.slice/user-1000.slice/session-2.scope" });
  });

  it("takes the v1 line with the cpu controller over the v2 line, before or after it", () => {
    const hybrid = "4:memory:/box\n2:cpu,cpuacct:/box/cpu\n0::/\n";
    expect(cgroupOfCpuQuota(hybrid)).toEqual({ version: 1, path: "/box/cpu" });
    expect(cgroupOfCpuQuota("0::/\n2:cpu,cpuacct:/box/cpu\n")).toEqual({ version: 1, path: "/box/cpu" });
  });

  it("finds none where no line names the cpu controller or cgroup v2", () => {
    expect(cgroupOfCpuQuota("4:memory:/box\n1:name=systemd:/\n")).toBeNull();
    expect(cgroupOfCpuQuota("")).toBeNull();
  });

  it("keeps the colons of a path", () => {
    expect(cgroupOfCpuQuota("0::/a:b\n")).toEqual({ version: 2, path: "/a:b" });
  });
});

describe("sysfsFilesDenoReads", () => {
  it("names only files of this host's /sys that Deno reads", () => {
    for (const file of sysfsFilesDenoReads()) {
      expect(file.startsWith("/sys/")).toBe(true);
      expect(statSync(file).isFile()).toBe(true);
      expect(["online", "cpu.max", "cgroup.controllers", "cpu.cfs_quota_us", "cpu.cfs_period_us"]).toContain(path.basename(file));
    }
  });

  it("copies no cgroup file from outside /sys/fs/cgroup, where a cgroup namespace's path leads above its root", () => {
    const { dir, cleanup } = tempDir("tacit-sysfs-");
    try {
      const cgroups = path.join(dir, "cgroup");
      writeFileSync(cgroups, "0::/../../..\n2:cpu:/../../../..\n");
      expect(sysfsFilesDenoReads(cgroups).filter((file) => file.includes("cgroup"))).toEqual([]);
    } finally {
      cleanup();
    }
  });
});
