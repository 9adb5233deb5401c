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

import { chownSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lit, makeCanary, NOBODY, nobodyCanRunTacit, nobodysProject, realTempDir, tacitAsNobody } from "./fixtures.js";

describe("confined commands of a user who is not root", () => {
  it("run, as that user, with the covers on, which they cannot lift", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok, support.reason);
    const { dir, cleanup } = realTempDir("tacit-exec-non-root-");
    try {
      const where = nobodysProject(dir);
      const canary = makeCanary();
      const env = path.join(where.project, ".env");
      writeFileSync(env, `SECRET=${canary}\n`);
      chownSync(env, NOBODY, NOBODY);
      const attack = [
        "id -u",
        "cat .env; echo cat=$?",
        "umount .env 2>/dev/null; echo umount=$?",
        "unshare --map-root-user --mount sh -c 'umount .env 2>/dev/null; cat .env' 2>/dev/null; echo nested=$?",
        "cat /proc/1/environ >/dev/null 2>&1; echo setup-environ=$?",
        "echo made > made.txt && cat made.txt",
      ].join("; ");
      const script = `requestExecPermission(["sh"], (p) => { const r = p.exec("sh", ["-c", ${lit(attack)}]); println(r.exitCode); println(r.stdout); });\n`;
      const r = await tacitAsNobody(where, script, ["--confine-commands", "--command-permissions", "sh"]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain(canary);
      const lines = r.stdout.split("\n");
      // It ran, as nobody (not as root of a namespace), and wrote in its root as ever.
      expect(lines.slice(0, 2)).toEqual(["0", String(NOBODY)]);
      expect(lines).toContain("made");
      expect(readFileSync(path.join(where.project, "made.txt"), "utf8")).toBe("made\n");
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
