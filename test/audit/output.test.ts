// Prints in the audit log: each is no action of its own (three lines: requested, decided,
// result), but part of one "output" event for the prints between two other events, with their
// count, size and one digest. A loop of prints, which waits for no answer, made the log grow
// three lines a print as fast as the pipe took them.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { auditHome, type Line, readLines, verifyJson, workAndLog } from "./fixtures.js";

const PRINTS_BEFORE = 2_000;

const SCRIPT = `
for (let i = 0; i < ${PRINTS_BEFORE}; i++) println("line", i);
requestFileSystem(".", (fs) => println(fs.access("script.ts").size > 0));
print("last");
`;

describe("prints in the audit log of a real tacit run", () => {
  let ctx: ReturnType<typeof auditHome>;
  let log: string;
  let lines: Line[];
  let stdout: string;

  beforeAll(async () => {
    ctx = auditHome();
    // The log outside the allowed root (the working directory).
    let work: string;
    ({ work, log } = workAndLog(ctx.dir));
    writeFileSync(path.join(work, "script.ts"), SCRIPT);
    const run = await runCli(unchecked(["run", "--audit-log", log, "script.ts"]), { cwd: work, env: ctx.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    stdout = run.stdout;
    lines = readLines(log);
  }, 60_000);
  afterAll(() => ctx.cleanup());

  it("are one output event per run of prints between other events, in order, and the log verifies", async () => {
    expect(stdout.split("\n")).toHaveLength(PRINTS_BEFORE + 2);
    const types = lines.map((line) => line.event.type);
    expect(types.filter((type) => type === "action-requested")).toHaveLength(3); // open, size, close
    expect(lines.some((line) => line.event.type === "action-requested" && line.event.kind === "Print")).toBe(false);
    const outputs = lines.filter((line) => line.event.type === "output").map((line) => line.event);
    // The loop's prints, the one inside the scope, the last one: three runs of prints.
    expect(outputs.map((event) => event.prints)).toEqual([PRINTS_BEFORE, 1, 1]);
    for (const event of outputs) expect(event.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The first comes before the scope opens, the last after it closes and before the end.
    const first = types.indexOf("output");
    expect(types[first + 1]).toBe("action-requested");
    expect(types.at(-3)).toBe("output");
    expect(types.at(-2)).toBe("evaluation-ended");
    expect(lines.length).toBeLessThan(20);

    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report).toMatchObject({ ok: true, problems: [] });
  });

  it("are shown by tacit audit show", async () => {
    const shown = await runCli(["audit", "show", log], { env: ctx.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`output +eval \\S+  printed ${PRINTS_BEFORE}×  \\d+ B  sha256:[0-9a-f]{12}…`));
  });
});
