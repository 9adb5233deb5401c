// runner/parser.ts loads oxc's native binding directly and unwraps its result itself. It must
// give exactly what oxc-parser's own entry gives, literals JSON cannot carry included.

import { parseSync as packageParseSync } from "oxc-parser";
import { describe, expect, it } from "vitest";
import { parserSource, parseSync } from "../../runner/parser.js";

const SOURCES: Record<string, string> = {
  "bigint and regexp literals": "const big = 123n;\nconst re = /a(b)+c/giu;\nconst nested = { deep: [1, [2n, /x/y]] };\n",
  "an invalid regexp flag for this Node": "const re = /a/v; const other = /(?<name>b)/d;\n",
  typescript: "type T = { a: number } & Record<string, unknown>;\nfunction f<X extends T>(x: X): X { return x as X; }\nenum E { A = 1 }\n",
  "syntax errors": "const = ;\nfunction (\n",
  "comments and module syntax": 'import { println } from "tacit";\n// a comment\n/* block */ export const x = 1;\n',
};

describe("the oxc parser, loaded from its native binding", () => {
  it("is loaded from the binding on this platform (the fast path)", () => {
    if ((process.platform === "linux" || process.platform === "darwin") && ["x64", "arm64"].includes(process.arch)) {
      expect(parserSource()).toBe("binding");
    }
  });

  for (const [what, source] of Object.entries(SOURCES)) {
    it(`gives what oxc-parser gives: ${what}`, () => {
      for (const options of [{ lang: "ts", sourceType: "module", astType: "ts", range: true }, { lang: "ts", sourceType: "module", astType: "ts" }] as const) {
        const ours = parseSync("script.ts", source, options);
        const theirs = packageParseSync("script.ts", source, options);
        expect(ours.program).toEqual(theirs.program);
        expect(ours.errors).toEqual(theirs.errors);
        expect(ours.comments).toEqual(theirs.comments);
        expect(ours.module).toEqual(theirs.module);
      }
    });
  }

  it("rebuilds BigInt and RegExp values", () => {
    const { program } = parseSync("script.ts", "1n; /ab+/g;", { lang: "ts", sourceType: "module", astType: "ts" });
    const values = program.body.map((statement) => (statement.type === "ExpressionStatement" && statement.expression.type === "Literal" ? statement.expression.value : null));
    expect(values[0]).toBe(1n);
    expect(values[1]).toBeInstanceOf(RegExp);
    expect(String(values[1])).toBe("/ab+/g");
  });
});
