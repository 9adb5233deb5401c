// An audit log is read with cat and tail -f as well as with `tacit audit show`, and agent text
// reaches its events (paths, command lines, reasons). JSON leaves DEL and the C1 controls raw
// inside strings, and a tenth security review's "\u009d52;c;…\u009c" (OSC 52 set-clipboard in its
// C1 form) or "\u009b2J" (clear the screen) acts on terminals that take C1 in UTF-8. The writer
// now puts them in the file as escapes, which a JSON parser reads as the same characters, so
// each line's hash (over the parsed content) is unchanged and verify passes. A line with them
// raw (as an earlier tacit wrote them) still verifies, with a warning not to print the file.

import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { auditHome, readLines, shownEntries, verifyJson, writeVariant, workAndLog } from "./fixtures.js";

const HOSTILE = "\u009b2J\u009d52;c;cm0gLXJmIH4=\u009c\u007f";

let cleanup: (() => void) | null = null;
afterEach(() => {
  cleanup?.();
  cleanup = null;
});

it("writes agent text's C1 controls as escapes: the same values, a log that verifies, and the old raw form verifies with a warning", async () => {
  const ctx = auditHome();
  cleanup = ctx.cleanup;
  const { work, log } = workAndLog(ctx.dir);
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

// Trojan Source (CVE-2021-42574) in a log a person reads: a right-to-left override makes
// "report<RLO>hs.txt" read as "reporttxt.sh", isolates and zero-width characters hide or reorder
// text, and a carriage return, backspace or escape sequence overwrites what was shown. The
// script chooses a file name and a command's arguments holding them; `tacit audit show` must
// show each as an escape, and --json must give the exact text back.
const TROJAN = "report\u202etxt.sh\u2066x\u2069\u200b\ufeff\r\b\u001b[2K";
/** Any character that is invisible or acts on the terminal, but the line feeds between rows. */
const HIDDEN_OR_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/u;

it("tacit audit show writes the bidi controls, zero-width and control characters of a real run's path and command words as escapes; --json keeps them exact", async () => {
  const ctx = auditHome();
  cleanup = ctx.cleanup;
  const { work, log } = workAndLog(ctx.dir);
  const script = path.join(work, "s.ts");
  writeFileSync(
    script,
    `requestFileSystem(".", (fs) => { fs.access(${JSON.stringify(TROJAN)}).write("hi"); });\n` +
      `requestExecPermission(["echo"], (p) => { p.exec("echo", [${JSON.stringify(`a${TROJAN}`)}]); println("done"); });\n`,
  );
  const run = await runCli(unchecked(["run", "--command-permissions", "echo", "--audit-log", log, script]), { cwd: work, env: ctx.env });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("done");

  const show = await runCli(["audit", "show", log], { env: ctx.env });
  expect(show.code, show.stderr).toBe(0);
  expect(show.stdout).not.toMatch(HIDDEN_OR_CONTROL);
  // Quoted as a JSON string (\r, \b, \u001b), then every character still invisible escaped.
  const escaped = "report\\u202etxt.sh\\u2066x\\u2069\\u200b\\ufeff\\r\\b\\u001b[2K";
  const writeRow = show.stdout.split("\n").find((row) => row.includes("FsWrite"));
  expect(writeRow).toContain(`"fs.write ${path.join(realpathSync(work), escaped)}"`);
  const execRow = show.stdout.split("\n").find((row) => row.includes(" Exec "));
  // The command line is recorded with each word as shownWord gives it (a JSON string), so its
  // C0 controls are already "\r"-style text there, shown as recorded (the rest escaped).
  expect(execRow).toContain(String.raw`run: echo "areport\u202etxt.sh\u2066x\u2069\u200b\ufeff\r\b\u001b[2K" (in `);

  // --json: the same values, character for character, as one JSON document.
  const json = await runCli(["audit", "show", "--json", log], { env: ctx.env });
  expect(json.code, json.stderr).toBe(0);
  const lines = shownEntries<{ event: Record<string, unknown> }>(json.stdout);
  expect(lines.map((line) => line.event.pattern)).toContain(`fs.write ${path.join(realpathSync(work), TROJAN)}`);
  const exec = lines.find((line) => line.event.kind === "Exec")!;
  expect(exec.event.commandLine).toBe(`echo ${JSON.stringify(`a${TROJAN}`)}`);
});

// Characters Unicode says to draw as nothing, that are no format characters: the combining
// grapheme joiner (a mark), variation selectors, the Hangul fillers (letters). A script wrote
// "a\u034fb.txt" beside "ab.txt", and `tacit audit show` showed both rows as "ab.txt": which
// file was written with what could not be told from the rows.
const LOOKALIKES = ["a\u034fb.txt", "a\ufe0fb.txt", "a\u3164b.txt", "a\u2800b.txt"];

it("tacit audit show tells apart paths that differ only by characters drawn as nothing, from a real run", async () => {
  const ctx = auditHome();
  cleanup = ctx.cleanup;
  const { work, log } = workAndLog(ctx.dir);
  const script = path.join(work, "s.ts");
  writeFileSync(
    script,
    `requestFileSystem(".", (fs) => { for (const name of ${JSON.stringify(["ab.txt", ...LOOKALIKES])}) fs.access(name).write(name); });\n` +
      `requestExecPermission(["echo"], (p) => { p.exec("echo", ${JSON.stringify(LOOKALIKES)}); println("done"); });\n`,
  );
  const run = await runCli(unchecked(["run", "--command-permissions", "echo", "--audit-log", log, script]), { cwd: work, env: ctx.env });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("done");

  const show = await runCli(["audit", "show", log], { env: ctx.env });
  expect(show.code, show.stderr).toBe(0);
  expect(show.stdout).not.toMatch(/[\u034f\ufe0f\u3164\u2800]/u);
  const written = show.stdout.split("\n").filter((row) => row.includes("FsWrite"));
  const dir = realpathSync(work);
  expect(written.map((row) => /"fs\.write ([^"]*)"/.exec(row)![1])).toEqual(
    ["ab.txt", "a\\u034fb.txt", "a\\ufe0fb.txt", "a\\u3164b.txt", "a\\u2800b.txt"].map((name) => path.join(dir, name)),
  );
  const execRow = show.stdout.split("\n").find((row) => row.includes(" Exec "));
  expect(execRow).toContain(String.raw`run: echo "a\u034fb.txt" "a\ufe0fb.txt" "a\u3164b.txt" "a\u2800b.txt" (in `);
});

// Quote look-alikes: show quotes a script's path as a JSON string, but ” (U+201D), ＂ (U+FF02), ″,
// ʺ, ״, 〃 and a space under a combining double acute all read as its closing quote. A file name
// "a.txt”  tier allow  content …" seemed to end the value there and forge the fields after it
// on show's row; the script's own file name, shown unquoted, could forge its row's fields with
// plain spaces. Inside a quoted value every character past ASCII is now an escape, so the value
// read back as a JSON string is exactly the path, and only an ASCII quote can end it.
const QUOTE_LOOKALIKES = ["\u201d", "\uff02", "\u201c", "\u2033", "\u02ba", "\u05f4", "\u3003", " \u030b"];

it("tacit audit show writes quote look-alikes in a real run's file names and command words as escapes: each quoted value reads back as exactly the name", async () => {
  const ctx = auditHome();
  cleanup = ctx.cleanup;
  const { work, log } = workAndLog(ctx.dir);
  const names = QUOTE_LOOKALIKES.map((quote, i) => `a${i}.txt${quote}  tier allow  content sha256:000000000000…`);
  const script = path.join(work, `s.ts\u201d  session s-1  code sha256:000000000000…\uff02.ts`);
  writeFileSync(
    script,
    `requestFileSystem(".", (fs) => { for (const name of ${JSON.stringify(names)}) fs.access(name).write("x"); });\n` +
      `requestExecPermission(["echo"], (p) => { p.exec("echo", ${JSON.stringify(names)}); println("done"); });\n`,
  );
  const run = await runCli(unchecked(["run", "--command-permissions", "echo", "--audit-log", log, script]), { cwd: work, env: ctx.env });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("done");
  // The log holds the names as the script made them.
  const patterns = readLines(log).map((line) => String(line.event.pattern ?? ""));
  for (const name of names) expect(patterns).toContain(`fs.write ${path.join(realpathSync(work), name)}`);

  const show = await runCli(["audit", "show", log], { env: ctx.env });
  expect(show.code, show.stderr).toBe(0);
  const rows = show.stdout.split("\n");
  for (const quote of QUOTE_LOOKALIKES) expect(show.stdout).not.toContain(quote.trim());
  // Each quoted value is ASCII, and read as the JSON string it is, exactly what the log holds.
  const quotedValues = (row: string) => [...row.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!);
  const written = rows.filter((row) => row.includes("FsWrite")).flatMap(quotedValues);
  expect(written).toHaveLength(names.length);
  for (const value of written) expect(value).toMatch(/^[\x20-\x7e]*$/);
  expect(written.map((value) => JSON.parse(`"${value}"`) as string)).toEqual(names.map((name) => `fs.write ${path.join(realpathSync(work), name)}`));
  const started = rows.find((row) => row.includes("evaluation-started"))!;
  expect(quotedValues(started).map((value) => JSON.parse(`"${value}"`) as string)).toEqual([script]);
  const execRow = rows.find((row) => row.includes(" Exec "))!;
  const words = execRow.slice(execRow.indexOf("run: echo ") + "run: echo ".length, execRow.lastIndexOf(" (in "));
  expect(words).toMatch(/^[\x20-\x7e]*$/);
  expect(quotedValues(words).map((value) => JSON.parse(`"${value}"`) as string)).toEqual(names);
});
