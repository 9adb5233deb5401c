// What the person sees of a question on the terminal, modelled (screen-model.ts) from what was
// written to it. On a terminal, tacit shows the script's escape sequences as text; piped
// (`tacit run s.ts | tee out.log`), they reach the terminal as they are, just before the question,
// and can leave it in a state that shows the question as something else, code and all. The
// "person" answers by what the screen shows.

import { describe, expect, it } from "vitest";
import { onTerminal, worlds } from "./fixtures.js";
import { ScreenModel } from "./screen-model.js";

const world = worlds("tacit-question-screen-", { concurrent: true });

const SIZE = { rows: 24, columns: 80 };

/** Reads 20 times, so that what the script printed before has gone through the pipe before the question. */
const settle = `requestFileSystem(".", (fs) => { for (let i = 0; i < 20; i++) fs.access("victim.txt").read(); });\n`;

/** The code a piped question shows, for a person who would allow what they read. */
function codeOf(shown: string): string {
  return [...shown.matchAll(/type (\d{6}); anything else refuses/g)].at(-1)?.[1] ?? "";
}

/** The screen at the latest prompt, as a person reads it: a row tacit marks as continued ("↪ ") goes on the row above. */
function screenOf(shown: string): string {
  return new ScreenModel(SIZE.rows, SIZE.columns).write(shown).text().replace(/\n\u21aa /g, "");
}

describe.concurrent("a question on the terminal, after the script's output went through a pipe", () => {
  it("is written on fresh rows: text the script painted where it would land does not extend its lines (victim.txt does not read as victim.txt.bak)", async () => {
    const w = world();
    const target = w.file("victim.txt");
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    // The screen cleared, ".bak" painted just past where the question's path lines end, and the
    // cursor put back at the top, where the question would start: its heading takes one row where
    // tacit's reset leaves autowrap off (DEC's soft reset), two where it is on, so both are painted.
    const detailEnd = `  fs.delete ${target}`.length + 1;
    const patternEnd = `  pattern: fs.delete ${target}`.length + 1;
    const painted = [[3, detailEnd], [4, detailEnd], [4, patternEnd], [5, patternEnd]].map(([row, column]) => `\u001b[${row};${column}H.bak`).join("");
    const paint = `print("\u001b[2J" + ${JSON.stringify(painted)} + "\u001b[H");\n`;
    const script = `${paint}${settle}requestFileSystem(".", (fs) => { fs.access("victim.txt").delete(); });\nprintln("deleted");\n`;
    // The person would remove a stale backup, and nothing else.
    const answer = (shown: string): string => (/pattern: fs\.delete \S*victim\.txt\.bak/.test(screenOf(shown)) ? codeOf(shown) : "n");
    const run = await onTerminal(w, ["run", "--config", config, w.script(script)], { answers: [answer], size: SIZE, stdoutPiped: true, prompt: "anything else refuses:" });
    expect(w.exists("victim.txt"), run.all).toBe(true);
    expect(run.prompts, run.all).toBe(1);
    expect(screenOf(run.written)).toContain(`pattern: fs.delete ${target}\n`);
    // (The run's exit code is cat's, at the end of the pipe.)
    expect(run.all).toContain("did not approve it");
  });

  it("wraps its long lines even after the script turned autowrap off: the end of a command line is in sight", async () => {
    const w = world();
    w.file("victim.txt");
    w.file("build/tmp.txt");
    const config = w.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm"] } });
    // With autowrap off, a line longer than the terminal overwrites its last column: the person
    // sees `rm -f build/tmp.txt` and blanks, and victim.txt, at its end, is never shown.
    const script =
      `print("\\u001b[?7l");\n${settle}` +
      `requestExecPermission(["rm"], (p) => p.exec("rm", ["-f", "build/tmp.txt", " ".repeat(200), "victim.txt"]));\nprintln("ran");\n`;
    // The person would remove build/tmp.txt, and nothing else.
    const answer = (shown: string): string => (screenOf(shown).includes("victim.txt") ? "n" : codeOf(shown));
    const run = await onTerminal(w, ["run", "--config", config, w.script(script)], { answers: [answer], size: SIZE, stdoutPiped: true, prompt: "anything else refuses:" });
    expect(w.exists("victim.txt"), run.all).toBe(true);
    expect(run.prompts, run.all).toBe(1);
    expect(screenOf(run.written)).toContain("victim.txt");
    // (The run's exit code is cat's, at the end of the pipe.)
    expect(run.all).toContain("did not approve it");
  });

  it("wraps its long lines on a terminal that follows DEC's soft reset, which turns autowrap off: tacit's own reset does not hide a command line's end", async () => {
    const w = world();
    w.file("victim.txt");
    w.file("build/tmp.txt");
    const config = w.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm"] } });
    // The output is the terminal (the script's escapes would be shown as text): only tacit writes escapes.
    const script = `requestExecPermission(["rm"], (p) => p.exec("rm", ["-f", "build/tmp.txt", " ".repeat(200), "victim.txt"]));\nprintln("ran");\n`;
    const answer = (shown: string): string => (screenOf(shown).includes("victim.txt") ? "n" : "y");
    const run = await onTerminal(w, ["run", "--config", config, w.script(script)], { answers: [answer], size: SIZE });
    expect(w.exists("victim.txt"), run.all).toBe(true);
    expect(run.prompts, run.all).toBe(1);
    expect(screenOf(run.written)).toContain("victim.txt");
    expect(run.code, run.all).toBe(1);
  });

  it("breaks a long line into rows itself, each continued one marked: an argument cannot lay out rows that read as an answered question and a new one", async () => {
    const w = world();
    w.file("victim.txt");
    w.file("build/tmp.txt");
    const config = w.config([{ action: "exec", command: "rm", tier: "always-ask" }], { libraryConfig: { commandPermissions: ["rm"] } });
    // One argument whose text, wrapped at 80 columns, starts rows with "Allow? [y/N] y" (as if the
    // question about victim.txt had been answered) and a new question's heading and command line.
    const startsAt = `  run: rm -f victim.txt "`.length;
    const row = (text: string): string => text + " ".repeat((80 - (text.length % 80)) % 80);
    const heading = "tacit: a script asks to do something the policy says a person must approve (always-ask):";
    const forged = " ".repeat(80 - startsAt) + row("Allow? [y/N] y") + row(heading) + "  run: rm -f build/tmp.txt";
    const script = `requestExecPermission(["rm"], (p) => p.exec("rm", ["-f", "victim.txt", ${JSON.stringify(forged)}]));\nprintln("ran");\n`;
    // The person reads the question above the prompt, from its heading, and would remove build/tmp.txt only.
    const lastQuestion = (shown: string): string => {
      const rows = screenOf(shown).split("\n");
      const start = rows.findLastIndex((r) => r.startsWith("tacit: a script asks"));
      return rows.slice(start).join("\n");
    };
    const answer = (shown: string): string => (lastQuestion(shown).includes("victim.txt") ? "n" : "y");
    const run = await onTerminal(w, ["run", "--config", config, w.script(script)], { answers: [answer], size: SIZE });
    expect(w.exists("victim.txt"), run.all).toBe(true);
    expect(lastQuestion(run.written)).toContain("victim.txt");
    // On the screen, only tacit's own question starts a row with its heading; the argument's text stands on rows marked continued.
    const rows = new ScreenModel(SIZE.rows, SIZE.columns).write(run.written).text().split("\n");
    expect(rows.filter((r) => r.startsWith("tacit: a script asks")), run.written).toHaveLength(1);
    expect(rows.filter((r) => r.startsWith("Allow? [y/N] y")), run.written).toHaveLength(0);
    expect(run.code, run.all).toBe(1);
  });
});
