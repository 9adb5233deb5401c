// The sandbox and the pure evaluator have no controlling terminal (runner/sandbox-process.ts starts
// each in a session of its own). A process whose controlling terminal is the person's can open
// /dev/tty without any file descriptor from tacit, read what the person types there, and push
// input into it with TIOCSTI (the kernel allows that on a process's own terminal without a
// capability, where legacy TIOCSTI is on): an answer to tacit's approval question, or a command
// that the person's shell runs once tacit ends. Deno's permissions keep a script from opening
// /dev/tty, but native code in Deno does I/O no permission covers, and the namespaces the sandbox
// runs in do not close a terminal it already has. Tested through `tacit run` on a pseudo-terminal
// (`script`), whose sandbox and pure evaluator the test finds by their command lines and reads
// /proc/<pid>/stat of: tty_nr, the controlling terminal's device, must be 0 (none). In a session
// of its own, a terminal's stop (Ctrl-Z) reaches tacit alone: tacit stops its sandboxes with it.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { bootstrapPath, pureEvaluatorPath } from "../../runner/paths.js";
import { childEnv, tacitBin, tempDir } from "../helpers.js";
import { commandLineOf, denoRunning, descendantsOf } from "../processes.js";

const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

/** A script that starts the pure evaluator, then waits for its standard input to end. */
const WAITING_SCRIPT = `const doubled = classify("plain").map((value) => value + value);
println("started", doubled);
println(readInput().length);
`;

/** The controlling terminal (tty_nr: 0 for none), session and state (R, S, T…) of `pid`, from /proc/<pid>/stat. */
function terminalOf(pid: number): { ttyNr: number; session: number; state: string } {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ");
  return { state: fields[0]!, session: Number(fields[3]), ttyNr: Number(fields[4]) };
}

/** Waits until `pid`'s state is `wanted` (R: running, T: stopped), for at most about 20 s; its state then. */
async function stateBecomes(pid: number, wanted: (state: string) => boolean): Promise<string> {
  let state = terminalOf(pid).state;
  for (let tries = 0; tries < 400 && !wanted(state); tries++) {
    await sleep(50);
    state = terminalOf(pid).state;
  }
  return state;
}

/** Kills the process group `leader` leads, if it still runs. */
function killGroup(leader: number | undefined): void {
  if (leader === undefined) return;
  try {
    process.kill(-leader, "SIGKILL");
  } catch {
    // Ended already.
  }
}

function quoted(word: string): string {
  return `'${word.replace(/'/g, "'\\''")}'`;
}

describe.skipIf(!hasScript)("a sandbox started from a terminal", () => {
  it("neither the sandbox nor the pure evaluator has the terminal tacit runs on as its controlling terminal", async () => {
    const { dir, cleanup } = tempDir("tacit-terminal-");
    let terminal: ChildProcess | undefined;
    try {
      writeFileSync(path.join(dir, "waits.ts"), WAITING_SCRIPT);
      // On a pseudo-terminal of its own, as from a person's shell; its input a pipe that stays open.
      const command = `sleep 60 | ${[process.execPath, tacitBin, "run", "--no-check", "waits.ts"].map(quoted).join(" ")}`;
      terminal = spawn("script", ["-qec", command, "/dev/null"], { cwd: dir, env: childEnv(), stdio: "ignore", detached: true });
      const sandbox = await denoRunning(terminal.pid!, bootstrapPath);
      const evaluator = await denoRunning(terminal.pid!, pureEvaluatorPath);
      const tacit = descendantsOf(terminal.pid!).find((pid) => commandLineOf(pid).split("\0").includes(tacitBin))!;
      // The premise: tacit itself runs on the terminal.
      expect(terminalOf(tacit).ttyNr).not.toBe(0);
      for (const pid of [sandbox, evaluator]) {
        const seen = terminalOf(pid);
        expect(seen.ttyNr, commandLineOf(pid)).toBe(0);
        expect(seen.session).not.toBe(terminalOf(tacit).session);
      }
    } finally {
      killGroup(terminal?.pid);
      cleanup();
    }
  });
});

describe("a terminal's stop (Ctrl-Z: SIGTSTP to tacit's process group)", () => {
  it("stops the sandbox with tacit, which does not spin on unwatched; continued, both run again", async () => {
    const { dir, cleanup } = tempDir("tacit-terminal-stop-");
    let tacit: ChildProcess | undefined;
    try {
      writeFileSync(path.join(dir, "loops.ts"), "let turns = 0;\nwhile (true) turns++;\n");
      // A process group of its own, as a shell's job is: the terminal stops the group.
      tacit = spawn(process.execPath, [tacitBin, "run", "--no-check", "--exec-timeout-ms", "120000", "loops.ts"], {
        cwd: dir,
        env: childEnv(),
        stdio: "ignore",
        detached: true,
      });
      const sandbox = await denoRunning(tacit.pid!, bootstrapPath);
      // The premise: the script's loop runs. Found at its start, the sandbox is still loading (S).
      expect(await stateBecomes(sandbox, (state) => state === "R")).toBe("R");
      process.kill(-tacit.pid!, "SIGTSTP");
      expect(await stateBecomes(tacit.pid!, (state) => state === "T")).toBe("T");
      expect(await stateBecomes(sandbox, (state) => state === "T")).toBe("T");
      process.kill(-tacit.pid!, "SIGCONT");
      expect(await stateBecomes(sandbox, (state) => state !== "T")).not.toBe("T");
      expect(await stateBecomes(tacit.pid!, (state) => state !== "T")).not.toBe("T");
    } finally {
      killGroup(tacit?.pid);
      cleanup();
    }
  });
});
