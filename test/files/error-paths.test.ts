// A file error names the path the script gave, never the host's own name for it: tacit opens
// files inside a verified directory as /proc/<its pid>/fd/N/name (fs/checked-open.ts), and an
// error Node reports with its own message named that path. A thirteenth security review wrote
// to a program that was running (ETXTBSY) and read "/proc/17264/fd/20/busy": tacit's pid and
// how it opens files.

import { spawn } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, realTempDir, writeTree } from "./fixtures.js";
import { runScript } from "../helpers.js";

const sleepProgram = ["/bin/sleep", "/usr/bin/sleep"].find((file) => existsSync(file));

describe.skipIf(sleepProgram === undefined || process.platform !== "linux")("a file error's message", () => {
  let root: string;
  let cleanup: () => void;
  let running: ReturnType<typeof spawn>;

  beforeAll(async () => {
    ({ dir: root, cleanup } = realTempDir("tacit-error-paths-"));
    // A program that runs while the script writes to it: the kernel refuses (ETXTBSY), an error
    // tacit has no words of its own for.
    copyFileSync(sleepProgram!, path.join(root, "busy"));
    running = spawn(path.join(root, "busy"), ["60"], { stdio: "ignore" });
    await new Promise((resolve) => running.once("spawn", resolve));
  });
  afterAll(() => {
    running.kill("SIGKILL");
    cleanup();
  });

  it("names the path the script gave and what went wrong, not /proc/<tacit's pid>/fd/N/…", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("write", () => fs.access("busy").write("x"));
  attempt("append", () => fs.access("./busy").append("x"));
  attempt("writeClassified", () => fs.writeClassified("busy", classify("x")));
});
`;
    const r = await runScript(script, ["--quiet", "--classified-paths", "busy"], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/\/proc\//);
    const found = attempts(r.stdout);
    for (const label of ["write", "append", "writeClassified"]) {
      const attempt = attemptOf(found, label);
      expect(attempt.status, label).toBe("Error");
      expect(attempt.value, label).toBe(`${path.join(root, "busy")}: text file is busy (ETXTBSY)`);
    }
  }, 30_000);
});

describe("a link that loops outside the scope", () => {
  let base: string;
  let cleanup: () => void;

  beforeAll(() => {
    ({ dir: base, cleanup } = realTempDir("tacit-error-paths-loop-"));
    // outside/a -> b -> a: a loop the scope's link leads into, in a directory the script may not name.
    writeTree(base, { "root/ordinary.txt": "x\n", "outside/a": { symlink: "b" }, "outside/b": { symlink: "a" }, "root/out": { symlink: path.join(base, "outside/a") } });
  });
  afterAll(() => cleanup());

  it("fails with an error that names the path the script gave, never where the link leads", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("out").read());
  attempt("readBelow", () => fs.access("out/x").read());
  attempt("write", () => fs.access("out").write("x"));
  attempt("writeBelow", () => fs.access("out/x").write("x"));
  attempt("mkdir", () => fs.access("out/d").mkdir());
  attempt("size", () => fs.access("out").size);
  attempt("children", () => fs.access("out").children().length);
});
`;
    const root = path.join(base, "root");
    const r = await runScript(script, ["--quiet"], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr, "an error named where the link leads").not.toContain(path.join(base, "outside"));
    const found = attempts(r.stdout);
    for (const [label, named] of [["read", "out"], ["readBelow", "out/x"], ["write", "out"], ["writeBelow", "out/x"], ["mkdir", "out/d"], ["size", "out"], ["children", "out"]]) {
      const attempt = attemptOf(found, label!);
      // Refused as any link out of the scope, whatever is there: "too many symbolic links" told a loop outside from the rest.
      expect(attempt.status, label).toBe("SecurityError");
      expect(attempt.value, label).toBe(
        `${path.join(root, named!)}: resolves (through a symbolic link) to a place outside this file system scope (${root}); links out of the scope are not followed.`,
      );
    }
  }, 30_000);
});
