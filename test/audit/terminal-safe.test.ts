// An audit log is read with cat and tail -f as well as with `tacit audit show`, and agent text
// reaches its events (paths, command lines, reasons). JSON leaves DEL and the C1 controls raw
// inside strings, and a tenth security review's "\u009d52;c;…\u009c" (OSC 52 set-clipboard in its
// C1 form) or "\u009b2J" (clear the screen) acts on terminals that take C1 in UTF-8. The writer
// now puts them in the file as escapes, which a JSON parser reads as the same characters, so
// each line's hash (over the parsed content) is unchanged and verify passes. A line with them
// raw (as an earlier tacit wrote them) still verifies, with a warning not to print the file.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { auditHome, readLines, verifyJson, writeVariant } from "./fixtures.js";

const HOSTILE = "\u009b2J\u009d52;c;cm0gLXJmIH4=\u009c\u007f";

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

it("writes agent text's C1 controls as escapes: the same values, a log that verifies, and the old raw form verifies with a warning", async () => {
  const ctx = auditHome();
  cleanup = ctx.cleanup;
  const work = path.join(ctx.dir, "work");
  mkdirSync(work);
  const log = path.join(ctx.dir, "audit.jsonl");
  const script = path.join(work, "s.ts");
  writeFileSync(script, `requestFileSystem(".", (fs) => { fs.access(${JSON.stringify(`x${HOSTILE}.txt`)}).write("hi"); println("written"); });\n`);
  const run = await runCli(unchecked(["run", "--audit-log", log, script]), { cwd: work, env: ctx.env });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("written");

  const text = readFileSync(log, "utf8");
  expect(text).not.toMatch(/[\u007f-\u009f]/);
  expect(text).toContain("\\u009b2J\\u009d52;c;");
  // Parsed, the log holds the path as the script named it.
  const patterns = readLines(log).map((line) => String(line.event.pattern ?? ""));
  expect(patterns.some((pattern) => pattern.includes(`x${HOSTILE}.txt`))).toBe(true);
  const verified = await verifyJson(log, ctx.env);
  expect(verified.report.ok, verified.result.stdout).toBe(true);
  expect(verified.report.warnings).toEqual([]);

  // The raw form an earlier tacit wrote: the same content and hashes; verified, with a warning.
  const raw = text.replace(/\\u00(7f|[89][0-9a-f])/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  expect(raw).toMatch(/[\u009b]/);
  const legacy = await verifyJson(writeVariant(ctx.dir, "legacy", raw), ctx.env);
  expect(legacy.report.problems).toEqual([]);
  expect(legacy.report.ok).toBe(true);
  expect(legacy.report.warnings.length).toBeGreaterThan(0);
  expect(legacy.report.warnings[0]!.reason).toContain("C1 controls raw");

  // Any other spelling of the same characters is not what tacit writes: an edit.
  const edited = await verifyJson(writeVariant(ctx.dir, "edited", text.replace("\\u009b2J", "\\u009B2J")), ctx.env);
  expect(edited.report.ok).toBe(false);
  expect(edited.report.problems.map((p) => p.reason).join("\n")).toContain("not written as tacit writes it");
});
