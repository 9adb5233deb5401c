// A question taller than the terminal scrolls its beginning out of sight: what the person sees
// is its end, the pattern and the prompt. A script can make that end read as something else,
// so such a question is answered with a code written on its first line, which only a person
// who scrolled up to its beginning has seen.

import { describe, expect, it } from "vitest";
import { onTerminal, worlds } from "./fixtures.js";

const world = worlds("tacit-tall-question-");

/** A terminal of the size programs assume when told none. */
const SMALL = { rows: 24, columns: 80 };

/** `rm -f victim.txt "<spaces>" build/tmp.txt`: on an 80×24 terminal, only `" build/tmp.txt` of it is in sight at the prompt. */
const padded = `requestExecPermission(["rm"], (p) => p.exec("rm", ["-f", "victim.txt", " ".repeat(1850), "build/tmp.txt"]));\nprintln("ran");\n`;

describe("a question taller than the terminal", () => {
  it("gets no yes from y typed at its end: the run is refused and victim.txt, named out of sight, stays", async () => {
    const w = world();
    w.file("victim.txt");
    w.file("build/tmp.txt");
    const config = w.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm"] } });
    // The person reads what the terminal shows at the prompt (a blank screen, `" build/tmp.txt`,
    // `pattern: exec rm *`) and types y, as they would to remove a temporary file.
    const run = await onTerminal(w, ["run", "--config", config, w.script(padded)], { answers: ["y"], size: SMALL, prompt: "Allow?" });
    expect(w.exists("victim.txt"), run.all).toBe(true);
    expect(run.prompts, run.all).toBe(1);
    expect(run.all).toMatch(/tacit: the code of this question is \d{6}; it is taller than your terminal, so read it whole, from here:/);
    expect(run.all).toMatch(/This question is \d+ lines long and your terminal shows 24: scroll up to its first line/);
    expect(run.all).toContain("without the code the question showed)) and did not approve it");
    expect(run.all).not.toContain("ran");
    expect(run.code, run.all).toBe(1);
  });

  it("with the output piped, counts the rows of the longer prompt: a question that fits only with y's prompt shows its code on its first line", async () => {
    const w = world();
    w.file("victim.txt");
    w.file("build/tmp.txt");
    const config = w.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm"] } });
    // Two rows of heading, 20 of "  run: rm -f victim.txt "<1,500 spaces>" build/tmp.txt" (80 columns, then 77 after each
    // row's "↪ "), one of pattern: 23 rows, and
    // the prompt. With "Allow? [y/N]" that is 24, the terminal's height; with the piped prompt (3 rows) 26, and the
    // rows naming victim.txt are out of sight.
    const script = `requestExecPermission(["rm"], (p) => p.exec("rm", ["-f", "victim.txt", " ".repeat(1500), "build/tmp.txt"]));\nprintln("ran");\n`;
    // The person types the code the prompt in sight shows, if it shows one.
    const inSight = (shown: string): string => [...shown.matchAll(/type (\d{6}); anything else refuses/g)].at(-1)?.[1] ?? "";
    const run = await onTerminal(w, ["run", "--config", config, w.script(script)], { answers: [inSight], size: SMALL, stdoutPiped: true, prompt: "anything else refuses:" });
    expect(w.exists("victim.txt"), run.all).toBe(true);
    expect(run.all).toMatch(/tacit: the code of this question is \d{6}; it is taller than your terminal/);
    expect(run.all).toMatch(/This question is 26 lines long and your terminal shows 24/);
    expect(run.all).not.toContain("ran");
  });

  it("runs when the person types the code from its first line; a short question on the same terminal is still a y", async () => {
    const w = world();
    w.file("victim.txt");
    w.file("build/tmp.txt");
    const config = w.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm"] } });
    const code = (shown: string): string => /the code of this question is (\d{6})/.exec(shown)?.[1] ?? "";
    const run = await onTerminal(w, ["run", "--config", config, w.script(padded)], { answers: [code], size: SMALL, prompt: "anything else refuses:" });
    expect(run.prompts, run.all).toBe(1);
    expect(run.all).toContain("ran");
    expect(w.exists("victim.txt")).toBe(false);

    // The control: a question that fits is asked as before.
    const short = `requestExecPermission(["rm"], (p) => p.exec("rm", ["build/tmp.txt"]));\nprintln("ran");\n`;
    const plain = await onTerminal(w, ["run", "--config", config, w.script(short, "short.ts")], { answers: ["y"], size: SMALL });
    expect(plain.prompts, plain.all).toBe(1);
    expect(plain.all).not.toContain("the code of this question");
    expect(plain.all).toContain("ran");
    expect(w.exists("build/tmp.txt")).toBe(false);
  });
});
