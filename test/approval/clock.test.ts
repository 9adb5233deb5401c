// The evaluation's time limit does not count the time a person takes to answer (the clock
// stops while asking), but it does count the script's own time across questions: answering
// (or refusing) does not hand the script a fresh limit.

import { describe, expect, it } from "vitest";
import { deleteScript, onTerminal, unattended, worlds } from "./fixtures.js";

// The tests run concurrently (each in worlds of its own): the first mostly waits, 3 s for a person's answer.
const world = worlds("tacit-clock-", { concurrent: true });

/**
 * 700 ms of the script's own time, waited (Atomics.wait) rather than spun: the limit is on the
 * time the script takes, not the CPU it uses, and a busy loop spun a core for the 2 s each of
 * the two tests below took to reach their limit.
 */
const OWN_TIME = "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 700);";

describe.concurrent("the clock stops while a person is asked", () => {
  it("an answer that takes longer than --exec-timeout-ms does not time the script out", async () => {
    const w = world();
    w.file("a.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    const run = await onTerminal(w, ["run", "--config", config, "--exec-timeout-ms", "2000", w.script(deleteScript("a.txt"))], {
      answers: ["y"],
      // Longer than the whole limit: a clock that ran on while asked would end the run before the answer.
      thinkMs: 3_000,
    });
    expect(run.stdout).not.toContain("ran longer than");
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).toContain("deleted");
    expect(w.exists("a.txt")).toBe(false);
  });

  it("the time the script itself spends still counts across questions (answers do not reset the clock)", async () => {
    const w = world();
    w.file("a.txt");
    const config = w.config([{ action: "fs.stat", tier: "always-ask" }]);
    // Five stretches of 700 ms of the script's own time, each followed by a question that
    // --yes answers at once: ~3.5 s of script time against a 2 s limit.
    const script = w.script(
      `requestFileSystem(".", (fs) => {\n  for (let i = 0; i < 5; i++) {\n    ${OWN_TIME}\n` +
        `    println("round", i, fs.access("a.txt").exists);\n  }\n});\nprintln("finished");\n`,
    );
    const run = await unattended(w, ["run", "--config", config, "--yes", "--exec-timeout-ms", "2000", script]);
    expect(run.stdout).not.toContain("finished");
    expect(run.code, run.all).toBe(124);
    expect(run.stderr).toContain("ran longer than 2000 ms");
  });

  it("refusals with no one to ask do not reset the clock either", async () => {
    const w = world();
    w.file("a.txt");
    const config = w.config([{ action: "fs.stat", tier: "always-ask" }]);
    const script = w.script(
      `requestFileSystem(".", (fs) => {\n  for (let i = 0; i < 5; i++) {\n    ${OWN_TIME}\n` +
        `    try { fs.access("a.txt").exists; } catch { println("refused", i); }\n  }\n});\nprintln("finished");\n`,
    );
    const run = await unattended(w, ["run", "--config", config, "--exec-timeout-ms", "2000", script]);
    expect(run.stdout).not.toContain("finished");
    expect(run.code, run.all).toBe(124);
  });
});
