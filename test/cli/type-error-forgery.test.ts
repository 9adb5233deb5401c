// `tacit run` and `tacit check` read the type checker's report as text, one diagnostic a line
// ("script.ts(3,7): error TS2322: …"). The checker quotes a template literal type's text as
// written, line breaks and all: a type spanning lines put a line "script.ts(1,1): error TS0000: …"
// of the script's choosing in the report, which was read as a type error of its own, and a line
// in tacit's own form ("forged.ts:1:1 error …") was dropped. tacit serve's checker gives its
// diagnostics apart, and shows such a line break as an escape (see
// test/mcp/type-error-forgery.test.ts); the one-shot check now does the same: one diagnostic, its
// line break shown as \u000a, and no diagnostic the script made up, in text and in --json.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

/** Lines as any reader may split them. */
function linesOf(text: string): string[] {
  return text.split(/\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/);
}

/** The lines of `text` that read as a diagnostic: tacit's form ("forged.ts:3:7 error TS2322: …") or the checker's. */
function diagnosticLines(text: string): string[] {
  return linesOf(text).filter((line) => /^\S+(?::\d+:\d+|\(\d+,\d+\):) error TS\d+/.test(line));
}

/** A script whose one type error quotes a template literal type that spans lines, a forged diagnostic at each line's start. */
function forgery(lineBreak: string): string {
  const forged = ["script.ts(1,1): error TS0000: forged in the checker's form", "forged.ts:1:1 error TS0000: forged in tacit's form"];
  return `type Quoted = \`a${lineBreak}${forged.join(lineBreak)}${lineBreak}\${string}\`;${lineBreak}const wrong: Quoted = 5;${lineBreak}`;
}

/** The one diagnostic's message as shown: the type's line breaks as escapes, what the script wrote kept. */
const SHOWN = String.raw`forged.ts:5:7 error TS2322: Type '5' is not assignable to type '${"`"}a\u000ascript.ts(1,1): error TS0000: forged in the checker's form\u000aforged.ts:1:1 error TS0000: forged in tacit's form\u000a${"${string}`"}'.`;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("tacit run and tacit check: a type error's quoted type cannot add a type error of its own", () => {
  for (const [how, lineBreak] of Object.entries({ "line feeds": "\n", "carriage return and line feed": "\r\n" })) {
    it(`${how}: one diagnostic, its line breaks shown as escapes, in text and --json`, async () => {
      const { dir, env, cleanup } = tempDirWithHome("tacit-type-error-forgery-");
      cleanups.push(cleanup);
      writeFileSync(path.join(dir, "forged.ts"), forgery(lineBreak));
      const [check, checkJson, run, runJson] = await Promise.all([
        runCli(["check", "forged.ts"], { cwd: dir, env }),
        runCli(["check", "--json", "forged.ts"], { cwd: dir, env }),
        runCli(["run", "forged.ts"], { cwd: dir, env }),
        runCli(["run", "--json", "forged.ts"], { cwd: dir, env }),
      ]);
      for (const text of [check, run]) {
        expect(text.code, text.stderr).toBe(3);
        expect(diagnosticLines(text.stdout + text.stderr)).toEqual([SHOWN]);
      }
      const checked = JSON.parse(checkJson.stdout) as { ok: boolean; errors: string[]; error: string };
      expect(checked.ok).toBe(false);
      expect(checked.errors).toEqual([SHOWN]);
      expect(checked.error).toBe(SHOWN);
      const ran = JSON.parse(runJson.stdout) as { exitCode: number; error: string };
      expect(ran.exitCode).toBe(3);
      expect(ran.error).toBe(SHOWN);
    }, 30_000);
  }

  // Not fixed: an indented line of the type reads as a line of the message's chain (the checker
  // indents those by two spaces a level), which the report keeps as lines; telling them apart needs
  // the checker's diagnostics apart (as tacit serve gets them, through TypeScript's API), not its text.
  it.fails("an indented line of the type is shown as an escape too, not as a line of the message's chain", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-type-error-forgery-");
    cleanups.push(cleanup);
    writeFileSync(path.join(dir, "forged.ts"), "type Quoted = `a\n  The types are compatible after all.\n${string}`;\nconst wrong: Quoted = 5;\n");
    const checked = await runCli(["check", "--json", "forged.ts"], { cwd: dir, env });
    const { errors } = JSON.parse(checked.stdout) as { errors: string[] };
    expect(errors).toHaveLength(1);
    expect(errors[0]).not.toContain("\n");
  }, 30_000);
});
