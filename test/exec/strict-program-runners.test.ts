// --strict and programs an eleventh review found running what a script chose (runner/exec/strict-denylist.ts),
// each tried for real through the CLI where the host has the program (skipped where it has not):
// - fstab-decode runs the command its arguments name (`fstab-decode /bin/sh -c CMD`), as env does;
// - glibc's mtrace gives its first argument to a shell (`env LD_TRACE_LOADED_OBJECTS=2 $prog |`):
//   `mtrace '/bin/true;CMD;#' /dev/null` ran CMD;
// - numpy's f2py evaluates the .f2py_f2cmap of its working directory as Python, a file the script writes
//   (lower-cased first: the command is given in hex);
// - pyvenv (the venv maker of Python 3.3 to 3.7, here a pyenv shim a .python-version the script
//   writes selects) empties any directory it is given with --clear, as virtualenv does.

import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

/** A project (the working directory and only root), a home, and a directory outside both. */
function layout(ctx: TestContext, program: string): { project: string; home: string; outside: string } {
  ctx.skip(findOnPath(program) === null, `${program} is not installed here`);
  const { dir, cleanup } = realTempDir("tacit-strict-runners-");
  ctx.onTestFinished(cleanup);
  writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/keep.txt": "kept\n" });
  return { project: path.join(dir, "project"), home: path.join(dir, "home"), outside: path.join(dir, "outside") };
}

/** The attempt `label` was refused under --strict, naming the program. */
function expectStrictRefusal(stdout: string, label: string, program: string): void {
  const { status, value } = attemptOf(attempts(stdout), label);
  expect(status, `${label}: ${JSON.stringify(value)}`).toBe("SecurityError");
  expect(String(value)).toContain(`"${program}" is refused under --strict`);
}

/** A pyenv version (the name of its directory) that has pyvenv, where pyvenv on PATH is a pyenv shim; else null. */
function pyenvVersionWithPyvenv(): string | null {
  const shim = findOnPath("pyvenv");
  if (shim === null || path.basename(path.dirname(shim)) !== "shims") return null;
  const versions = path.join(path.dirname(path.dirname(shim)), "versions");
  if (!existsSync(versions)) return null;
  return readdirSync(versions).find((version) => existsSync(path.join(versions, version, "bin", "pyvenv"))) ?? null;
}

describe("--strict, programs that run what a script chose", () => {
  it("refuses fstab-decode, which runs the command its arguments name", async (ctx) => {
    const { project, home, outside } = layout(ctx, "fstab-decode");
    const proof = path.join(outside, "FSTAB_DECODE_RAN");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
attempt("fstab-decode", () => requestExecPermission(["fstab-decode"], (proc) => proc.exec("fstab-decode", ["/bin/sh", "-c", ${lit(`touch ${proof}`)}])));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(proof)).toBe(false);
    expectStrictRefusal(r.stdout, "fstab-decode", "fstab-decode");
  });

  it("refuses mtrace, which gives its first argument to a shell", async (ctx) => {
    const { project, home, outside } = layout(ctx, "mtrace");
    const proof = path.join(outside, "MTRACE_RAN");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
attempt("mtrace", () => requestExecPermission(["mtrace"], (proc) => proc.exec("mtrace", [${lit(`/bin/true;touch ${proof};#`)}, "/dev/null"])));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(proof)).toBe(false);
    expectStrictRefusal(r.stdout, "mtrace", "mtrace");
  });

  it("refuses f2py, which evaluates the .f2py_f2cmap of its working directory as Python", async (ctx) => {
    const { project, home, outside } = layout(ctx, "f2py");
    const proof = path.join(outside, "F2PY_RAN");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  fs.access(".f2py_f2cmap").write(${lit(`__import__('os').system(bytes.fromhex('${Buffer.from(`touch ${proof}`).toString("hex")}').decode())`)});
  fs.access("x.f90").write("subroutine s\\nend subroutine s\\n");
});
attempt("f2py", () => requestExecPermission(["f2py"], (proc) => proc.exec("f2py", ["-h", "x.pyf", "x.f90"], { timeoutMs: 20000 })));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(proof)).toBe(false);
    expectStrictRefusal(r.stdout, "f2py", "f2py");
  });

  it("refuses pyvenv, whose --clear empties any directory", async (ctx) => {
    const { project, home, outside } = layout(ctx, "pyvenv");
    const version = pyenvVersionWithPyvenv();
    ctx.skip(version === null, "no pyenv version here has pyvenv");
    const victim = path.join(outside, "victim");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "important.txt"), "keep me\n");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => fs.access(".python-version").write(${lit(`${version}\n`)}));
attempt("pyvenv", () => requestExecPermission(["pyvenv"], (proc) => proc.exec("pyvenv", ["--clear", "--without-pip", ${lit(victim)}], { timeoutMs: 20000 })));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(victim, "important.txt"))).toBe(true);
    expectStrictRefusal(r.stdout, "pyvenv", "pyvenv");
  });
});
