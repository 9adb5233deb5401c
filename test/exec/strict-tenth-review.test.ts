// --strict and what a tenth review found passing it (runner/exec/strict-denylist.ts), each tried
// for real through the CLI where the host has the program (skipped where it has not):
// - pg_buildext clean runs make over the Makefile of its working directory: the clean recipe of a
//   Makefile the script wrote ran, with make refused;
// - gpgcompose --copy FILE printed a file outside the allowed roots (and made ~/.gnupg);
// - gencmn -s / packed a file outside the roots, named in a list the script wrote, into a .dat in
//   the root, which the script read back;
// - gencat copied a credentials line of a file outside the roots into a catalog in the root, and
//   iconvconfig -o wrote a file outside the roots;
// - bashbug opened vim on its report, which took `:!CMD` from the command's input and ran it;
// - callgrind_annotate quoted each line of a file outside the roots as a malformed header, and
//   cg_annotate printed the lines of a source file that a profile the script wrote names.

import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { findOnPath } from "../../runner/exec/program-path.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

/** A project (the working directory and only root), a home, and a file outside both holding a canary. */
function layout(ctx: TestContext, program: string): { project: string; home: string; secret: string; canary: string } {
  ctx.skip(findOnPath(program) === null, `${program} is not installed here`);
  const { dir, cleanup } = realTempDir("tacit-strict-tenth-");
  ctx.onTestFinished(cleanup);
  const canary = makeCanary();
  writeTree(dir, { "project/readme.txt": "hello\n", "home/.keep": "", "outside/secret.txt": `SECRET=${canary}\n` });
  return { project: path.join(dir, "project"), home: path.join(dir, "home"), secret: path.join(dir, "outside", "secret.txt"), canary };
}

/** The attempt `label` was refused under --strict, naming the program. */
function expectStrictRefusal(stdout: string, label: string, program: string): void {
  const { status, value } = attemptOf(attempts(stdout), label);
  expect(status, `${label}: ${JSON.stringify(value)}`).toBe("SecurityError");
  expect(String(value)).toContain(`"${program}" is refused under --strict`);
}

describe("--strict, a tenth review", () => {
  it("refuses pg_buildext, which runs the Makefile of its working directory", async (ctx) => {
    const { project, home } = layout(ctx, "pg_buildext");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => fs.access("Makefile").write("clean:\\n\\ttouch MAKEFILE_RAN\\n"));
attempt("pg_buildext", () => requestExecPermission(["pg_buildext"], (proc) => proc.exec("pg_buildext", ["clean"])));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(project, "MAKEFILE_RAN"))).toBe(false);
    expectStrictRefusal(r.stdout, "pg_buildext", "pg_buildext");
  });

  it("refuses gpgcompose, whose --copy prints any file", async (ctx) => {
    const { project, home, secret, canary } = layout(ctx, "gpgcompose");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
attempt("gpgcompose", () => requestExecPermission(["gpgcompose"], (proc) => proc.exec("gpgcompose", ["--copy", ${lit(secret)}])));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    expect(existsSync(path.join(home, ".gnupg"))).toBe(false);
    expectStrictRefusal(r.stdout, "gpgcompose", "gpgcompose");
  });

  it("refuses gencmn, which copies any file into a data file in the roots", async (ctx) => {
    const { project, home, secret, canary } = layout(ctx, "gencmn");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => fs.access("list.txt").write(${lit(`${path.relative("/", secret)}\n`)}));
attempt("gencmn", () => requestExecPermission(["gencmn"], (proc) => proc.exec("gencmn", ["-d", ".", "-s", "/", "0", "list.txt"])));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    for (const name of readdirSync(project)) expect(readFileSync(path.join(project, name)).includes(canary), name).toBe(false);
    expectStrictRefusal(r.stdout, "gencmn", "gencmn");
  });

  it("refuses callgrind_annotate and cg_annotate, which print the lines of any file", async (ctx) => {
    const { project, home, secret, canary } = layout(ctx, "cg_annotate");
    ctx.skip(findOnPath("callgrind_annotate") === null, "callgrind_annotate is not installed here");
    writeFileSync(path.join(project, "profile.out"), `events: Ir\nfl=${secret}\nfn=main\n1 100\n`);
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
attempt("callgrind_annotate", () => requestExecPermission(["callgrind_annotate"], (proc) => proc.exec("callgrind_annotate", [${lit(secret)}])));
attempt("cg_annotate", () => requestExecPermission(["cg_annotate"], (proc) => proc.exec("cg_annotate", ["profile.out"])));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(canary);
    expectStrictRefusal(r.stdout, "callgrind_annotate", "callgrind_annotate");
    expectStrictRefusal(r.stdout, "cg_annotate", "cg_annotate");
  });

  it("refuses bashbug, which opens an editor that takes commands from its input", async (ctx) => {
    const { project, home } = layout(ctx, "bashbug");
    const proof = path.join(project, "EDITOR_RAN");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
attempt("bashbug", () => requestExecPermission(["bashbug"], (proc) => proc.exec("bashbug", [], { input: ${lit(`:!touch ${proof}\n:qa!\n`)}, timeoutMs: 5000 })));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(proof)).toBe(false);
    expectStrictRefusal(r.stdout, "bashbug", "bashbug");
  });

  it("refuses gencat and iconvconfig, which copy any file into the roots and write outside them", async (ctx) => {
    const { project, home, secret, canary } = layout(ctx, "gencat");
    ctx.skip(findOnPath("iconvconfig") === null, "iconvconfig is not installed here");
    writeFileSync(secret, `aws_secret_access_key = ${canary}\n`);
    const outside = path.join(path.dirname(secret), "written.cache");
    const r = await tacit(project, `${ATTEMPT_PRELUDE}
attempt("gencat", () => requestExecPermission(["gencat"], (proc) => proc.exec("gencat", ["out.cat", ${lit(secret)}])));
attempt("iconvconfig", () => requestExecPermission(["iconvconfig"], (proc) => proc.exec("iconvconfig", ["-o", ${lit(outside)}])));
`, ["--strict"], { HOME: home });
    expect(r.code, r.stderr).toBe(0);
    for (const name of readdirSync(project)) expect(readFileSync(path.join(project, name)).includes(canary), name).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expectStrictRefusal(r.stdout, "gencat", "gencat");
    expectStrictRefusal(r.stdout, "iconvconfig", "iconvconfig");
  });
});
