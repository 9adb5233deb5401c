// --json of `tacit audit show`, `tacit audit verify` and `tacit approvals list` on a terminal.
// JSON.stringify leaves bidirectional controls, zero-width and other format characters, and the
// line and paragraph separators raw inside strings, and a script chooses the paths and words the
// log and the approvals hold: a security review's file "report\u202etxt.sh" read "reporths.txt"
// in `tacit audit show --json` on a terminal that lays out bidirectional text, while the text form
// showed it escaped. On a terminal they are now JSON \uXXXX escapes: the same value to a parser.
// Piped, the output is byte for byte what it was. The terminal is a real pseudo-terminal, made by
// util-linux's script(1), around the real CLI.

import { spawnSync } from "node:child_process";
import { realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { singleQuoted } from "../../runner/shell-word.js";
import { childEnv, runCli, tacitBin, unchecked } from "../helpers.js";
import { auditHome, shownEntries, workAndLog } from "./fixtures.js";

/** A right-to-left override and its end, an isolate, zero-width characters, a line separator, a tag character. */
const HIDDEN = "report\u202etxt.sh\u202c\u2066x\u2069\u200b\u2060\u2028\u{e0041}";
/** What a terminal must not be given raw. */
const RAW_HIDDEN = /[\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|\u{e0041}/u;

/** tacit with `args`, its standard output a pseudo-terminal; what it wrote there, with the terminal's \r\n made \n. */
function onTerminal(args: string[], env: Record<string, string>): { status: number | null; output: string } {
  const command = ["node", tacitBin, ...args].map(singleQuoted).join(" ");
  const result = spawnSync("script", ["-qec", command, "/dev/null"], { env: childEnv(env), encoding: "utf8", timeout: 60_000 });
  return { status: result.status, output: result.stdout.replace(/\r\n/g, "\n") };
}

let ctx: ReturnType<typeof auditHome>;
beforeEach(() => {
  ctx = auditHome();
});
afterEach(() => ctx.cleanup());

it("audit show --json, audit verify --json and approvals list --json escape on a terminal what JSON leaves raw, and read as the same values", async () => {
  const { work, log } = workAndLog(ctx.dir);
  writeFileSync(path.join(work, "s.ts"), `requestFileSystem(".", (fs) => { fs.access(${JSON.stringify(HIDDEN)}).write("hi"); println("written"); });\n`);
  const run = await runCli(unchecked(["run", "--audit-log", log, "s.ts"]), { cwd: work, env: ctx.env });
  expect(run.code, run.stderr).toBe(0);
  const pattern = `fs.write ${path.join(realpathSync(work), HIDDEN)}`;

  const show = onTerminal(["audit", "show", "--json", log], ctx.env);
  expect(show.status, show.output).toBe(0);
  expect(show.output).not.toMatch(RAW_HIDDEN);
  expect(show.output).toContain("report\\u202etxt.sh\\u202c\\u2066x\\u2069\\u200b\\u2060\\u2028\\udb40\\udc41");
  expect(shownEntries<{ event: Record<string, unknown> }>(show.output).map((line) => line.event.pattern)).toContain(pattern);

  const verify = onTerminal(["audit", "verify", "--json", log], ctx.env);
  expect(verify.status, verify.output).toBe(0);
  expect(verify.output).not.toMatch(RAW_HIDDEN);
  expect((JSON.parse(verify.output) as { file: string; ok: boolean }).ok).toBe(true);

  const grant = await runCli(["approvals", "grant", pattern], { cwd: work, env: ctx.env });
  expect(grant.code, grant.stderr).toBe(0);
  const list = onTerminal(["approvals", "list", "--json"], ctx.env);
  expect(list.status, list.output).toBe(0);
  expect(list.output).not.toMatch(RAW_HIDDEN);
  expect((JSON.parse(list.output) as Array<{ pattern: string }>).map((a) => a.pattern)).toEqual([pattern]);

  // Piped, not a terminal: exactly as JSON.stringify made it.
  const piped = await runCli(["approvals", "list", "--json"], { env: ctx.env });
  expect(piped.stdout).toContain(HIDDEN);
});
