// What a line typed on the terminal answers: one question, the one shown, and only y or yes
// alone is a yes (terminal.test.ts has Enter, "sure" and "nope"; here what a paste or a
// keystroke more brings).

import { describe, expect, it } from "vitest";
import { onTerminal, worlds } from "./fixtures.js";

const world = worlds("tacit-answers-", { concurrent: true });

/** Deletes each of `names` in turn, saying which it kept. */
function deleteEach(names: readonly string[]): string {
  return (
    `requestFileSystem(".", (fs) => {\n  for (const name of ${JSON.stringify(names)}) {\n` +
    `    try { fs.access(name).delete(); println("deleted", name); } catch (e) { println("kept", name, e instanceof SecurityError); }\n  }\n});\n`
  );
}

describe.concurrent("answers typed on the terminal", () => {
  it("a pasted block of three y lines answers the question shown, not the two asked after it", async () => {
    const w = world();
    const names = ["1", "2", "3"];
    for (const name of names) w.file(name);
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    // All three lines at the first question; the later questions get Enter.
    const run = await onTerminal(w, ["run", "--config", config, w.script(deleteEach(names))], { answers: ["y\ny\ny"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts, run.all).toBe(3);
    expect(names.filter((name) => w.exists(name)), run.all).toEqual(["2", "3"]);
  });

  it("y with more on its line, or a key's escape sequence after it, is a no; yes ended by a carriage return is a yes", async () => {
    const w = world();
    const names = ["1", "2", "3", "4"];
    for (const name of names) w.file(name);
    const config = w.config([{ action: "fs.delete", tier: "always-ask" }]);
    const run = await onTerminal(w, ["run", "--config", config, w.script(deleteEach(names))], { answers: ["y foo", "yes\r", "y\u001b[A", "yy"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts, run.all).toBe(4);
    expect(names.filter((name) => w.exists(name)), run.all).toEqual(["1", "3", "4"]);
  });
});
