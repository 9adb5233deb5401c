// The limits of one exec, with real processes: a child that outlives timeoutMs is killed
// together with its own children (checked in the host's process table afterwards), and
// 20 MiB of output on a stream is captured as 8 MiB with a visible truncation marker.

import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tacitBin } from "../helpers.js";
import { attemptOf, attempts, ATTEMPT_PRELUDE, killLive, leftAlive, livePrograms, realTempDir, tacit, uniqueSleep } from "./fixtures.js";

let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-exec-limits-"));
});
afterAll(() => cleanup());

type ExecResult = { exitCode: number; stdout: string; stderr: string };

// The first six describes run together (describe.concurrent): each mostly waits, for a command
// that sleeps, for a time limit to pass, or for tacit to start a command and end, with files and
// sleeps of its own (each test's script file has a name of its own). The two after run one at a
// time: one times a kill, the other fills pipes as fast as a core allows.

const MiB = 1024 * 1024;

describe.concurrent("timeoutMs", () => {
  it("kills a child and its own children when it passes: exit code 124, a marker on stderr, no process left", async () => {
    const plain = uniqueSleep();
    const stubborn = uniqueSleep();
    // About 10 s, as unique: what each program waits for before it prints "never". Killed at
    // its 700 ms timeout it never prints it; a timeout applied late (or the default 30 s) lets
    // it out. No clock in the test: the kill's evidence is the marker and the processes gone.
    const shortOf = (sleep: string): string => sleep.replace(/^31\./, "10.");
    // One child in the background and one in the foreground, both descendants of the program.
    writeFileSync(path.join(root, "spawn.sh"), `sleep ${plain} &\nsleep ${shortOf(plain)}\necho never\n`);
    // The same, ignoring SIGTERM (the ignored disposition is inherited by the sleeps).
    writeFileSync(path.join(root, "stubborn.sh"), `trap '' TERM HUP INT\nsleep ${stubborn} &\nsleep ${shortOf(stubborn)}\necho never\n`);
    const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["bash"], (proc) => {
  for (const file of ["spawn.sh", "stubborn.sh"]) {
    const started = Date.now();
    attempt(file, () => ({ result: proc.exec("bash", [file], { timeoutMs: 700 }), ms: Date.now() - started }));
  }
});
`;
    const r = await tacit(root, script, ["--command-permissions", "bash"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    for (const file of ["spawn.sh", "stubborn.sh"]) {
      const a = attemptOf(found, file);
      expect(a.status, `${file}: ${JSON.stringify(a.value)}`).toBe("ok");
      const { result, ms } = a.value as { result: ExecResult; ms: number };
      expect(result.exitCode, file).toBe(124);
      expect(result.stderr, file).toMatch(/killed after 700 ms/i);
      expect(result.stdout, file).not.toContain("never");
      // Not killed before its time: a lower bound, which load can only make easier to meet.
      expect(ms, file).toBeGreaterThanOrEqual(650);
    }
    for (const sleep of [plain, stubborn]) {
      expect(await leftAlive(`sleep ${sleep}`), `sleep ${sleep} left running`).toEqual([]);
      expect(await leftAlive(`sleep ${shortOf(sleep)}`), `sleep ${shortOf(sleep)} left running`).toEqual([]);
    }
  });
});

describe.concurrent("a timeoutMs past what a timer can hold", () => {
  it("means no limit of its own, not an instant kill (setTimeout fires at once past 2^31-1 ms)", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["bash"], (proc) => {
  attempt("long", () => proc.exec("bash", ["-c", "sleep 0.3; echo finished"], { timeoutMs: 10_000_000_000 }));
});
`;
    const r = await tacit(root, script, ["--command-permissions", "bash"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("TimeoutOverflowWarning");
    const a = attemptOf(attempts(r.stdout), "long");
    expect(a.status, JSON.stringify(a.value)).toBe("ok");
    expect(a.value).toMatchObject({ exitCode: 0, stdout: "finished\n" });
  });
});

describe.concurrent("a timeoutMs that is no positive whole number", () => {
  it("is a TypeError the script can catch, saying what it takes; nothing runs, and the script goes on", async () => {
    // Sent, 0, -1, 1.5 and NaN each ended the evaluation as a malformed frame (the host takes a positive integer only).
    const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["bash"], (proc) => {
  for (const t of [0, -1, 1.5, Number.NaN, 1e20]) attempt(String(t), () => proc.exec("bash", ["-c", "touch ran-" + t], { timeoutMs: t }));
});
println("went on");
`;
    const r = await tacit(root, script, ["--command-permissions", "bash"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("went on");
    const found = attempts(r.stdout);
    for (const t of ["0", "-1", "1.5", "NaN", "100000000000000000000"]) {
      const a = attemptOf(found, t);
      expect(a.status, t).toBe("TypeError");
      expect(String(a.value), t).toMatch(/options\.timeoutMs must be a positive whole number of milliseconds, not .*; leave it out for the run's own limit/);
      expect(existsSync(path.join(root, `ran-${t}`)), t).toBe(false);
    }
  });
});

describe.concurrent("a child that leaves its process group (setsid)", () => {
  it("dies when the command ends, and when its timeout passes: no process left, nothing it would have written", async () => {
    const afterEnd = uniqueSleep();
    const afterTimeout = uniqueSleep();
    // The escaped child writes a marker once it has slept; it must never get that far.
    const escape = (sleep: string, marker: string): string =>
      `setsid sh -c 'sleep ${sleep}; echo escaped > ${marker}' < /dev/null > /dev/null 2>&1 &\nsleep 0.5\n`;
    writeFileSync(path.join(root, "escape-end.sh"), `${escape(afterEnd, "escaped-end.txt")}echo ended\n`);
    writeFileSync(path.join(root, "escape-timeout.sh"), `${escape(afterTimeout, "escaped-timeout.txt")}sleep 30\n`);
    const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["bash"], (proc) => {
  attempt("end", () => proc.exec("bash", ["escape-end.sh"]));
  attempt("timeout", () => proc.exec("bash", ["escape-timeout.sh"], { timeoutMs: 1500 }));
});
`;
    const r = await tacit(root, script, ["--command-permissions", "bash"]);
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    expect((attemptOf(found, "end").value as ExecResult).stdout).toBe("ended\n");
    expect((attemptOf(found, "timeout").value as ExecResult).exitCode).toBe(124);
    expect(await leftAlive(`sleep ${afterEnd}`), "the child that escaped a finished command").toEqual([]);
    expect(await leftAlive(`sleep ${afterTimeout}`), "the child that escaped a timed-out command").toEqual([]);
    expect(existsSync(path.join(root, "escaped-end.txt"))).toBe(false);
    expect(existsSync(path.join(root, "escaped-timeout.txt"))).toBe(false);
  });
});

/**
 * The `sleep` itself, running (pgrep's lines of it): not the setpriv, unshare or shell on the way to
 * it, whose command lines name it too. These tests are about a command that runs, so they wait for
 * the chain to be whole; tacit killed while the chain starts is the next describe's.
 */
function sleepRunning(seconds: string): string[] {
  return livePrograms(`sleep ${seconds}`).filter((line) => /^\d+ (\S*\/)?sleep /.test(line));
}

describe.concurrent("tacit ended by a signal while a command runs", () => {
  // tacit exits on SIGINT, SIGTERM and SIGHUP through its exit hooks, which ended its sandbox and
  // type checker but not a running command: in a review, Ctrl-C (exit 130), SIGTERM and SIGHUP
  // each left `unshare … sleep` running after tacit had gone, with no time limit left to end it.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    it(`${signal}: the command and what it started end with tacit`, async () => {
      const seconds = uniqueSleep();
      writeFileSync(path.join(root, `signal-${signal}.ts`), `requestExecPermission(["sleep"], (p) => p.exec("sleep", ["${seconds}"]));\n`);
      const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--command-permissions", "sleep", `signal-${signal}.ts`], { cwd: root, stdio: "ignore" });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      try {
        for (let i = 0; i < 200 && sleepRunning(seconds).length === 0; i++) await sleep(50);
        expect(sleepRunning(seconds), "the command started").not.toEqual([]);
        child.kill(signal);
        expect(await exited).toBe({ SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }[signal]);
        expect(await leftAlive(`sleep ${seconds}`), "a command left running after tacit exited").toEqual([]);
      } finally {
        child.kill("SIGKILL");
        killLive(`sleep ${seconds}`); // whatever this test started and left
      }
    });
  }
});

describe.concurrent("tacit ended in a way that runs no exit hook while a command runs", () => {
  // SIGKILL (the OOM killer, a supervisor's last resort) and a crash (SIGABRT: abort(), a fatal
  // V8 error) end tacit without its exit hooks: in a fourth review each left `unshare … sleep`
  // running, with no time limit left to end it (its timer was in the process that had gone).
  // SIGQUIT (Ctrl-\ at a terminal) did too; tacit now stops on it as on SIGTERM, hooks and all
  // (test/cli/quit-signal.test.ts).
  for (const signal of ["SIGKILL", "SIGABRT"] as const) {
    it(`${signal}: the command and what it started end with tacit`, async () => {
      const seconds = uniqueSleep();
      writeFileSync(path.join(root, `abrupt-${signal}.ts`), `requestExecPermission(["sleep"], (p) => p.exec("sleep", ["${seconds}"]));\n`);
      const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--command-permissions", "sleep", `abrupt-${signal}.ts`], { cwd: root, stdio: "ignore" });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, how) => resolve(how)));
      try {
        for (let i = 0; i < 200 && sleepRunning(seconds).length === 0; i++) await sleep(50);
        expect(sleepRunning(seconds), "the command started").not.toEqual([]);
        child.kill(signal);
        expect(await exited).toBe(signal);
        expect(await leftAlive(`sleep ${seconds}`), "a command left running after tacit ended").toEqual([]);
      } finally {
        child.kill("SIGKILL");
        killLive(`sleep ${seconds}`); // whatever this test started and left
      }
    });
  }
});

/**
 * The pid of the process tacit started (its main thread's child) whose command line holds
 * `needle`, looked for without pause (the chain to a command starts in a few ms), or null after
 * `withinMs`.
 */
function childNaming(tacitPid: number, needle: string, withinMs: number): number | null {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    let children: string[];
    try {
      children = readFileSync(`/proc/${tacitPid}/task/${tacitPid}/children`, "utf8").split(" ").filter((pid) => pid !== "");
    } catch {
      return null; // tacit has gone
    }
    for (const pid of children) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle)) return Number(pid);
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return null;
}

describe("tacit killed outright while a command starts", () => {
  // Each process on the way to a command (setpriv, unshare, the namespace's first shell) asks to
  // be killed when its parent ends, but only once it runs: one whose parent died before then was
  // never signalled. A CI run at load 14 sent SIGQUIT while unshare was forking its child, and
  // the child's shell and sleep ran on with no time limit. Now the first shell runs nothing until
  // tacit's main thread has answered it on a lifeline, and nothing once tacit has gone
  // (runner/exec/lifeline.ts; lifeline.test.ts shows both, each way a command starts). Here tacit
  // is killed at a spread of moments from the instant the chain's first process appears.
  it("leaves nothing of the command running, whichever step of its start the kill falls in", async () => {
    // Under load the chain takes from under a millisecond to over ten to start (without the
    // lifeline, runs left a command running at delays from 2 to 14 ms).
    const delaysMs = [0, 0.5, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12];
    for (const delayMs of delaysMs) {
      const seconds = uniqueSleep();
      // The look for the chain's first process runs without pause, holding a core: it starts
      // only once the script is about to ask for the command, not through tacit's and Deno's
      // start (some 12 starts' CPU, taken from tacit itself on two cores). The script says it is
      // ready, then waits for its input to end (readInput), which the test ends just before it looks.
      writeFileSync(
        path.join(root, "starting.ts"),
        `requestExecPermission(["sleep"], (p) => { println("ready"); readInput(); p.exec("sleep", ["${seconds}"]); });\n`,
      );
      const child = spawn(process.execPath, [tacitBin, "run", "--no-check", "--command-permissions", "sleep", "starting.ts"], {
        cwd: root,
        stdio: ["pipe", "pipe", "ignore"],
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, how) => resolve(how)));
      try {
        let printed = "";
        await new Promise<void>((resolve, reject) => {
          child.stdout.on("data", (chunk: Buffer) => {
            printed += chunk.toString("utf8");
            if (printed.includes("ready\n")) resolve();
          });
          child.once("exit", () => reject(new Error(`tacit ended before its script was ready; it printed ${JSON.stringify(printed)}`)));
        });
        // Closed, not only flushed: tacit reads the input's end when the pipe's last writer closes it.
        const closed = new Promise<void>((resolve) => child.stdin.once("close", () => resolve()));
        child.stdin.end();
        await closed;
        const first = childNaming(child.pid!, `sleep\0${seconds}`, 30_000);
        expect(first, "the command's first process appeared").not.toBeNull();
        for (const until = performance.now() + delayMs; performance.now() < until; );
        child.kill("SIGKILL");
        expect(await exited).toBe("SIGKILL");
        expect(await leftAlive(`sleep ${seconds}`), `tacit killed ${delayMs} ms after the command's first process appeared`).toEqual([]);
      } finally {
        child.kill("SIGKILL");
        killLive(`sleep ${seconds}`); // whatever this test started and left
      }
    }
  });
});

describe("output capture", () => {
  it("keeps about 8 MiB of a stream a child fills with 20 MiB, ending with a truncation marker, and finishes", async () => {
    writeFileSync(path.join(root, "big-out.sh"), "head -c 20971520 /dev/zero | tr '\\0' 'a'\nprintf small >&2\n");
    writeFileSync(path.join(root, "big-err.sh"), "head -c 20971520 /dev/zero | tr '\\0' 'b' >&2\nprintf small\n");
    const script = `${ATTEMPT_PRELUDE}
function summary(text: string, ch: string) {
  let leading = 0;
  while (leading < text.length && text[leading] === ch) leading++;
  return { length: text.length, leading, rest: text.slice(leading, leading + 400) };
}
requestExecPermission(["bash"], (proc) => {
  attempt("stdout", () => { const r = proc.exec("bash", ["big-out.sh"]); return { exitCode: r.exitCode, big: summary(r.stdout, "a"), other: r.stderr }; });
  attempt("stderr", () => { const r = proc.exec("bash", ["big-err.sh"]); return { exitCode: r.exitCode, big: summary(r.stderr, "b"), other: r.stdout }; });
});
`;
    const r = await tacit(root, script, ["--command-permissions", "bash"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    type Summary = { length: number; leading: number; rest: string };
    for (const name of ["stdout", "stderr"]) {
      const a = attemptOf(found, name);
      expect(a.status, JSON.stringify(a.value)).toBe("ok");
      const { big, other } = a.value as { exitCode: number; big: Summary; other: string };
      // About 8 MiB of the child's bytes, then only the marker.
      expect(big.leading, name).toBeGreaterThan(8 * MiB - 64 * 1024);
      expect(big.leading, name).toBeLessThanOrEqual(8 * MiB);
      expect(big.rest.trimStart().startsWith("[tacit: output truncated"), `${name} goes on with ${JSON.stringify(big.rest)}`).toBe(true);
      expect(big.length - big.leading, `${name} after the kept bytes`).toBeLessThan(400);
      // The child ran to its end (the other stream holds what it printed last), and was not
      // cut short by the 30 s default timeout.
      expect(other, name).toBe("small");
      expect(big.rest, name).not.toMatch(/killed after/i);
    }
  });

  it("libraryConfig.execOutputLimitBytes lowers the cut: each stream keeps that many bytes, then the marker naming it; more than the default is refused", async () => {
    writeFileSync(path.join(root, "both-5000.sh"), "head -c 5000 /dev/zero | tr '\\0' 'c'\nhead -c 5000 /dev/zero | tr '\\0' 'd' >&2\n");
    const config = path.join(root, "exec-output-1024.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { execOutputLimitBytes: 1024 } }));
    const marker = "\n[tacit: output truncated at 1024 bytes; the rest was discarded]\n";
    const script = `requestExecPermission(["bash"], (proc) => { const r = proc.exec("bash", ["both-5000.sh"]); println(JSON.stringify([r.exitCode, r.stdout, r.stderr])); });\n`;
    const r = await tacit(root, script, ["--command-permissions", "bash", "--config", config]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([0, "c".repeat(1024) + marker, "d".repeat(1024) + marker]);

    // It can only lower the limit: the host holds each stream whole until the command ends.
    const tooMuch = path.join(root, "exec-output-over.json");
    writeFileSync(tooMuch, JSON.stringify({ libraryConfig: { execOutputLimitBytes: 8 * MiB + 1 } }));
    const refused = await tacit(root, script, ["--command-permissions", "bash", "--config", tooMuch]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("execOutputLimitBytes");
    expect(refused.stderr).toContain("it can only lower how much of a command's stdout and stderr tacit keeps");
  });

  it("a child that writes a byte at a time on both streams does not exhaust a small host heap: every byte comes back", async () => {
    // 1 MiB on each stream, one write(2) per byte: the host read them as a great many tiny chunks, and
    // keeping each as a Buffer of its own ran a host started with a 24 MB heap out of memory (it died,
    // and the script with it); kept in one growing buffer per stream, they fit. The sizes are set
    // between the two, measured through this CLI at load 8 with a scratch build that kept every chunk
    // besides the buffer: with each chunk kept, 1 MiB a stream killed hosts of 20, 24 (twice), 28 and
    // 36 MB; kept in one buffer, it needs 18 MB (16 MB dies). It was 4 MiB under 64 MB, then 2 MiB
    // under 32 MB (each chunk kept killed 32, 40 and 48 MB; one buffer needed 24 MB): the same proof,
    // at the same ratios, for more CPU (a write(2) and a read per byte or so: a run of this test alone
    // took 22 s of CPU at 2 MiB, 13 to 16 s at 1 MiB).
    writeFileSync(
      path.join(root, "byte-at-a-time.js"),
      `const fs = require("fs"); const x = Buffer.from("x"); const y = Buffer.from("y");
for (let i = 0; i < ${MiB}; i++) { fs.writeSync(1, x); fs.writeSync(2, y); }
`,
    );
    const script = `${ATTEMPT_PRELUDE}
requestExecPermission(["node"], (proc) => {
  attempt("bytes", () => {
    const r = proc.exec("node", ["byte-at-a-time.js"], { timeoutMs: 600000 });
    return { exitCode: r.exitCode, stdout: r.stdout.length, stdoutAllX: /^x*$/.test(r.stdout), stderr: r.stderr.length, stderrAllY: /^y*$/.test(r.stderr) };
  });
});
println("after-exec");
`;
    const r = await tacit(root, script, ["--command-permissions", "node", "--exec-timeout-ms", "600000"], { NODE_OPTIONS: "--max-old-space-size=24" });
    expect(r.stderr).not.toMatch(/heap out of memory/i);
    expect(r.code, r.stderr).toBe(0);
    expect(attemptOf(attempts(r.stdout), "bytes")).toEqual({
      status: "ok",
      value: { exitCode: 0, stdout: MiB, stdoutAllX: true, stderr: MiB, stderrAllY: true },
    });
    expect(r.stdout).toContain("after-exec");
  }, 300_000);
});
