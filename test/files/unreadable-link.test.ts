// A link that lstat shows and readlink cannot read, every time: /proc/<pid>/exe of a zombie
// (or of a kernel thread) reads ENOENT however often it is asked. Path resolution looks again
// at a link that readlink finds gone (ab1fc00: it was swapped for a directory in between), up
// to 40 times, and then said "it kept changing while it was being resolved …; try again once
// nothing is changing the tree" of a link that never changed: advice that can never work. Such
// a link fails as it did before links were looked at again, with its own error. Through the
// real CLI, with a real Deno and a real zombie process.

import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, readlinkSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, realTempDir, tacit } from "./fixtures.js";

/** runner/fs/protected-paths.ts's words for procfs, written out so the test stands without the change. */
const PROCFS_REFUSAL =
  "scripts can neither read nor write anything there, whatever the allowed roots say: it shows every process as the host " +
  "sees it, tacit's own included (its environment with the LLM API key, its open files such as the secure output and the " +
  "audit log, its memory), and some of its files change how the system runs. Work with other files; to learn about a " +
  "process, run a command that reports it (requestExecPermission), if the operator permits one";

let root: string;
let cleanup: () => void;
/** A process that started a child and never reaps it: the child stays a zombie while it lives. */
let parent: ChildProcess;
let zombie: number;

beforeAll(async () => {
  ({ dir: root, cleanup } = realTempDir("tacit-unreadable-link-"));
  parent = spawn("sh", ["-c", "sleep 0 & exec sleep 120"], { stdio: "ignore" });
  // The shell's child exits at once; `sleep`, which the shell became, never waits for it.
  for (let tries = 0; ; tries++) {
    const children = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, "utf8").trim();
    const pid = Number(children.split(" ")[0]);
    if (pid > 0 && readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z")) {
      zombie = pid;
      break;
    }
    if (tries > 200) throw new Error("no zombie came to be");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // What the link is to tacit: lstat shows a link, readlink fails, every time.
  expect(() => readlinkSync(`/proc/${zombie}/exe`)).toThrow(/ENOENT/);
  symlinkSync(`/proc/${zombie}/exe`, path.join(root, "zombie-exe"));
});

afterAll(() => {
  parent?.kill("SIGKILL");
  cleanup?.();
});

describe("a link readlink can never read", () => {
  it("fails with its own error, not as a path that kept changing", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("exists", () => fs.access("zombie-exe").exists);
  attempt("read", () => fs.access("zombie-exe").read());
  attempt("below", () => fs.access("zombie-exe/x").exists);
});
requestFileSystem("/", (fs) => {
  attempt("proc", () => fs.access(${lit(`/proc/${zombie}/exe`)}).exists);
});`;
    const r = await tacit(root, script, ["--allowed-roots", `${root},/`]);
    const found = attempts(r.stdout);
    for (const label of ["exists", "read", "below", "proc"]) {
      const { status, value } = attemptOf(found, label);
      expect(status, `${label}: ${JSON.stringify(value)}`).not.toBe("ok");
      expect(String(value), label).not.toMatch(/kept changing|try again/);
    }
    // The link leads into /proc: refused before it is followed (as /proc itself is), so the
    // zombie's exe is never read, and nothing tells a zombie from another process.
    for (const label of ["exists", "read", "below"]) {
      expect(attemptOf(found, label).status, label).toBe("SecurityError");
      expect(String(attemptOf(found, label).value), label).toMatch(/refused: a symbolic link on the way leads into the kernel's process file system \(procfs, mounted at \/proc\), and it was not followed/);
    }
  }, 60_000);
});

describe("a path named in /proc", () => {
  it("is refused before its links are read, the same for every process", async () => {
    // Resolved first, /proc/<zombie>/exe failed "no such file or directory" (and another
    // user's process "permission denied"), while a live process's or a missing pid's got the
    // procfs refusal: a script told zombies and kernel threads from other processes.
    const missing = 4_000_000; // above pid_max's ceiling (2^22): no such process
    const named = [`/proc/${zombie}/exe`, `/proc/${zombie}/exe/x`, `/proc/${zombie}/cwd`, `/proc/${parent.pid}/exe`, `/proc/${missing}/exe`, "/proc/2/exe"];
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem("/", (fs) => {
  for (const p of ${JSON.stringify(named)}) {
    attempt("exists " + p, () => fs.access(p).exists);
    attempt("read " + p, () => fs.access(p).read());
  }
});`;
    const r = await tacit(root, script, ["--allowed-roots", "/"]);
    const found = attempts(r.stdout);
    for (const p of named) {
      for (const op of ["exists", "read"]) {
        const { status, value } = attemptOf(found, `${op} ${p}`);
        expect(status, `${op} ${p}: ${JSON.stringify(value)}`).toBe("SecurityError");
        expect(String(value)).toBe(`${p}: refused: this is the kernel's process file system (procfs, mounted at /proc); ${PROCFS_REFUSAL}.`);
      }
    }
  }, 60_000);
});
