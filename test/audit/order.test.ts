// The order of a long run's audit log, through the real CLI. The writer makes its lines later
// than the events happen (in batches of 256, or 25 ms on; a read's result event is built only
// then), so that hashing stays off the path of each reply: this pins that doing so changes
// nothing in the file. Every action's request, decision and result are consecutive and in the
// order the script acted, each result is that read's own (its digest and size), prints fall
// where they were made, times never go back, and a command sees, when it runs, its own request,
// the policy's decision on it, and every line before them in the file already (an effect is
// logged, decided, before it happens), after more than a batch of reads.

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { auditHome, type Line, readLines, verifyJson, workAndLog } from "./fixtures.js";

const READS = 400;
const FILES = 10;
/** What the script reads from f<i>.txt: different for every file, not all ASCII. */
const contentOf = (i: number): string => `file ${i}: ${"é".repeat(i)}${"x".repeat(40 + i)}\n`;

const SCRIPT = (log: string) => `
requestFileSystem(".", (fs) => {
  for (let i = 0; i < ${READS}; i++) {
    fs.access("f" + (i % ${FILES}) + ".txt").read();
    if (i % 100 === 99) println("read", i + 1);
    if (i === 250) fs.access("out.txt").write("written after 251 reads");
  }
});
requestExecPermission(["cat"], (proc) => {
  // What the log held when the command ran: its last three lines.
  const seen = proc.execOutput("cat", [${JSON.stringify(log)}]).trimEnd().split("\\n").slice(-3).map((line) => JSON.parse(line));
  println(JSON.stringify(seen.map((line) => [line.seq, line.event.type, line.event.action ?? null, line.event.kind ?? null])));
});
`;

describe("the order of a long run's audit log", () => {
  let ctx: ReturnType<typeof auditHome>;
  let work: string;
  let log: string;
  let lines: Line[];
  let stdout: string;

  beforeAll(async () => {
    ctx = auditHome();
    // The log outside the allowed root (the working directory), as it should be.
    ({ work, log } = workAndLog(ctx.dir));
    for (let i = 0; i < FILES; i++) writeFileSync(path.join(work, `f${i}.txt`), contentOf(i));
    writeFileSync(path.join(work, "script.ts"), SCRIPT(log));
    const run = await runCli(["run", "--audit-log", log, "--command-permissions", "cat", "script.ts"], { cwd: work, env: ctx.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    stdout = run.stdout;
    lines = readLines(log);
  }, 60_000);
  afterAll(() => ctx.cleanup());

  it("holds each action's request, decision and result together, in the order the script acted, and verifies", async () => {
    // More than a batch of lines, so lines were made after their replies, in several batches.
    expect(lines.length).toBeGreaterThan(3 * READS);
    expect(lines.map((line) => line.seq)).toEqual(lines.map((_, index) => index + 1));
    expect(lines[0]!.event.type).toBe("evaluation-started");
    expect(lines.slice(-2).map((line) => line.event.type)).toEqual(["evaluation-ended", "head"]);
    let lastAction = 0;
    for (let i = 1; i < lines.length - 2; i++) {
      const event = lines[i]!.event;
      if (event.type === "output") continue;
      expect(event.type, `line ${i + 1}`).toBe("action-requested");
      expect(event.action, `line ${i + 1}`).toBe(++lastAction);
      const [decision, result] = [lines[i + 1]!.event, lines[i + 2]!.event];
      expect([decision.type, decision.action, decision.decision], `line ${i + 2}`).toEqual(["decision", lastAction, "allow"]);
      expect([result.type, result.action, result.ok], `line ${i + 3}`).toEqual(["action-result", lastAction, true]);
      i += 2;
    }
    const times = lines.map((line) => Date.parse(line.time));
    for (let i = 1; i < times.length; i++) expect(times[i], `line ${i + 1}`).toBeGreaterThanOrEqual(times[i - 1]!);
    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report).toMatchObject({ ok: true, lines: lines.length, problems: [], unsignedTail: 0 });
  });

  it("gives each read its own result (the digest and size of what the script received), in the script's order", () => {
    const reads: Array<{ pattern: unknown; digest: unknown; size: unknown }> = [];
    for (let i = 0; i < lines.length; i++) {
      const event = lines[i]!.event;
      if (event.type !== "action-requested" || event.kind !== "FsRead") continue;
      const result = lines[i + 2]!.event;
      reads.push({ pattern: event.pattern, digest: result.digest, size: result.size });
    }
    expect(reads).toHaveLength(READS);
    reads.forEach((read, i) => {
      const file = i % FILES;
      const received = JSON.stringify(contentOf(file));
      expect(read, `read ${i + 1}`).toEqual({
        pattern: `fs.read ${path.join(work, `f${file}.txt`)}`,
        digest: `sha256:${createHash("sha256").update(received).digest("hex")}`,
        size: Buffer.byteLength(received),
      });
    });
    // The write made after read 251 sits between that read and the next.
    const kinds = lines.flatMap((line) => (line.event.type === "action-requested" ? [String(line.event.kind)] : []));
    const write = kinds.indexOf("FsWrite");
    expect(kinds.slice(0, write).filter((kind) => kind === "FsRead")).toHaveLength(251);
    expect(kinds[write + 1]).toBe("FsRead");
    expect(readFileSync(path.join(work, "out.txt"), "utf8")).toBe("written after 251 reads");
  });

  it("logs the prints where they were made: after every hundredth read, and the command's at the end", () => {
    const readsBefore: number[] = [];
    let reads = 0;
    for (const { event } of lines) {
      if (event.type === "action-requested" && event.kind === "FsRead") reads++;
      if (event.type === "output") readsBefore.push(reads);
    }
    expect(readsBefore).toEqual([100, 200, 300, 400, 400]);
    expect(lines.filter((line) => line.event.type === "output").map((line) => line.event.prints)).toEqual([1, 1, 1, 1, 1]);
  });

  it("has a command's request and decision, and every line before them, in the file when the command runs", () => {
    const exec = lines.findIndex((line) => line.event.type === "action-requested" && line.event.kind === "Exec");
    expect(exec).toBeGreaterThan(3 * READS);
    const before = lines[exec - 1]!;
    const seen = JSON.parse(stdout.trimEnd().split("\n").at(-1)!) as unknown;
    // The policy's verdict (allow) is logged once the executor's checks have passed, before it starts the command (gate.ts decideBeforeEffect).
    expect(seen).toEqual([
      [before.seq, before.event.type, before.event.action ?? null, before.event.kind ?? null],
      [lines[exec]!.seq, "action-requested", lines[exec]!.event.action, "Exec"],
      [lines[exec + 1]!.seq, "decision", lines[exec]!.event.action, null],
    ]);
    expect(lines[exec + 1]!.event).toMatchObject({ decision: "allow", via: "policy" });
  });
});
