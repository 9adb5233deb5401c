// --strict refuses the tools that change the system's settings (runner/exec/strict-denylist.ts):
// a ninth review, under --strict with tacit as root, brought the loopback interface up with
// `ifconfig lo up` and added a route with `route add`, past everything --strict is for. Tried for
// real in a network namespace of the test's own (`unshare --net`), so that the host's network is
// never touched: after the run, lo is still down there and the route is not there. The rest of the
// network, device, clock and system-manager tools would change this host if run: their scopes are
// only asked for.

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, tacitBin } from "../helpers.js";
import { ATTEMPT_PRELUDE, attempts, expectRefused, realTempDir } from "./fixtures.js";

/** Whether this host gives the test a network namespace of its own, with net-tools' ifconfig and route in it. */
const privateNetwork = spawnSync("unshare", ["--net", "--", "/bin/sh", "-c", "ifconfig lo >/dev/null && command -v route"], { stdio: "ignore" }).status === 0;

const ASKED_ONLY = [
  "arp", "rarp", "tc", "bridge", "devlink", "rdma", "tipc", "vdpa", "dcb", "nameif", "slattach", "plipconfig", "mii-tool", "ipmaddr",
  "iptunnel", "hwclock", "rtcwake", "swapon", "swapoff", "losetup", "blkdiscard", "blockdev", "fsfreeze", "fstrim", "chcpu", "chmem",
  "addpart", "delpart", "resizepart", "partx", "blkzone", "zramctl", "pivot_root", "switch_root", "ctrlaltdel", "dmsetup",
  "dmstats", "blkdeactivate", "ldattach", "dmesg", "hostnamectl", "timedatectl", "localectl", "networkctl", "loginctl",
  "systemd-sysext", "systemd-repart", "systemd-cryptenroll", "systemd-machine-id-setup", "deb-systemd-invoke", "deb-systemd-helper",
  "update-locale", "locale-gen",
];

const SCRIPT = `${ATTEMPT_PRELUDE}
attempt("ifconfig", () => requestExecPermission(["ifconfig"], (p) => p.exec("ifconfig", ["lo", "up"]).exitCode));
attempt("route", () => requestExecPermission(["route"], (p) => p.exec("route", ["add", "-net", "10.213.0.0/16", "dev", "lo"]).exitCode));
for (const command of ${JSON.stringify(ASKED_ONLY)}) attempt(command, () => requestExecPermission([command], () => "granted"));
`;

describe.skipIf(!privateNetwork)("--strict and the tools that change the system's settings", () => {
  let dir: string;
  let cleanup: () => void;
  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-strict-system-settings-"));
    writeFileSync(path.join(dir, "script.ts"), SCRIPT);
  });
  afterAll(() => cleanup());

  it("refuses them: ifconfig and route change nothing in the run's network namespace", () => {
    const tacit = [process.execPath, tacitBin, "run", "--no-check", "--strict", "script.ts"].map((word) => `'${word}'`).join(" ");
    // After the run, the namespace's lo and routes as they are then (before it: lo down, no routes).
    const run = spawnSync("unshare", ["--net", "--", "/bin/sh", "-c", `${tacit}; echo "@@lo\\t$(ifconfig lo | head -1)"; echo "@@routes\\t$(route -n | tail -n +3)"`], {
      cwd: dir,
      env: childEnv(),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const found = attempts(run.stdout.replace(/^@@(lo|routes)\t(.*)$/gm, (_, label: string, text: string) => `@@${label}\tok\t${JSON.stringify(text)}`));
    expectRefused(found, ["ifconfig", "route", ...ASKED_ONLY], /refused under --strict/);
    expect(found.get("lo")?.value).not.toMatch(/\bUP\b/);
    expect(found.get("routes")?.value).toBe("");
  });
});
