// --confine-commands and a directory in the roots that tacit may not list (runner/exec/confinement.ts,
// listedEntries). The walk that finds the classified files to cover took such a directory for an
// empty one, but the command is not kept out of it: it runs as the same user, who may `chmod` a
// directory of their own back, and may open a name it knows in a directory it can enter without
// listing it (mode 0711). As a user who is not root, a script made `locked/` mode 000 with one
// confined `chmod`, and the next confined `sh` made it readable again and printed `locked/.env`;
// a `cat drop/.env` in a 0711 directory of another user's printed that one. Such a directory is now
// covered whole, as a classified one, so nothing in it is reachable.
//
// tacit is started as nobody (root lists every directory), which only root can do: the suite runs
// as root here; elsewhere the test says so and skips.

import { chmodSync, chownSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { lit, makeCanary, NOBODY, nobodyCanRunTacit, nobodysProject, realTempDir, tacitAsNobody } from "./fixtures.js";

describe("a confined command of a user who is not root, and a directory tacit cannot list", () => {
  it("cannot read the classified files in it, by making it listable again or by their names", async (ctx) => {
    const support = nobodyCanRunTacit();
    ctx.skip(!support.ok, support.reason);
    const { dir, cleanup } = realTempDir("tacit-exec-unlistable-");
    try {
      const where = nobodysProject(dir);
      const canaries = { locked: makeCanary(), drop: makeCanary() };
      // nobody's own directory, with its .env: the script makes it unlistable itself.
      const locked = path.join(where.project, "locked");
      mkdirSync(locked);
      writeFileSync(path.join(locked, ".env"), `SECRET=${canaries.locked}\n`);
      for (const p of [locked, path.join(locked, ".env")]) chownSync(p, NOBODY, NOBODY);
      // Another user's directory nobody may enter but not list, with a .env anyone may read by name.
      const drop = path.join(where.project, "drop");
      mkdirSync(drop);
      writeFileSync(path.join(drop, ".env"), `SECRET=${canaries.drop}\n`, { mode: 0o644 });
      chmodSync(drop, 0o711);
      const read = "chmod 700 locked; cat locked/.env; echo locked=$?; cat drop/.env; echo drop=$?";
      const script = `requestExecPermission(["chmod", "sh"], (p) => {
  println("chmod", p.exec("chmod", ["000", "locked"]).exitCode);
  const r = p.exec("sh", ["-c", ${lit(read)}]);
  println("sh", r.exitCode);
  println(r.stdout);
});
`;
      const r = await tacitAsNobody(where, script, ["--confine-commands", "--command-permissions", "chmod,sh"]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      for (const canary of Object.values(canaries)) expect(r.stdout).not.toContain(canary);
      const lines = r.stdout.split("\n");
      // Both commands ran: the first made the directory unlistable, the second found nothing to read.
      expect(lines).toContain("chmod 0");
      expect(lines).toContain("sh 0");
      expect(lines.find((line) => line.startsWith("locked="))).not.toBe("locked=0");
      expect(lines.find((line) => line.startsWith("drop="))).not.toBe("drop=0");
    } finally {
      chmodSync(path.join(dir, "project", "locked"), 0o700);
      cleanup();
    }
  });
});
