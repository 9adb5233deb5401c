// --confine-commands covers the hidden entries of the home directory (~/.ssh, ~/.aws, …), found by
// listing the home (runner/exec/confinement.ts, masks). A home that tacit's user may enter but not
// list (mode 0100, 0311) was taken for one without hidden entries, and a confined `cat
// ~/.ssh/id_rsa`, which runs as that user, read the key by its name. Such a home is now covered
// whole, and where it holds an allowed root the command is refused, saying why.
//
// tacit is started as nobody (root lists every directory), which only root can do: the suite runs
// as root here; elsewhere the test says so and skips. Under /var/tmp: a confined command's /tmp is
// private, which would hide the home and prove nothing.

import { chmodSync, chownSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lit, makeCanary, NOBODY, nobodyCanRunTacit, nobodysProject, realTempDir, tacitAsNobody } from "./fixtures.js";

/** nobody's project and home under /var/tmp, the home holding ~/.ssh/id_rsa (a canary) and left mode 0100; `project` moves the project into the home. */
function layout(project: "beside" | "in the home"): { where: ReturnType<typeof nobodysProject>; canary: string; cleanup: () => void } {
  const { dir, cleanup } = realTempDir("tacit-exec-unlistable-home-", "/var/tmp");
  const made = nobodysProject(dir);
  const where = project === "beside" ? made : { ...made, project: path.join(made.home, "project") };
  if (project === "in the home") {
    mkdirSync(where.project);
    chownSync(where.project, NOBODY, NOBODY);
  }
  const canary = makeCanary();
  const ssh = path.join(where.home, ".ssh");
  mkdirSync(ssh);
  writeFileSync(path.join(ssh, "id_rsa"), `${canary}\n`);
  for (const p of [ssh, path.join(ssh, "id_rsa")]) chownSync(p, NOBODY, NOBODY);
  chmodSync(where.home, 0o100);
  return {
    where,
    canary,
    cleanup: () => {
      chmodSync(where.home, 0o700);
      cleanup();
    },
  };
}

const readKey = (home: string): string =>
  `requestExecPermission(["sh"], (p) => { const r = p.exec("sh", ["-c", ${lit(`cat ${home}/.ssh/id_rsa; echo read=$?`)}]); println("sh", r.exitCode); println(r.stdout); });\n`;

describe.concurrent("a confined command of a user whose home directory tacit cannot list", () => {
  it("cannot open the home's hidden entries by name", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok, support.reason);
    const { where, canary, cleanup } = layout("beside");
    try {
      const r = await tacitAsNobody(where, readKey(where.home), ["--confine-commands", "--command-permissions", "sh"]);
      expect(r.stdout + r.stderr).not.toContain(canary);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.split("\n");
      // It ran, and found no key there: the home is covered by an empty directory.
      expect(lines).toContain("sh 0");
      expect(lines.find((line) => line.startsWith("read="))).not.toBe("read=0");
    } finally {
      cleanup();
    }
  });

  it("is refused, saying why, where that home holds the allowed root", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok, support.reason);
    const { where, canary, cleanup } = layout("in the home");
    try {
      const r = await tacitAsNobody(where, readKey(where.home), ["--confine-commands", "--command-permissions", "sh"]);
      expect(r.stdout + r.stderr).not.toContain(canary);
      expect(r.stdout + r.stderr).toContain(`tacit may not list the home directory ${where.home}`);
      expect(r.stdout).not.toContain("sh 0");
    } finally {
      cleanup();
    }
  });
});
