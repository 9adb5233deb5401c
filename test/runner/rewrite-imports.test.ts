// Unit tests of rewriteForSandbox's import rewriting (runner/rewrite-imports.ts): `import … from "tacit"`
// becomes a read of the sandbox's library object, and every other character keeps its
// line and column so that positions in runtime errors point at the agent's own source.

import { describe, expect, it } from "vitest";
import { LIBRARY_GLOBAL } from "../../library/protocol.js";
import { rewriteForSandbox } from "../../runner/rewrite-imports.js";
import { validate } from "../../runner/validator.js";

function rewrite(code: string): string {
  const result = validate(code);
  expect(result.diagnostics).toEqual([]);
  return rewriteForSandbox(code, result.tacitImports);
}

/** Runs rewritten (plain JavaScript) code with a fake library object; returns `result`'s value. */
function execute(code: string, library: Record<string, unknown>, result: string): unknown {
  return new Function(LIBRARY_GLOBAL, `${code}\nreturn (${result});`)(library);
}

/** 1-based line:column of the first `needle`. */
function positionOf(code: string, needle: string): { line: number; column: number } {
  const index = code.indexOf(needle);
  if (index < 0) throw new Error(`test bug: ${needle} not found`);
  const before = code.slice(0, index);
  return { line: before.split("\n").length, column: index - before.lastIndexOf("\n") };
}

const L = LIBRARY_GLOBAL;

/**
 * The rewriter pads its replacement with blanks to the import's own shape (so later columns
 * keep their place) and writes it compactly; compare text up to that spacing.
 */
function squash(text: string): string {
  return text.replace(/[ \t]*([{}=,:;])[ \t]*/g, "$1").replace(/[ \t]+$/gm, "");
}

describe("rewriteForSandbox: tacit imports", () => {
  it("leaves code without tacit imports unchanged", () => {
    const code = 'const a = 1;\nprintln(a, "import { x } from \\"tacit\\"");\n';
    expect(squash(rewrite(code))).toBe(squash(code));
  });

  it("turns named imports into a destructuring of the library object", () => {
    expect(squash(rewrite('import { println, print } from "tacit";\nprintln(1);'))).toBe(squash(`const { println, print } = ${L};\nprintln(1);`));
  });

  it("handles `as` aliases", () => {
    const code = 'import { println as say, print } from "tacit";\nsay(print);';
    expect(squash(rewrite(code))).toBe(squash(`const { println: say, print } = ${L};\nsay(print);`));
    const println = (): void => undefined;
    const print = (): void => undefined;
    expect(execute(rewrite(code), { println, print }, "[say, print]")).toEqual([println, print]);
  });

  it("handles namespace imports", () => {
    const code = 'import * as tacit from "tacit";\ntacit.println(1);';
    expect(squash(rewrite(code))).toBe(squash(`const tacit = ${L};\ntacit.println(1);`));
    const library = { println: () => undefined };
    expect(execute(rewrite(code), library, "tacit")).toBe(library);
  });

  it("drops type-only imports, and type-only names from a mixed import", () => {
    // An empty statement where the import was: it still ends the statement before it (test/attacks/erased-import.test.ts).
    expect(squash(rewrite('import type { FileSystem, GrepMatch } from "tacit";\nlet g: GrepMatch | undefined;'))).toBe(squash(";\nlet g: GrepMatch | undefined;"));
    expect(squash(rewrite('import type * as T from "tacit";\nlet f: T.FileSystem | undefined;'))).toBe(squash(";\nlet f: T.FileSystem | undefined;"));
    const mixed = 'import { type FileEntry, println, type FileSystem as FS } from "tacit";\nprintln(1);';
    expect(squash(rewrite(mixed))).toBe(squash(`const { println } = ${L};\nprintln(1);`));
    // A type named in a value import has nothing to bind at run time either.
    expect(squash(rewrite('import { FileSystem, print } from "tacit";\nprint(1);'))).toBe(squash(`const { print } = ${L};\nprint(1);`));
  });

  it("keeps line numbers after a multi-line import", () => {
    const code = [
      "// header",
      "import {",
      "  println,",
      "  print as p,",
      "  readInput,",
      '} from "tacit";',
      "const value = readInput();",
      "  p(value); println(value);",
    ].join("\n");
    const rewritten = rewrite(code);
    const before = code.split("\n");
    const after = rewritten.split("\n");
    expect(after).toHaveLength(before.length);
    expect(after[0]).toBe("// header");
    expect(after.slice(6)).toEqual(before.slice(6));
    expect(positionOf(rewritten, "p(value)")).toEqual(positionOf(code, "p(value)"));
    expect(execute(rewritten, { println: () => undefined, print: () => undefined, readInput: () => "in" }, "value")).toBe("in");
  });

  it("keeps line numbers with CRLF line endings", () => {
    const code = 'import {\r\n  println,\r\n} from "tacit";\r\nthrow new Error("x");\r\n';
    const rewritten = rewrite(code);
    expect(positionOf(rewritten, "throw")).toEqual({ line: 4, column: 1 });
  });

  it("rewrites several imports, in any order, and nothing else", () => {
    const code = 'const a = 1;\nimport { println } from "tacit";\nconst b = 2;\nimport * as t from "tacit";\nconst c = 3;';
    expect(squash(rewrite(code))).toBe(squash(`const a = 1;\nconst { println } = ${L};\nconst b = 2;\nconst t = ${L};\nconst c = 3;`));
    // The rewriter sorts the imports itself.
    const imports = [...validate(code).tacitImports].reverse();
    expect(rewriteForSandbox(code, imports)).toBe(rewrite(code));
  });

  // Regression (rewrite-imports, fixed): the replacement is shorter than the import it replaces, so code
  // after the import on the same line moves left. Through the CLI,
  // `import { println } from "tacit"; throw new Error("x")` reports script.ts:1:36, not 1:40.
  it("keeps the column of code after the import on the same line", () => {
    const code = 'import { println } from "tacit"; throw new Error("x");';
    expect(positionOf(rewrite(code), "throw")).toEqual(positionOf(code, "throw"));
    const aliased = 'import { println as p } from "tacit"; import * as t from "tacit"; p(t);';
    expect(positionOf(rewrite(aliased), "p(t)")).toEqual(positionOf(aliased, "p(t)"));
  });
});
