// Two tacit processes can append to one secure output at once: two runs started side by side,
// a run beside tacit serve. A println went to the file in several writes (its text, each
// classified value when it was computed, the rest of the line), so lines of two runs printing at
// the same time were mixed in the file: "A-start-35 <A's plaintext>B-start-404 <B's plaintext>
// B-end", and which plaintext belonged to which line could not be told. Each write now ends at a
// line break, and an O_APPEND write to a regular file lands whole.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const LINES = 2000;

/**
 * Prints LINES lines, each with a classified value in its middle, once the other run has started
 * (each leaves a file the other waits for), so that the two print at the same time.
 */
function printer(tag: string, other: string): string {
  return `
requestFileSystem(".", (fs) => {
  fs.access("started-${tag}").write("");
  for (let i = 0; i < 1_000_000 && !fs.access("started-${other}").exists; i++);
});
const secret = classify("${tag}".repeat(40));
for (let i = 0; i < ${LINES}; i++) println("${tag}-start-" + i, secret, "${tag}-end");
`;
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("the secure output, written by two runs at once", () => {
  it("holds each printed line whole, with its own run's plaintext", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-sink-lines-");
    cleanups.push(cleanup);
    const work = path.join(dir, "work");
    mkdirSync(work);
    writeFileSync(path.join(work, "a.ts"), printer("A", "B"));
    writeFileSync(path.join(work, "b.ts"), printer("B", "A"));
    const sink = path.join(dir, "secure.log");
    const runs = await Promise.all(
      ["a.ts", "b.ts"].map((script) => runCli(["run", "--no-check", "--secure-output", sink, script], { cwd: work, env })),
    );
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0 });

    const lines = readFileSync(sink, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines).toHaveLength(2 * LINES);
    const mixed = lines.filter((line) => !/^(?:A-start-\d+ A{40} A-end|B-start-\d+ B{40} B-end)$/.test(line));
    expect(mixed.slice(0, 3)).toEqual([]);
  });
});
