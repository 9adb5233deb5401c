// The project's package.json (there and in each directory above the one tacit starts in) is
// read on the host's main thread at a script's first write, to find the bin directory it may
// name (launch-files.ts). It was read with readFileSync: a package.json that is a FIFO made
// the open wait for a writer forever, and a link to /dev/zero was read without end, so the
// host hung (the time limit, kept on that thread, never came). It is now read as a write
// reads it: a regular file only, opened without blocking, at most 1 MiB.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { realTempDir } from "./fixtures.js";

let base: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-files-launch-kinds-"));
});
afterAll(() => cleanup());

const WRITE = 'requestFileSystem(".", (fs) => { fs.access("out.txt").write("x"); println("wrote"); });';

const kinds: Array<[string, (file: string) => void]> = [
  ["a FIFO", (file) => execFileSync("mkfifo", [file])],
  ["a link to /dev/zero", (file) => symlinkSync("/dev/zero", file)],
  ["a directory", (file) => mkdirSync(file)],
];

describe("a project package.json that is not a regular file", () => {
  for (const [kind, make] of kinds) {
    for (const where of ["in the start directory", "in a directory above it"] as const) {
      it(`${kind} ${where}: a script's write goes through within the time limit, and the host does not hang`, async () => {
        const dir = path.join(base, `${kind.replace(/\W+/g, "-")}-${where === "in the start directory" ? "here" : "above"}`);
        const cwd = where === "in the start directory" ? dir : path.join(dir, "project");
        mkdirSync(cwd, { recursive: true });
        make(path.join(dir, "package.json"));
        // Ended with 0 and "wrote": the write went through within the 5 s limit (past it, the
        // host kills the script: 124). A host held on its main thread never ends at all (the
        // limit's timer cannot fire there), and the vitest timeout fails the test (runCli kills
        // the run when the test ends).
        const r = await runCli(["run", "--exec-timeout-ms", "5000", "-"], { cwd, input: WRITE });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe("wrote\n");
        expect(existsSync(path.join(cwd, "out.txt"))).toBe(true);
      }, 30_000);
    }
  }
});
