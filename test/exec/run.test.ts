// requestExecPermission end to end, through the real CLI with real processes: arguments
// reach the program verbatim (no shell), stdin, exit codes and output, a missing program,
// the child's environment, its working directory, and the scope's lifetime.

import { existsSync, mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ATTEMPT_PRELUDE,
  at,
  attemptOf,
  attempts,
  expectRefused,
  lit,
  makeCanary,
  makeExecutable,
  realTempDir,
  tacit,
  writeTree,
} from "./fixtures.js";
import { runCli } from "../helpers.js";

let root: string;
let outside: string;
const cleanups: Array<() => void> = [];

beforeAll(() => {
  let cleanup: () => void;
  ({ dir: root, cleanup } = realTempDir("tacit-exec-run-"));
  cleanups.push(cleanup);
  ({ dir: outside, cleanup } = realTempDir("tacit-exec-outside-"));
  cleanups.push(cleanup);
  writeTree(root, {
    "sub/deeper/keep.txt": "x",
    escape: { symlink: outside },
  });
});
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

type ExecResult = { exitCode: number; stdout: string; stderr: string };

describe("no shell", () => {
  it("passes every argument to the program verbatim and runs nothing else", async () => {
    const dir = path.join(root, "noshell");
    mkdirSync(dir);
    const tricky = [
      "a; touch MARK_SEMI",
      "b | touch MARK_PIPE",
      "$(touch MARK_SUBST)",
      "`touch MARK_BACKTICK`",
      "line1\ntouch MARK_NEWLINE",
      "x && touch MARK_AND",
      "y || touch MARK_OR",
      "> REDIR_GT",
      ">REDIR_GT2",
      "2>REDIR_ERR",
      ">> REDIR_APPEND",
      "< /etc/hostname",
      "*",
      "$HOME ${PATH}",
      "'single' \"double\" \\back",
      "",
      "  spaced  ",
      "-n",
    ];
    const script = `${ATTEMPT_PRELUDE}
const tricky: string[] = ${JSON.stringify(tricky)};
requestExecPermission(["printf", "echo"], (proc) => {
  attempt("printf", () => proc.exec("printf", ["%s\\\\0", ...tricky], { cwd: "noshell" }));
  attempt("echo redirect", () => proc.exec("echo", ["out", ">", "REDIR_SEPARATE", ";", "touch", "MARK_SEPARATE"], { cwd: "noshell" }));
  attempt("echo $()", () => proc.execOutput("echo", ["$(touch MARK_OUTPUT)", "\`touch MARK_OUTPUT2\`"]));
});
`;
    const r = await tacit(root, script, ["--command-permissions", "printf,echo"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);

    const printf = attemptOf(found, "printf");
    expect(printf.status, JSON.stringify(printf.value)).toBe("ok");
    const result = printf.value as ExecResult;
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    // printf "%s\0" prints each argument followed by a NUL: the split gives them back exactly.
    expect(result.stdout.split("\0").slice(0, -1)).toEqual(tricky);

    expect(attemptOf(found, "echo redirect")).toEqual({
      status: "ok",
      value: { exitCode: 0, stdout: "out > REDIR_SEPARATE ; touch MARK_SEPARATE\n", stderr: "" },
    });
    expect(attemptOf(found, "echo $()")).toEqual({ status: "ok", value: "$(touch MARK_OUTPUT) `touch MARK_OUTPUT2`\n" });

    // Nothing was created, neither where the programs ran nor in the working directory.
    expect(readdirSync(dir)).toEqual([]);
    expect(readdirSync(root).sort()).toEqual(["escape", "noshell", "sub"]);
  });
});

describe("input, exit codes and output", () => {
  it("feeds input to stdin (empty without it), returns non-zero exits as results, and says when a program is not on PATH", async () => {
    // A program by the missing name sits in the working directory: it must not be the one run.
    const decoy = "tacit-no-such-program-4242";
    writeFileSync(path.join(root, decoy), `#!/bin/sh\ntouch ${path.join(root, "DECOY_RAN")}\n`);
    makeExecutable(path.join(root, decoy));
    try {
      const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["cat", "false", "true", "printf", ${lit(decoy)}], (proc) => {
  attempt("cat input", () => proc.exec("cat", [], { input: "hello\\n" }));
  attempt("cat unicode input", () => proc.exec("cat", [], { input: "ümlaut ✓\\nno newline" }));
  attempt("cat no input", () => proc.exec("cat"));
  attempt("cat empty args", () => proc.exec("cat", []));
  attempt("false", () => proc.exec("false"));
  attempt("true", () => proc.exec("true"));
  attempt("stderr and exit 1", () => proc.exec("cat", ["tacit-missing-file"]));
  attempt("execOutput", () => proc.execOutput("printf", ["%s-%s", "a", "b"]));
  attempt("execOutput no args", () => proc.execOutput("true"));
  attempt("missing program", () => proc.exec(${lit(decoy)}));
});
`;
      const r = await tacit(root, script, ["--command-permissions", "cat,false,true,printf,tacit-no-such-*"]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const found = attempts(r.stdout);
      expect(attemptOf(found, "cat input")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "hello\n", stderr: "" } });
      expect(attemptOf(found, "cat unicode input")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "ümlaut ✓\nno newline", stderr: "" } });
      expect(attemptOf(found, "cat no input")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "", stderr: "" } });
      expect(attemptOf(found, "cat empty args")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "", stderr: "" } });
      expect(attemptOf(found, "false")).toEqual({ status: "ok", value: { exitCode: 1, stdout: "", stderr: "" } });
      expect(attemptOf(found, "true")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "", stderr: "" } });
      const failed = attemptOf(found, "stderr and exit 1");
      expect(failed.status).toBe("ok");
      expect((failed.value as ExecResult).exitCode).toBe(1);
      expect((failed.value as ExecResult).stdout).toBe("");
      expect((failed.value as ExecResult).stderr).toMatch(/tacit-missing-file: No such file or directory/);
      expect(attemptOf(found, "execOutput")).toEqual({ status: "ok", value: "a-b" });
      expect(attemptOf(found, "execOutput no args")).toEqual({ status: "ok", value: "" });

      const missing = attemptOf(found, "missing program");
      expect(missing.status, JSON.stringify(missing.value)).toBe("Error");
      expect(missing.value).toMatch(/not found on (the host's )?PATH/);
      expect(missing.value).toContain(decoy);
      expect(existsSync(path.join(root, "DECOY_RAN")), "the program in the working directory ran").toBe(false);
    } finally {
      rmSync(path.join(root, decoy), { force: true });
    }
  });
});

describe("arguments the system will not take", () => {
  it("an argument longer than the kernel takes is an error the script can catch, saying what to do, and the evaluation goes on", async () => {
    // spawn throws E2BIG at once rather than emitting it: this ended the evaluation as a host
    // that failed to answer (a protocol violation), with nothing the agent could act on.
    const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["true"], (proc) => {
  attempt("too long", () => proc.exec("true", ["x".repeat(200 * 1024)]));
  attempt("after", () => proc.exec("true"));
});
`;
    const r = await tacit(root, script, ["--command-permissions", "true"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    const tooLong = attemptOf(found, "too long");
    expect(tooLong.status).toBe("Error");
    expect(tooLong.value).toContain('exec("true"): could not start: spawn E2BIG');
    expect(tooLong.value).toContain("Pass long data on standard input (the input option) or in a file");
    expect(attemptOf(found, "after")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "", stderr: "" } });
  });
});

describe("environment", () => {
  it("gives the child a minimal environment: no host secrets, no LD_*, a PATH of absolute directories", async () => {
    const canary = makeCanary();
    const keyCanary = makeCanary();
    const script = `
requestExecPermission(["printenv"], (proc) => {
  const r = proc.exec("printenv");
  println(JSON.stringify(r));
});
`;
    const r = await tacit(root, script, ["--command-permissions", "printenv"], {
      TACIT_TEST_SECRET: canary,
      OPENAI_API_KEY: keyCanary,
      AWS_SECRET_ACCESS_KEY: keyCanary,
      LD_LIBRARY_PATH: "/nonexistent-tacit-test-ld",
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(canary);
    expect(r.stdout).not.toContain(keyCanary);
    const result = JSON.parse(r.stdout) as ExecResult;
    expect(result.exitCode).toBe(0);
    const names = result.stdout.split("\n").filter((l) => l !== "").map((l) => l.slice(0, l.indexOf("=")));
    expect(names).not.toContain("TACIT_TEST_SECRET");
    expect(names).not.toContain("OPENAI_API_KEY");
    expect(names).not.toContain("AWS_SECRET_ACCESS_KEY");
    expect(names.filter((n) => n.startsWith("LD_"))).toEqual([]);
    const pathLine = result.stdout.split("\n").find((l) => l.startsWith("PATH="));
    expect(pathLine, "PATH is set").toBeDefined();
    const dirs = pathLine!.slice("PATH=".length).split(":");
    expect(dirs.length).toBeGreaterThan(0);
    for (const dir of dirs) expect(path.isAbsolute(dir), `PATH entry "${dir}"`).toBe(true);
  });

  // tacit finds a command's program on PATH's absolute entries only, but a command that runs
  // others by name (make, git's hooks and aliases, npm scripts) searched the relative and empty
  // ones it was given too, in its working directory: a file in the project could stand in for a
  // program it runs. An eleventh security review noted them passed on.
  it("passes on only PATH's absolute entries, in order: no '.', no empty entry, no relative directory", async () => {
    const script = `requestExecPermission(["printenv"], (proc) => print(proc.execOutput("printenv", ["PATH"])));\n`;
    const r = await tacit(root, script, ["--command-permissions", "printenv"], { PATH: `.:node_modules/.bin::/usr/bin:bin:/bin:` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("/usr/bin:/bin\n");
  });
});

describe("working directory", () => {
  it("runs in the cwd given (relative to the working directory), only inside the allowed roots", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["pwd"], (proc) => {
  attempt("relative", () => proc.exec("pwd", [], { cwd: "sub" }));
  attempt("dot", () => proc.exec("pwd", [], { cwd: "." }).stdout);
  attempt("dots inside", () => proc.exec("pwd", [], { cwd: "sub/deeper/.." }).stdout);
  attempt("absolute", () => proc.exec("pwd", [], { cwd: ${lit(at(root, "sub/deeper"))} }).stdout);
  attempt("parent", () => proc.exec("pwd", [], { cwd: ".." }));
  attempt("dots out", () => proc.exec("pwd", [], { cwd: "sub/../.." }));
  attempt("absolute outside", () => proc.exec("pwd", [], { cwd: ${lit(outside)} }));
  attempt("filesystem root", () => proc.exec("pwd", [], { cwd: "/" }));
  attempt("symlink out", () => proc.exec("pwd", [], { cwd: "escape" }));
});
`;
    const r = await tacit(root, script, ["--command-permissions", "pwd"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "relative")).toEqual({ status: "ok", value: { exitCode: 0, stdout: `${at(root, "sub")}\n`, stderr: "" } });
    expect(attemptOf(found, "dot")).toEqual({ status: "ok", value: `${root}\n` });
    expect(attemptOf(found, "dots inside")).toEqual({ status: "ok", value: `${at(root, "sub")}\n` });
    expect(attemptOf(found, "absolute")).toEqual({ status: "ok", value: `${at(root, "sub/deeper")}\n` });
    expectRefused(found, ["parent", "dots out", "absolute outside", "filesystem root", "symlink out"]);
  });

  it("follows --allowed-roots: a root elsewhere is usable, the working directory then is not", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["pwd"], (proc) => {
  attempt("allowed, relative", () => proc.exec("pwd", [], { cwd: "sub" }).stdout);
  attempt("allowed, below", () => proc.exec("pwd", [], { cwd: "sub/deeper" }).stdout);
  attempt("other root", () => proc.exec("pwd", [], { cwd: ${lit(outside)} }).stdout);
  attempt("working directory", () => proc.exec("pwd", [], { cwd: "." }));
  attempt("working directory, absolute", () => proc.exec("pwd", [], { cwd: ${lit(root)} }));
});
`;
    const r = await tacit(root, script, ["--command-permissions", "pwd", "--allowed-roots", `${at(root, "sub")},${outside}`]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "allowed, relative")).toEqual({ status: "ok", value: `${at(root, "sub")}\n` });
    expect(attemptOf(found, "allowed, below")).toEqual({ status: "ok", value: `${at(root, "sub/deeper")}\n` });
    expect(attemptOf(found, "other root")).toEqual({ status: "ok", value: `${realpathSync(outside)}\n` });
    expectRefused(found, ["working directory", "working directory, absolute"]);
  });
});

describe("scope", () => {
  it("revokes the permission when the block ends, refuses commands outside the scope's list, and is importable from tacit", async () => {
    const script = `import { requestExecPermission as requestExec, SecurityError as ImportedSecurityError } from "tacit";
${ATTEMPT_PRELUDE}
attempt("imported", () => requestExec(["printf"], (p) => p.execOutput("printf", ["imported"])));
attempt("imported SecurityError is the global", () => ImportedSecurityError === SecurityError);
attempt("returns the block's value", () => requestExecPermission(["printf"], () => 42));

const leaked = requestExecPermission(["printf"], (p) => p);
attempt("sync exec after", () => leaked.exec("printf", ["late"]));
attempt("sync execOutput after", () => leaked.execOutput("printf", ["late"]));

let thrownProc: ProcessPermission | null = null;
try {
  requestExecPermission(["printf"], (p) => { thrownProc = p; throw new Error("boom"); });
} catch {}
attempt("after a throwing block", () => thrownProc!.exec("printf", ["late"]));

const asyncProc = await requestExecPermission(["printf"], async (p) => {
  await new Promise((r) => setTimeout(r, 5));
  attempt("async during", () => p.execOutput("printf", ["during"]));
  return p;
});
attempt("async after", () => asyncProc.execOutput("printf", ["late"]));

requestExecPermission(["printf", "pwd"], (p) => {
  attempt("in the list", () => p.execOutput("printf", ["listed"]));
  attempt("not in the list", () => p.exec("echo", ["unlisted"]));
  attempt("not in the list, execOutput", () => p.execOutput("echo", ["unlisted"]));
});
`;
    const r = await tacit(root, script, ["--command-permissions", "printf,pwd,echo"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "imported")).toEqual({ status: "ok", value: "imported" });
    expect(attemptOf(found, "imported SecurityError is the global")).toEqual({ status: "ok", value: true });
    expect(attemptOf(found, "returns the block's value")).toEqual({ status: "ok", value: 42 });
    expectRefused(found, ["sync exec after", "sync execOutput after", "after a throwing block", "async after"], /outside its requestExecPermission scope/);
    expect(attemptOf(found, "async during")).toEqual({ status: "ok", value: "during" });
    expect(attemptOf(found, "in the list")).toEqual({ status: "ok", value: "listed" });
    expectRefused(found, ["not in the list", "not in the list, execOutput"], /echo/);
    for (const label of ["not in the list", "not in the list, execOutput"]) {
      // The refusal names the scope's list.
      expect(attemptOf(found, label).value, label).toMatch(/printf/);
      expect(attemptOf(found, label).value, label).toMatch(/pwd/);
    }
  });

  it("type-checks a refusal caught with the SecurityError imported from tacit: instanceof narrows it", async () => {
    // Type-checked (`tacit run` without --no-check): `typeof globalThis.SecurityError` typed it
    // any, so `e.message` after `e instanceof SecurityError` was TS18046 and the run exit 3.
    const r = await runCli(["run", "--command-permissions", "printf", "-"], {
      cwd: root,
      input: `import { requestExecPermission, SecurityError, println } from "tacit";
const described = (error: SecurityError): string => error.name;
requestExecPermission(["printf"], (proc) => {
  try {
    proc.exec("echo", ["unlisted"]);
  } catch (e) {
    if (e instanceof SecurityError) println(described(e), e.message.includes("echo"));
    else throw e;
  }
});
`,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("SecurityError true\n");
  });
});
