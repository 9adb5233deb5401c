// The lifeline (runner/exec/lifeline.ts): a command's first shell runs nothing until tacit's main
// thread has answered it on its lifeline, and nothing at all once tacit's end is gone. tacit
// killed outright in the instant a command starts left processes on the way to it that had not yet
// asked to die with their parent, and the command ran on with no time limit. That instant cannot be
// hit on purpose from outside, so here each way a command is started (in a PID namespace, confined,
// and with no namespace at all) is run as the executor runs it, with the real unshare, mount and
// shell, and tacit's end played by this process: closed before the shell starts (a pipe with no
// reader, as once tacit has gone), held but not answered and then closed (tacit gone before its
// answer), and answered with the executor's own answerLifeline. The CLI test of tacit killed while
// a command starts is in limits.test.ts.

import { type ChildProcess, spawn, spawnSync, type StdioOptions } from "node:child_process";
import { closeSync, existsSync, openSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandConfinement, CONFINED_LIFELINE_FD } from "../../runner/exec/confinement.js";
import { answerLifeline } from "../../runner/exec/lifeline.js";
import { behindLifeline, COMMAND_LIFELINE_FD, probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { ClassifiedPaths, DEFAULT_CLASSIFIED_PATHS } from "../../runner/fs/classified-paths.js";
import { deadLifeline, realTempDir } from "./fixtures.js";

let dir: string;
let cleanup: () => void;
let made = 0;

beforeAll(() => {
  ({ dir, cleanup } = realTempDir("tacit-lifeline-", "/var/tmp"));
});
afterAll(() => cleanup());


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
      const lifeline = deadLifeline(dir);
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

    it(`${way.name}: runs nothing while tacit's answer has not come, and nothing once tacit's end closes`, async () => {
      const project = realTempDir("tacit-lifeline-project-", dir).dir;
      const marker = path.join(project, "ran");
      const started = way.start(project, ["-c", `: > ${marker}; echo ran`]);
      let child: ChildProcess | null = null;
      try {
        child = spawn(started.program, started.args, { cwd: project, stdio: stdioWith(started, "pipe", way), detached: true });
        const exited = new Promise<number | null>((resolve) => child!.once("exit", (code) => resolve(code)));
        const lifeline = child.stdio[way.lifelineFd] as Readable;
        // The shell's question: it has started, after every request to die with its parent, and waits.
        const asked = await new Promise<string>((resolve) => lifeline.once("data", (chunk: Buffer) => resolve(chunk.toString())));
        expect(asked).toBe(".");
        await sleep(200);
        expect(existsSync(marker), "the command ran before tacit answered").toBe(false);
        // As when tacit has gone before it answered: its end closes.
        lifeline.destroy();
        expect(await exited).not.toBe(0);
        expect(existsSync(marker), "the command ran with tacit gone").toBe(false);
      } finally {
        child?.kill("SIGKILL");
        started.close();
      }
    });

    it(`${way.name}: runs the command once tacit answers (answerLifeline), and the command does not hold the lifeline`, async () => {
      const project = realTempDir("tacit-lifeline-project-", dir).dir;
      // `[` is the shell's own, so /proc/self is the command's shell.
      const started = way.start(project, ["-c", `if [ -e /proc/self/fd/${way.lifelineFd} ]; then echo holds; else echo free; fi; exit 3`]);
      try {
        const child = spawn(started.program, started.args, { cwd: project, stdio: stdioWith(started, "pipe", way), detached: true });
        answerLifeline(child.stdio[way.lifelineFd] as Readable & Writable);
        const stdout: Buffer[] = [];
        child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
        // "close": Node saw every stream end, the lifeline's included.
        const status = await new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
        expect({ status, stdout: Buffer.concat(stdout).toString() }).toEqual({ status: 3, stdout: "free\n" });
      } finally {
        started.close();
      }
    });
  }
});
