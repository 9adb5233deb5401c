// Attacks on the way a command dies with tacit (runner/exec/lifeline.ts) by the command itself,
// and what the lifeline must leave as it was. A permitted command is hostile: it can signal every
// process of its user it can name, and leave its process group or session. In a PID namespace
// that gains it nothing: the namespace's first process dies with tacit (unshare --kill-child
// under setpriv --pdeathsig), and the kernel ends every process in the namespace with it; the
// lifeline only covers the instant before those were asked for, which the command does not
// choose. Exit statuses and signals come back as the command ended, each way a command is
// started, and a command's input still reaches it with the lifeline's shell in between.

import { spawn, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, readSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { behindLifeline, probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { tacitBin } from "../helpers.js";
import { answeredLifeline, attemptOf, attempts, ATTEMPT_PRELUDE, killLive, leftAlive, livePrograms, lit, realTempDir, tacit, uniqueSleep } from "./fixtures.js";

let dir: string;
let cleanup: () => void;

beforeAll(() => {
  // Not under /tmp: a confined command's /tmp is its own.
  ({ dir, cleanup } = realTempDir("tacit-lifeline-attacks-", "/var/tmp"));
});
afterAll(() => cleanup());

const namespace = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], () => undefined);
/** The ways this host starts commands from the CLI: in a PID namespace, and confined where it has its own /proc. */
const cliWays: Array<{ name: string; flags: string[] }> = [
  ...(namespace === null ? [] : [{ name: "in a PID namespace", flags: [] }]),
  ...(namespace?.ownProc === true ? [{ name: "confined (--confine-commands)", flags: ["--confine-commands"] }] : []),
];

let made = 0;
/** A project directory and a home of its own (a confined command's view covers the home's hidden entries). */
function project(): { cwd: string; env: Record<string, string> } {
  const base = path.join(dir, `p${++made}`);
  const home = path.join(base, "home");
  const cwd = path.join(base, "project");
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { cwd, env: { HOME: home } };
}

/** Live processes whose command line names `needle` and starts as `program` matches, as `pgrep -a -f` lists them. */
function pidsNaming(needle: string, program: RegExp): string[] {
  return livePrograms(needle).filter((line) => program.test(line.replace(/^\d+ /, "")));
}

describe("a command that kills what it can signal", () => {
  it("is tried every way the CLI starts commands on this host", () => {
    // This machine allows both; say so plainly if it ever does not.
    expect(cliWays.map((way) => way.name)).toEqual(["in a PID namespace", "confined (--confine-commands)"]);
  });

  // `kill -9 -1` from the command ends every process it can signal but itself and the namespace's
  // first (a watcher, were there one). Then a sleep in a session of its own, and one in its place; or both in a
  // PID namespace of the command's own (inside confinement it has the capabilities of its user
  // namespace, and as root those of root), whose processes are the outer namespace's too.
  // Only where its pid 1 is tacit's first shell: outside a namespace `kill -9 -1` would end every
  // process of the user (the test run's too), so a command that finds itself outside exits instead
  // (and the test fails, its sleeps never started).
  const inNamespace = "grep -q tacit-exec /proc/1/cmdline || exit 99; ";
  // A /proc of its own for the nested namespace (--mount-proc) where the kernel lets it mount one:
  // not in confinement, whose /proc has its kernel settings covered read-only, which the kernel
  // then refuses to mount proc beside (a fresh one would uncover them: confinement-kernel-settings).
  const attacks: Array<{ how: string; attack: (seconds: string, confined: boolean) => string }> = [
    { how: "leaves its session", attack: (seconds) => `${inNamespace}kill -9 -1 2>/dev/null; (setsid sleep ${seconds} &); exec sleep ${seconds}` },
    {
      how: "starts a PID namespace of its own",
      attack: (seconds, confined) =>
        `${inNamespace}kill -9 -1 2>/dev/null; exec unshare --pid --fork${confined ? "" : " --mount-proc"} bash -c '(setsid sleep ${seconds} &); exec sleep ${seconds}'`,
    },
  ];
  for (const way of cliWays) {
    for (const { how, attack: attackFor } of attacks) {
      it(`${way.name}: and ${how}, still ends when tacit is killed outright`, async () => {
        const { cwd, env } = project();
        const seconds = uniqueSleep();
        const attack = attackFor(seconds, way.flags.includes("--confine-commands"));
        const script = `requestExecPermission(["bash"], (p) => p.exec("bash", ["-c", ${lit(attack)}], { timeoutMs: 600000 }));\n`;
        const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--command-permissions", "bash", ...way.flags, "-"], {
          cwd,
          env: { ...process.env, ...env },
          stdio: ["pipe", "ignore", "ignore"],
        });
        child.stdin!.end(script);
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
        try {
          const sleeps = (): string[] => pidsNaming(`sleep ${seconds}`, /^(\S*\/)?sleep /);
          for (let i = 0; i < 1200 && sleeps().length < 2; i++) await sleep(25);
          expect(sleeps().length, "both sleeps run").toBe(2);
          // Of the shells whose command line names the sleep, only the first (the namespace's first process) is left.
          expect(pidsNaming(`sleep ${seconds}`, /^\/bin\/sh -c /), "the first shell alone").toHaveLength(1);
          child.kill("SIGKILL");
          expect(await exited).toBe("SIGKILL");
          expect(await leftAlive(`sleep ${seconds}`), "the command's processes once tacit was killed").toEqual([]);
        } finally {
          child.kill("SIGKILL");
          killLive(`sleep ${seconds}`);
        }
      });
    }
  }
});

describe("what a command ends with comes back as it ended", () => {
  // The command runs under a shell that holds the lifeline and passes on its status: a command
  // killed by a signal is reported as a shell reports it, 128 + the signal's number.
  const cases: Array<{ label: string; shell: string; input?: string; exitCode: number; stdout: string }> = [
    { label: "status", shell: "exit 7", exitCode: 7, stdout: "" },
    { label: "usr1", shell: "kill -USR1 $$", exitCode: 138, stdout: "" },
    { label: "kill", shell: "kill -KILL $$", exitCode: 137, stdout: "" },
    { label: "input", shell: "cat; exit 3", input: "typed\n", exitCode: 3, stdout: "typed\n" },
  ];

  for (const way of cliWays) {
    it(`${way.name}: exit statuses, signals and standard input`, async () => {
      const { cwd, env } = project();
      const calls = cases.map((c) => {
        const options = c.input === undefined ? "" : `, { input: ${lit(c.input)} }`;
        return `  attempt(${lit(c.label)}, () => { const r = p.exec("bash", ["-c", ${lit(c.shell)}]${options}); return { exitCode: r.exitCode, stdout: r.stdout }; });`;
      });
      const script = `${ATTEMPT_PRELUDE}\nrequestExecPermission(["bash"], (p) => {\n${calls.join("\n")}\n});\n`;
      const r = await tacit(cwd, script, ["--command-permissions", "bash", ...way.flags], env);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      for (const c of cases) {
        const attempt = attemptOf(found, c.label);
        expect({ label: c.label, status: attempt.status, value: attempt.value }).toEqual({ label: c.label, status: "ok", value: { exitCode: c.exitCode, stdout: c.stdout } });
      }
    });
  }

  it("with no namespace: exit statuses, signals and standard input, as the executor starts the shell", () => {
    for (const c of cases) {
      const started = behindLifeline("/bin/bash", ["-c", c.shell]);
      const lifeline = answeredLifeline(dir);
      try {
        const r = spawnSync(started.program, started.args, {
          cwd: dir,
          encoding: "utf8",
          input: c.input ?? "",
          stdio: ["pipe", "pipe", "pipe", lifeline],
          timeout: 20_000,
        });
        // The command runs in the shell's place (exec): a signal that ends it is the process's own end.
        const expected = c.label === "usr1" ? { status: null, signal: "SIGUSR1" } : c.label === "kill" ? { status: null, signal: "SIGKILL" } : { status: c.exitCode, signal: null };
        expect({ label: c.label, status: r.status, signal: r.signal, stdout: r.stdout }, r.stderr).toEqual({ label: c.label, ...expected, stdout: c.stdout });
        expect(readSync(lifeline, Buffer.alloc(8)), "what the shell asked on its lifeline").toBe(1);
      } finally {
        closeSync(lifeline);
      }
    }
  });
});
