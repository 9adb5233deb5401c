// SessionParse (runner/session-parse.ts): a session's program parsed a snippet at a time must
// be the whole program's parse, node for node, and the checks must say the same of it.

import { describe, expect, it } from "vitest";
import { parseSync, PROGRAM_OPTIONS } from "../../runner/parser.js";
import { SessionParse } from "../../runner/session-parse.js";
import { validate } from "../../runner/validator.js";

/** Snippets that parse, in an order a session could run them (each ends differently). */
const EARLIER = [
  "#!/usr/bin/env tacit\nconst a = 1",
  "a + 1",
  "let b = a\nb",
  'import { println } from "tacit";\nprintln(b);',
  "(b)",
  "`t${b}`",
  "/re/.test(String(b))",
  "// only a comment",
  "",
  "/* block */ b",
  "function f(x: number): number {\n  return x * 2\n}",
  "class C { m() { return f(1) } }",
  "enum E { A = 1, B = A + 1 }",
  "namespace N { export const q = 1 }",
  "type T = { n: number };\nconst t: T = { n: 2 };",
  "'use strict'; b",
  "[1, 2].map((x) => x + b)",
  "label: for (;;) { break label }",
  "b\n",
  "b;\n;",
];

/** New snippets to check behind them: fine ones, refused ones, and ones that do not parse. */
const FRESH = [
  "b * 2",
  "#!/not/a/hashbang/here\n1",
  "'use strict'\nb",
  "(f)(3)",
  "`${a}`",
  "const q = N.q + E.B",
  "Deno.exit(1)",
  "declare const secret: string",
  "1 +",
  "/* unterminated",
  "",
  "let z = classify('s').map((s) => println(s))",
  "import { readFile } from \"node:fs\"",
];

function joined(snippets: readonly string[]): string {
  return snippets.map((snippet) => `${snippet}\n;\n`).join("");
}

describe("SessionParse", () => {
  it("joins kept snippets and a new one into the whole program's parse, node for node", () => {
    for (let kept = 0; kept <= EARLIER.length; kept++) {
      const session = new SessionParse();
      for (const snippet of EARLIER.slice(0, kept)) session.append(snippet);
      const prefix = joined(EARLIER.slice(0, kept));
      for (const fresh of FRESH) {
        const whole = parseSync("script.ts", prefix + fresh, PROGRAM_OPTIONS);
        const pieced = session.programWith(fresh);
        if (whole.errors.length > 0) {
          // The caller parses the whole text then, which reports the error where the whole puts it.
          expect(pieced, `${kept} kept, then ${JSON.stringify(fresh)}`).toBeNull();
          continue;
        }
        expect(pieced, `${kept} kept, then ${JSON.stringify(fresh)}`).not.toBeNull();
        expect(JSON.stringify(pieced!.program), `${kept} kept, then ${JSON.stringify(fresh)}`).toBe(JSON.stringify(whole.program));
        expect(JSON.stringify(pieced!.comments)).toBe(JSON.stringify(whole.comments));
      }
    }
  });

  it("gives the validator the same verdicts, diagnostics and rewrites as a whole parse", () => {
    const session = new SessionParse();
    const accepted: string[] = [];
    for (const snippet of [...EARLIER, ...FRESH]) {
      const code = joined(accepted) + snippet;
      const alone = validate(code, "script.ts", snippet);
      const pieced = validate(code, "script.ts", snippet, () => session.programWith(snippet));
      expect(pieced, JSON.stringify(snippet)).toEqual(alone);
      if (alone.ok) {
        accepted.push(snippet);
        session.append(snippet);
      }
    }
    expect(accepted.length).toBeGreaterThan(EARLIER.length);
  });

  it("stops keeping parses past a session's limit, and then leaves the whole parse to the caller", () => {
    const session = new SessionParse();
    const big = `const big = ${JSON.stringify("x".repeat(150 * 1024))}`;
    session.append(big);
    expect(session.programWith("big.length")).not.toBeNull();
    session.append("const other = big");
    session.append("const more = other");
    expect(session.programWith("more.length")).not.toBeNull();
    session.append(`const huge = ${JSON.stringify("y".repeat(150 * 1024))}`);
    expect(session.programWith("huge.length")).toBeNull();
    session.append("1");
    expect(session.programWith("2")).toBeNull();
    session.release();
  });

  it("keeps at most a shared amount for all sessions together; an ended session gives its share back", () => {
    const snippet = `const s = ${JSON.stringify("z".repeat(200 * 1024))}`;
    const sessions = Array.from({ length: 12 }, () => new SessionParse());
    for (const session of sessions) session.append(snippet);
    const keeping = sessions.filter((session) => session.programWith("s.length") !== null);
    expect(keeping.length).toBeGreaterThan(0);
    expect(keeping.length).toBeLessThan(sessions.length);
    for (const session of keeping) session.release();
    const later = new SessionParse();
    later.append(snippet);
    expect(later.programWith("s.length")).not.toBeNull();
    later.release();
    for (const session of sessions) session.release();
  });
});
