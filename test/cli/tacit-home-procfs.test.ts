// tacit's home named through /proc: /proc/self/cwd/x is absolute, but it is the working directory's
// x (the project, where scripts write) and another place in each process tacit starts, as a relative
// home was (refused since 4d65fe7). Named in /proc outright, through XDG_CONFIG_HOME or HOME, or
// through a link that leads into /proc: each refused before anything runs or is made there.

import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-home-procfs-");
afterAll(cleanup);

/** A project of its own: what the run may have made in it is all that is there besides s.ts. */
function project(name: string): string {
  const cwd = path.join(dir, name);
  mkdirSync(cwd);
  writeFileSync(path.join(cwd, "s.ts"), `println("ran");\n`);
  return cwd;
}

describe.concurrent("a tacit home that leads into /proc", () => {
  const cases: Array<{ title: string; set: (cwd: string) => Record<string, string>; home: string; fix: string }> = [
    { title: "TACIT_HOME=/proc/self/cwd/home", set: () => ({ TACIT_HOME: "/proc/self/cwd/home" }), home: "/proc/self/cwd/home", fix: "or unset it to use" },
    {
      title: "XDG_CONFIG_HOME=/proc/self/cwd (no TACIT_HOME)",
      set: () => ({ TACIT_HOME: "", XDG_CONFIG_HOME: "/proc/self/cwd" }),
      home: "/proc/self/cwd/tacit",
      fix: "or unset XDG_CONFIG_HOME",
    },
    {
      title: "HOME=/proc/self/cwd (neither TACIT_HOME nor XDG_CONFIG_HOME)",
      set: () => ({ TACIT_HOME: "", XDG_CONFIG_HOME: "", HOME: "/proc/self/cwd" }),
      home: "/proc/self/cwd/.config/tacit",
      fix: "Set TACIT_HOME to an absolute path of a directory of your own outside /proc",
    },
    {
      title: "TACIT_HOME through a link that leads to /proc/self/cwd",
      set: (cwd) => {
        const link = path.join(cwd, "..", `${path.basename(cwd)}-link`);
        symlinkSync("/proc/self/cwd", link);
        return { TACIT_HOME: path.join(link, "home") };
      },
      home: "-link/home",
      fix: "or unset it to use",
    },
  ];
  for (const [i, { title, set, home, fix }] of cases.entries()) {
    it(`${title}: refused (exit 2) with what to set instead; the script does not run and nothing is made in the project`, async () => {
      const cwd = project(`case-${i}`);
      const r = await runCli(["run", "--no-check", "s.ts"], { cwd, env: { ...env, ...set(cwd) } });
      expect(r.stdout).toBe("");
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("tacit: tacit's home would be ");
      expect(r.stderr).toContain(home);
      expect(r.stderr).toMatch(/which (?:is in \/proc|is reached through a link into \/proc)/);
      expect(r.stderr).toContain(fix);
      expect(readdirSync(cwd)).toEqual(["s.ts"]);
    });
  }

  it("a home elsewhere is taken as before: the script runs", async () => {
    const cwd = project("elsewhere");
    const r = await runCli(["run", "--no-check", "s.ts"], { cwd, env });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("ran\n");
    expect(existsSync(path.join(cwd, "home"))).toBe(false);
  });
});
