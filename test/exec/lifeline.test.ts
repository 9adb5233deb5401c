// The lifeline (runner/exec/lifeline.ts): a command's first shell runs nothing once tacit's end of
// its lifeline is gone, and its watcher ends what the command started as soon as that end closes.
// tacit killed outright in the instant a command starts left processes on the way to it that had
// not yet asked to die with their parent, and the command ran on with no time limit. That instant
// cannot be hit on purpose from outside, so here each way a command is started (in a PID
// namespace, confined, and with no namespace at all) is run as the executor runs it, with the real
// unshare, mount and shell: with the lifeline's other end closed before it starts (a pipe with no
// reader, as once tacit has gone), held, and closed while the command runs. The CLI test of tacit
// killed while a command starts is in limits.test.ts.

import { type ChildProcess, execFileSync, spawn, spawnSync, type StdioOptions } from "node:child_process";
import { closeSync, constants, existsSync, openSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandConfinement, CONFINED_LIFELINE_FD } from "../../runner/exec/confinement.js";
import { behindLifeline, COMMAND_LIFELINE_FD, probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { ClassifiedPaths, DEFAULT_CLASSIFIED_PATHS } from "../../runner/fs/classified-paths.js";
import { killLive, leftAlive, livePrograms, realTempDir, uniqueSleep } from "./fixtures.js";

let dir: string;
let cleanup: () => void;
let made = 0;

beforeAll(() => {
  ({ dir, cleanup } = realTempDir("tacit-lifeline-", "/var/tmp"));
});
afterAll(() => cleanup());

/** A descriptor like tacit's lifeline once tacit has gone: the write end of a pipe nobody can read any more. */
function deadLifeline(): number {
  const fifo = path.join(dir, `lifeline-${++made}`);
  execFileSync("mkfifo", [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  closeSync(reader);
  return writer;
}

/** How the executor starts `/bin/sh args` one way: the program, its arguments, and the descriptors before the lifeline's slot. */
interface Started {
  program: string;
  args: string[];
  before: Array<number | "pipe">;
  close: () => void;
}

interface Way {
  name: string;
  lifelineFd: number;
  start(project: string, args: string[]): Started;
}

const namespace = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined);
const withoutNamespace: Way = {
  name: "with no namespace",
  lifelineFd: COMMAND_LIFELINE_FD,
  start: (_project, args) => ({ ...behindLifeline("/bin/sh", args), before: [], close: () => undefined }),
};
const inNamespace: Way[] =
  namespace === null
    ? []
    : [
        {
          name: "in a PID namespace",
          lifelineFd: COMMAND_LIFELINE_FD,
          start: (_project, args) => ({ program: namespace.program, args: [...namespace.argsBefore, "/bin/sh", ...args], before: [], close: () => undefined }),
        },
      ];
const confined: Way[] =
  namespace?.ownProc !== true
    ? []
    : [
        {
          name: "confined (--confine-commands)",
          lifelineFd: CONFINED_LIFELINE_FD,
          start: (project, args) => {
            const confinement = new CommandConfinement({ allowedRoots: [project], classified: new ClassifiedPaths(DEFAULT_CLASSIFIED_PATHS), protectedPaths: [], tacitHomes: [], tacitFiles: [], recordDirectory: null });
            const wrapped = confinement.wrap(namespace, "sh", "/bin/sh", args, project);
            const walkedFile = path.join(dir, `walked-${++made}`);
            writeFileSync(walkedFile, wrapped.walked);
            const walked = openSync(walkedFile, "r");
            return { program: wrapped.program, args: wrapped.args, before: [walked, "pipe"], close: () => closeSync(walked) };
          },
        },
      ];
const ways = [withoutNamespace, ...inNamespace, ...confined];

function stdioWith(started: Started, lifeline: number | "pipe", way: Way): StdioOptions {
  const stdio: StdioOptions = ["ignore", "pipe", "pipe", ...started.before, lifeline];
  expect(stdio.length, "the lifeline's slot").toBe(way.lifelineFd + 1);
  return stdio;
}

describe("a command's first shell", () => {
  it("is tried every way this host starts commands (a PID namespace and confinement where it allows them)", () => {
    // This machine allows both; say so plainly if it ever does not.
    expect(ways.map((way) => way.name)).toEqual(["with no namespace", "in a PID namespace", "confined (--confine-commands)"]);
  });

  for (const way of ways) {
    it(`${way.name}: runs nothing once tacit's end of the lifeline is gone`, () => {
      const project = realTempDir("tacit-lifeline-project-", dir).dir;
      const marker = path.join(project, "ran");
      const started = way.start(project, ["-c", `: > ${marker}; echo ran`]);
      const lifeline = deadLifeline();
      try {
        const r = spawnSync(started.program, started.args, { cwd: project, encoding: "utf8", stdio: stdioWith(started, lifeline, way), timeout: 20_000 });
        expect(existsSync(marker), "the command ran with tacit gone").toBe(false);
        expect(r.stdout).toBe("");
        expect(r.status, r.stderr).not.toBe(0);
      } finally {
        closeSync(lifeline);
        started.close();
      }
    });

    it(`${way.name}: runs the command while tacit holds it, and the command does not hold it`, () => {
      const project = realTempDir("tacit-lifeline-project-", dir).dir;
      // `[` is the shell's own, so /proc/self is the command's shell.
      const started = way.start(project, ["-c", `if [ -e /proc/self/fd/${way.lifelineFd} ]; then echo holds; else echo free; fi; exit 3`]);
      try {
        const r = spawnSync(started.program, started.args, { cwd: project, encoding: "utf8", stdio: stdioWith(started, "pipe", way), timeout: 20_000 });
        expect({ status: r.status, stdout: r.stdout }, r.stderr).toEqual({ status: 3, stdout: "free\n" });
        // What the shell wrote to tacit's end before it went on.
        expect(r.output[way.lifelineFd]).toBe(".");
      } finally {
        started.close();
      }
    });

    it(`${way.name}: ends the command, and what it started in the background, once tacit's end closes`, async () => {
      const project = realTempDir("tacit-lifeline-project-", dir).dir;
      const seconds = uniqueSleep();
      const late = path.join(project, "late");
      // A background child of its own and a foreground wait; each would leave a marker if left to run.
      const started = way.start(project, ["-c", `(sleep ${seconds}; : > ${late}) & sleep ${seconds}; : > ${late}`]);
      let child: ChildProcess | null = null;
      try {
        // In a process group of its own, as the executor starts it: the group is what the watcher ends without a namespace.
        child = spawn(started.program, started.args, { cwd: project, stdio: stdioWith(started, "pipe", way), detached: true });
        const exited = new Promise<void>((resolve) => child!.once("exit", () => resolve()));
        const sleeps = (): string[] => livePrograms(`sleep ${seconds}`).filter((line) => /^\d+ (\S*\/)?sleep /.test(line));
        for (let i = 0; i < 400 && sleeps().length < 2; i++) await sleep(25);
        expect(sleeps().length, "both sleeps run").toBe(2);
        // As when tacit's process ends: its end of the lifeline closes.
        (child.stdio[way.lifelineFd] as Readable).destroy();
        await exited;
        expect(await leftAlive(`sleep ${seconds}`), "the command's processes once tacit's end closed").toEqual([]);
        expect(existsSync(late)).toBe(false);
      } finally {
        child?.kill("SIGKILL");
        killLive(`sleep ${seconds}`);
        started.close();
      }
    });
  }
});
