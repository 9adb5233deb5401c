// --confine-commands for a user who is not root, where unprivileged user namespaces are allowed:
// the confined namespace is then made through a user namespace, whose setup must hold the
// capabilities to mount the covers. Mapped to itself there it held none, and every confined
// command was refused ("could not mount a private /tmp"); then, with tacit's user made root there,
// a host mount `ro,nosuid,nodev` that `mount -a` remounted without its locked nosuid refused them
// all again. The command still runs as that user, and cannot undo a cover nor read what the setup's
// shell (pid 1 of its namespace, with every capability over the confined one) holds.
//
// tacit is started as nobody, which only root can do: the suite runs as root here; elsewhere,
// or where nobody cannot run node and tacit from where they lie, the test says so and skips.

import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { collectedRun, tacitBin } from "../helpers.js";
import { lit, makeCanary, realTempDir } from "./fixtures.js";

const NOBODY = "65534";
const SETPRIV = "/usr/bin/setpriv";
const AS_NOBODY = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"];

/** Whether tacit can be started as nobody here, with a user namespace of its own; if not, why. */
function nobodyCanRunTacit(): { ok: boolean; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: "the suite does not run as root, which alone can start tacit as another user" };
  if (!existsSync(SETPRIV)) return { ok: false, reason: `${SETPRIV} is not installed` };
  const readable = `require("fs").accessSync(${JSON.stringify(tacitBin)}, require("fs").constants.R_OK)`;
  const probe = spawnSync(SETPRIV, [...AS_NOBODY, "/usr/bin/unshare", "--map-root-user", "--mount", "--", process.execPath, "-e", readable], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (probe.status !== 0) return { ok: false, reason: `nobody cannot run node and read tacit, in a user namespace of its own: ${(probe.stderr || String(probe.error)).trim()}` };
  return { ok: true, reason: "" };
}

describe("confined commands of a user who is not root", () => {
  it("run, as that user, with the covers on, which they cannot lift", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok, support.reason);
    const { dir, cleanup } = realTempDir("tacit-exec-non-root-");
    try {
      const home = path.join(dir, "home");
      const project = path.join(dir, "project");
      const tacitHome = path.join(dir, "tacit-home");
      for (const made of [home, project, tacitHome]) mkdirSync(made);
      const canary = makeCanary();
      writeFileSync(path.join(project, ".env"), `SECRET=${canary}\n`);
      for (const owned of [dir, home, project, tacitHome, path.join(project, ".env")]) chownSync(owned, Number(NOBODY), Number(NOBODY));
      const attack = [
        "id -u",
        "cat .env; echo cat=$?",
        "umount .env 2>/dev/null; echo umount=$?",
        "unshare --map-root-user --mount sh -c 'umount .env 2>/dev/null; cat .env' 2>/dev/null; echo nested=$?",
        "cat /proc/1/environ >/dev/null 2>&1; echo setup-environ=$?",
        "echo made > made.txt && cat made.txt",
      ].join("; ");
      const script = `requestExecPermission(["sh"], (p) => { const r = p.exec("sh", ["-c", ${lit(attack)}]); println(r.exitCode); println(r.stdout); });\n`;
      const child = spawn(SETPRIV, [...AS_NOBODY, process.execPath, tacitBin, "run", "--no-check", "--confine-commands", "--command-permissions", "sh", "-"], {
        cwd: project,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, TACIT_HOME: tacitHome },
        stdio: ["pipe", "pipe", "pipe"],
      });
      const r = await collectedRun(child, script);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain(canary);
      const lines = r.stdout.split("\n");
      // It ran, as nobody (not as root of a namespace), and wrote in its root as ever.
      expect(lines.slice(0, 2)).toEqual(["0", NOBODY]);
      expect(lines).toContain("made");
      expect(readFileSync(path.join(project, "made.txt"), "utf8")).toBe("made\n");
      // The cover shows nothing, and neither umount nor a user namespace of its own lifts it.
      expect(lines).toContain("cat=0");
      expect(lines).toContain("nested=0");
      expect(lines.find((line) => line.startsWith("umount="))).not.toBe("umount=0");
      // The setup's shell is out of its reach.
      expect(lines.find((line) => line.startsWith("setup-environ="))).not.toBe("setup-environ=0");
    } finally {
      cleanup();
    }
  });
});
