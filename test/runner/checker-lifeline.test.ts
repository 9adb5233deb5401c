// The type checker's lifeline (runner/checker-process.ts, with runner/exec/lifeline.ts): the
// checker's first shell runs nothing until the thread of tacit that spawned it has answered, and
// nothing at all once tacit's end is gone. tacit killed outright in the instant a check starts left
// processes on the way to the checker that had not yet asked to die with their parent, and a check
// written to take minutes ran on. That instant cannot be hit on purpose from outside, so here the
// checker's command is run as tacit runs it (the real setpriv, unshare, shell and tsc, as the user
// tacit would run it as), both ways: with the lifeline on fd 3 (tacit run, tacit check) and on
// stdin and stdout (tacit serve and repl, whose checker TypeScript's API starts with no other
// descriptor). tacit's end is played by this process. The CLI tests of tacit killed while its
// checker starts are in checker-killed-outright.test.ts.
//
// What shows that tsc ran: it compiles a project of its own, writing out/a.js.

import { type ChildProcess, spawn, spawnSync, type StdioOptions } from "node:child_process";
import { chmodSync, closeSync, existsSync, openSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHECKER_LIFELINE_FD, checkerCommand } from "../../runner/checker-process.js";
import { answerLifeline } from "../../runner/exec/lifeline.js";
import { IncrementalTypeChecker } from "../../runner/incremental-typecheck.js";
import { deadLifeline, realTempDir } from "../exec/fixtures.js";

let dir: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir, cleanup } = realTempDir("tacit-test-checker-lifeline-", "/var/tmp"));
  // Reachable by the unprivileged user a root tacit runs the checker as.
  chmodSync(dir, 0o755);
});
afterAll(() => cleanup());

/** A project tsc compiles to out/a.js, writable by whoever tacit runs the checker as; its tsc arguments and where a run leaves its mark. */
function project(): { cwd: string; args: string[]; ran: string } {
  const cwd = realTempDir("tacit-test-checker-project-", dir).dir;
  chmodSync(cwd, 0o777);
  writeFileSync(path.join(cwd, "a.ts"), "export const a: number = 1;\n");
  writeFileSync(path.join(cwd, "tsconfig.json"), JSON.stringify({ compilerOptions: { outDir: "out", target: "es2023", module: "esnext", types: [] }, files: ["a.ts"] }));
  return { cwd, args: ["-p", path.join(cwd, "tsconfig.json")], ran: path.join(cwd, "out", "a.js") };
}

describe("the one-shot checker's first shell (lifeline on fd 3)", () => {
  const stdio = (lifeline: number | "pipe"): StdioOptions => {
    const slots: StdioOptions = ["ignore", "pipe", "pipe", lifeline];
    expect(slots.length, "the lifeline's slot").toBe(CHECKER_LIFELINE_FD + 1);
    return slots;
  };

  it("runs nothing once tacit's end of the lifeline is gone", () => {
    const { cwd, args, ran } = project();
    const { file, args: argv } = checkerCommand(args, "descriptor");
    const lifeline = deadLifeline(dir);
    try {
      const r = spawnSync(file, argv, { cwd, encoding: "utf8", stdio: stdio(lifeline), timeout: 20_000 });
      expect(existsSync(ran), "tsc ran with tacit gone").toBe(false);
      expect(r.status, r.stderr).not.toBe(0);
    } finally {
      closeSync(lifeline);
    }
  });

  it("runs nothing while tacit's answer has not come, and nothing once tacit's end closes", async () => {
    const { cwd, args, ran } = project();
    const { file, args: argv } = checkerCommand(args, "descriptor");
    let child: ChildProcess | null = null;
    try {
      child = spawn(file, argv, { cwd, stdio: stdio("pipe") });
      const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
      const lifeline = child.stdio[CHECKER_LIFELINE_FD] as Readable;
      // The shell's question: it has started, after every request to die with its parent, and waits.
      const asked = await new Promise<string>((resolve) => lifeline.once("data", (chunk: Buffer) => resolve(chunk.toString())));
      expect(asked).toBe(".");
      await sleep(200);
      expect(existsSync(ran), "tsc ran before tacit answered").toBe(false);
      // As when tacit has gone before it answered: its end closes.
      lifeline.destroy();
      expect(await exited).not.toBe(0);
      expect(existsSync(ran), "tsc ran with tacit gone").toBe(false);
    } finally {
      child?.kill("SIGKILL");
    }
  });

  it("runs tsc once tacit answers (answerLifeline), as the one-shot check does", async () => {
    const { cwd, args, ran } = project();
    const { file, args: argv } = checkerCommand(args, "descriptor");
    const child = spawn(file, argv, { cwd, stdio: stdio("pipe") });
    answerLifeline(child.stdio[CHECKER_LIFELINE_FD] as Readable & Writable);
    const stderr: Buffer[] = [];
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk));
    // "close": Node saw every stream end, the lifeline's included.
    const status = await new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
    expect(status, Buffer.concat(stderr).toString()).toBe(0);
    expect(existsSync(ran), "tsc ran").toBe(true);
  });
});

describe("tacit serve's checker's first shell (lifeline on stdin and stdout)", () => {
  it("runs nothing where its stdin ends before an answer (tacit gone after it asked)", () => {
    const { cwd, args, ran } = project();
    const { file, args: argv } = checkerCommand(args, "stdio");
    const r = spawnSync(file, argv, { cwd, encoding: "utf8", input: "", timeout: 20_000 });
    expect(r.stdout, "its question, and nothing after it").toBe(".");
    expect(existsSync(ran), "tsc ran with tacit gone").toBe(false);
    expect(r.status, r.stderr).not.toBe(0);
  });

  it("runs nothing where no one reads its stdout any more (tacit gone before it asked)", () => {
    const { cwd, args, ran } = project();
    const { file, args: argv } = checkerCommand(args, "stdio");
    const gone = deadLifeline(dir);
    const answer = path.join(dir, `answer-${path.basename(cwd)}`);
    writeFileSync(answer, "\n");
    const answered = openSync(answer, "r");
    try {
      // Even with an answer waiting on stdin: the question could not be asked.
      const r = spawnSync(file, argv, { cwd, encoding: "utf8", stdio: [answered, gone, "pipe"], timeout: 20_000 });
      expect(existsSync(ran), "tsc ran with tacit gone").toBe(false);
      expect(r.status === 0, `status ${r.status}, signal ${r.signal}: ${r.stderr}`).toBe(false);
    } finally {
      closeSync(gone);
      closeSync(answered);
    }
  });

  it("runs tsc once its question is answered, the answer taken from stdin and nothing more", () => {
    const { cwd, args, ran } = project();
    const { file, args: argv } = checkerCommand(args, "stdio");
    const r = spawnSync(file, argv, { cwd, encoding: "utf8", input: "\n", timeout: 20_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(".");
    expect(existsSync(ran), "tsc ran").toBe(true);
  });

  it("is answered by the incremental checker (answerStdioLifeline), which then checks", () => {
    const checker = new IncrementalTypeChecker();
    try {
      expect(checker.check('const n: number = 1;\nprintln("one", n);\n')).toEqual({ ok: true, diagnostics: [] });
      const bad = checker.check("const s: string = 1;\n");
      expect(bad.diagnostics.map((d) => d.code)).toEqual(["TS2322"]);
    } finally {
      checker.close();
    }
  });
});
