// Unit tests of the static validator (runner/validator.ts): every rejection carries the
// right rule id, a 1-based line:column and a hint; ordinary code passes untouched. The
// cases include everything that fooled TACIT's regex validator.

import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type Diagnostic, type RuleId, validate } from "../../runner/validator.js";
import { repoRoot } from "../helpers.js";

/** 1-based line:column of the `occurrence`-th `needle` in `code` (lines split on "\n"). */
function positionOf(code: string, needle: string, occurrence = 1): { line: number; column: number } {
  let index = -1;
  for (let i = 0; i < occurrence; i++) {
    index = code.indexOf(needle, index + 1);
    if (index < 0) throw new Error(`test bug: ${JSON.stringify(needle)} #${occurrence} not in ${JSON.stringify(code)}`);
  }
  const before = code.slice(0, index);
  return { line: before.split("\n").length, column: index - before.lastIndexOf("\n") };
}

function expectWellFormed(diagnostics: readonly Diagnostic[]): void {
  for (const d of diagnostics) {
    expect(d.message.trim(), JSON.stringify(d)).not.toBe("");
    expect(d.hint.trim(), JSON.stringify(d)).not.toBe("");
    expect(d.line).toBeGreaterThanOrEqual(1);
    expect(d.column).toBeGreaterThanOrEqual(1);
  }
}

/** The code is rejected, and its first diagnostic is `rule` at the given position. */
function expectRejected(code: string, rule: RuleId, at: { line: number; column: number }): Diagnostic {
  const result = validate(code);
  expect(result.ok, `expected a rejection of ${JSON.stringify(code)}`).toBe(false);
  expectWellFormed(result.diagnostics);
  const first = result.diagnostics[0]!;
  expect({ rule: first.rule, line: first.line, column: first.column }).toEqual({ rule, ...at });
  return first;
}

function expectAccepted(code: string): void {
  const result = validate(code);
  expect(result.diagnostics, `unexpected diagnostics for ${JSON.stringify(code)}`).toEqual([]);
  expect(result.ok).toBe(true);
}

// [title, code, rule, needle whose first character is the reported position, occurrence]
type Case = [string, string, RuleId, string, number?];

describe("validate: what fooled a regex validator", () => {
  const cases: Case[] = [
    // Tokens split across lines.
    ["Deno split from its member by a newline", 'const a = 1;\nDeno\n.readTextFile("x")', "ambient-authority", "Deno"],
    ["globalThis split across three lines", 'globalThis\n[\n"x"]', "ambient-authority", "globalThis"],
    ["globalThis split across lines, indented", 'println(1);\n  globalThis\n  [\n"Deno"]', "ambient-authority", "globalThis"],
    // Comments and strings are no hiding place for real code after them.
    ["Deno after a block comment mentioning Deno", "/* Deno */ Deno.pid", "ambient-authority", "Deno", 2],
    ["Deno after a line comment", "// fetch\nDeno.pid", "ambient-authority", "Deno"],
    ["Deno after a string holding Deno", 'const s = "Deno"; Deno.pid', "ambient-authority", "Deno", 2],
    // Template literals: text is fine, substitutions are code.
    ["Deno in a template substitution", "const s = `${Deno.pid}`", "ambient-authority", "Deno"],
    ["fetch in a nested template substitution", "const s = `a ${`b ${fetch}`}`", "ambient-authority", "fetch"],
    // Unicode escapes in identifiers.
    ["\\u0044eno", "\\u0044eno.exit()", "ambient-authority", "\\u0044eno"],
    ["glob\\u0061lThis", 'glob\\u0061lThis["Deno"]', "ambient-authority", "glob"],
    ["\\u{65}val", '\\u{65}val("1")', "dynamic-code", "\\u{65}val"],
    // Computed access and aliasing.
    ['globalThis["De" + "no"]', 'const d = globalThis["De" + "no"]', "ambient-authority", "globalThis"],
    ["aliasing globalThis", "const g = globalThis; g.Deno", "ambient-authority", "globalThis"],
    ["optional chaining on globalThis", "globalThis?.Deno", "ambient-authority", "globalThis"],
    // Code from strings.
    ["eval", 'eval("1 + 1")', "dynamic-code", "eval"],
    ["indirect eval", '(0, eval)("1 + 1")', "dynamic-code", "eval"],
    ["Function", 'Function("return 1")', "dynamic-code", "Function"],
    ["new Function", 'new Function("x")', "dynamic-code", "Function"],
    ["WebAssembly", "WebAssembly.compile(new Uint8Array())", "dynamic-code", "WebAssembly"],
    // Reaching Function through .constructor.
    ["arrow .constructor(code)", '(() => {}).constructor("code")', "function-constructor", "constructor"],
    ["[].constructor.constructor", "[].constructor.constructor", "function-constructor", "constructor"],
    ["async function prototype's constructor", "Object.getPrototypeOf(async function(){}).constructor", "function-constructor", "constructor"],
    ["generator prototype's constructor", 'Object.getPrototypeOf(function*(){}).constructor("yield 1")', "function-constructor", "constructor"],
    ["destructuring constructor", "const { constructor: F } = () => 1", "function-constructor", "constructor"],
    ["destructuring constructor (shorthand)", "const { constructor } = () => 1", "function-constructor", "constructor"],
    ["destructuring a computed constructor key", 'const { ["constructor"]: F } = () => 1', "function-constructor", "["],
    ["destructuring constructor in an assignment", "let F: unknown; ({ constructor: F } = () => 1)", "function-constructor", "constructor"],
    ["destructuring constructor in a parameter", "function f({ constructor }: { constructor: unknown }) { return constructor }", "function-constructor", "constructor"],
    ['Reflect.get(f, "constructor")', 'const f = () => 1; Reflect.get(f, "constructor")', "function-constructor", '"constructor"'],
    ["getOwnPropertyDescriptor(…, `constructor`)", "Object.getOwnPropertyDescriptor(Object.getPrototypeOf(() => 1), `constructor`)", "function-constructor", "`constructor`"],
    ['f["constructor"]', 'const f = () => 1; f["constructor"]("x")', "function-constructor", '"constructor"'],
    ['f["\\u0063onstructor"]', 'const f = () => 1; f["\\u0063onstructor"]("x")', "function-constructor", '"\\u0063'],
    ["f?.constructor", 'const f = () => 1; f?.constructor("x")', "function-constructor", "constructor"],
    // Imports of anything but "tacit".
    ["import fs from node:fs", 'import fs from "node:fs"', "forbidden-import", "import"],
    ["side-effect import of a relative file", 'import "./x.ts"', "forbidden-import", "import"],
    ["npm: import", 'import x from "npm:y"', "forbidden-import", "import"],
    ["https: import", 'import x from "https://example.com/mod.ts"', "forbidden-import", "import"],
    ["jsr: import", 'import x from "jsr:@std/fs"', "forbidden-import", "import"],
    ["data: import", 'import x from "data:text/javascript,export default globalThis.Deno"', "forbidden-import", "import"],
    ["type-only import of another module", 'import type { T } from "./types.ts"', "forbidden-import", "import"],
    ["import after ordinary code", 'println(1);\n\n  import { readFile } from "node:fs/promises";', "forbidden-import", "import"],
    ["export * from node:fs", 'export * from "node:fs"', "forbidden-import", "export"],
    ["export { x } from node:fs", 'export { readFileSync } from "node:fs"', "forbidden-import", "export"],
    ["dynamic import()", 'const m = import("x")', "dynamic-import", "import"],
    ["dynamic import() of tacit", 'const m = await import("tacit")', "dynamic-import", "import"],
    ["import.meta", "println(import.meta.url)", "import-meta", "import"],
    ["require", 'require("fs")', "ambient-authority", "require"],
    ["import = require", 'import fs = require("fs")', "forbidden-import", "import"],
    ["typeof import() in a type", 'type T = typeof import("fs")', "forbidden-import", "import"],
    ["/// <reference path>", '/// <reference path="other.d.ts" />\nprintln(1)', "triple-slash-directive", "///"],
    ["/// <reference lib>", '/// <reference lib="dom" />', "triple-slash-directive", "///"],
    ["/// <reference types>", 'const a = 1;\n/// <reference types="node" />', "triple-slash-directive", "///"],
    ["declare global", "declare global { var Deno: unknown }", "ambient-declaration", "declare"],
    ['declare module "x"', 'declare module "x" {}', "ambient-declaration", "declare"],
    // Ambient authority.
    ["process.env", "const env = process.env", "ambient-authority", "process"],
    ["fetch", 'fetch("https://example.com")', "ambient-authority", "fetch"],
    ["WebSocket", 'new WebSocket("wss://example.com")', "ambient-authority", "WebSocket"],
    ["Worker", 'new Worker("data:,")', "ambient-authority", "Worker"],
    ["localStorage", 'localStorage.getItem("k")', "ambient-authority", "localStorage"],
    ["self", "self.postMessage(1)", "ambient-authority", "self"],
    ["window", "window.location", "ambient-authority", "window"],
    ["navigator", "navigator.userAgent", "ambient-authority", "navigator"],
    ["typeof Deno (still a reference)", 'if (typeof Deno !== "undefined") println(1)', "ambient-authority", "Deno"],
    // Anything else undeclared.
    ["unknown global", "foo()", "unknown-global", "foo"],
    ["a typo of println", 'printn("x")', "unknown-global", "printn"],
    ["the sandbox's library object", "__tacit.println(1)", "unknown-global", "__tacit"],
  ];

  it.each(cases)("%s", (_title, code, rule, needle, occurrence) => {
    expectRejected(code, rule, positionOf(code, needle, occurrence ?? 1));
  });

  it("reports every problem, sorted by position", () => {
    const code = 'const a = fetch;\nDeno.pid; eval("1");\nimport x from "node:fs";';
    const result = validate(code);
    expectWellFormed(result.diagnostics);
    expect(result.diagnostics.map((d) => [d.rule, d.line, d.column])).toEqual([
      ["ambient-authority", 1, 11],
      ["ambient-authority", 2, 1],
      ["dynamic-code", 2, 11],
      ["forbidden-import", 3, 1],
    ]);
  });

  it("names the forbidden identifier and what to use instead", () => {
    const d = expectRejected("Deno.readTextFileSync('/etc/passwd')", "ambient-authority", { line: 1, column: 1 });
    expect(d.message).toContain("`Deno`");
    expect(d.hint).toContain("tacit interface");
  });

  it("reports the two `.constructor` steps of [].constructor.constructor separately", () => {
    const code = "[].constructor.constructor";
    const result = validate(code);
    expect(result.diagnostics.map((d) => [d.rule, d.line, d.column])).toEqual([
      ["function-constructor", 1, 4],
      ["function-constructor", 1, 16],
    ]);
  });

  // Regression (validator, fixed): a `declare` of a forbidden name makes scope analysis resolve it locally,
  // but declarations are erased, so at run time the name is the real global again.
  describe("ambient declarations cannot smuggle in a forbidden global", () => {
    const smuggled: Array<[string, string, string]> = [
      ["declare const Deno", "declare const Deno: any; Deno.exit(0)", "Deno"],
      ["declare var globalThis", "declare var globalThis: any; globalThis.Deno", "globalThis"],
      ["declare function fetch", 'declare function fetch(url: string): any; fetch("https://example.com")', "fetch"],
      ["declare let process", "declare let process: any; process.exit(1)", "process"],
      ["declare class Worker", 'declare class Worker { constructor(url: string) }\nnew Worker("data:,")', "Worker"],
      ["declare namespace Deno", "declare namespace Deno { function exit(): void }\nDeno.exit()", "Deno"],
    ];
    it.each(smuggled)("%s", (_title, code, name) => {
      const result = validate(code);
      expect(result.ok, `expected a rejection of ${JSON.stringify(code)}`).toBe(false);
      expectWellFormed(result.diagnostics);
      // Either the use is reported (as for an undeclared name), or the declaration is.
      const atUse = { rule: "ambient-authority", ...positionOf(code, name, 2) };
      const atDeclaration = { rule: "ambient-declaration", ...positionOf(code, "declare") };
      const found = result.diagnostics.map((d) => ({ rule: d.rule, line: d.line, column: d.column }));
      expect(found.some((d) => JSON.stringify(d) === JSON.stringify(atUse) || JSON.stringify(d) === JSON.stringify(atDeclaration))).toBe(true);
    });
  });
});

describe("validate: syntax errors", () => {
  it("gives rule syntax with the position of the error", () => {
    expectRejected("const x = ;", "syntax", { line: 1, column: 11 });
  });
  it("on a later line", () => {
    expectRejected('println("a");\n\nconst y = 1 +;\nprintln(y);', "syntax", { line: 3, column: 14 });
  });
  it("reports nothing else when the script does not parse", () => {
    const result = validate("Deno.pid;\nconst = 1");
    expect(result.diagnostics.every((d) => d.rule === "syntax")).toBe(true);
    expect(result.diagnostics.length).toBeGreaterThan(0);
  });
});

describe("validate: line and column", () => {
  it("columns count UTF-16 code units, like the type checker and V8", () => {
    const code = 'const s = "é😀"; Deno.pid';
    expectRejected(code, "ambient-authority", { line: 1, column: 18 });
  });
  it("CRLF line endings", () => {
    expectRejected("const a = 1;\r\n\r\n  Deno.pid", "ambient-authority", { line: 3, column: 3 });
  });
  // Regression (source-position, fixed): a lone CR ends a line for JavaScript, TypeScript (tsc reports the
  // type error below as script.ts:2:7) and V8 stack traces, but the validator counts only
  // "\n", so it reported 1:14.
  it("a lone CR ends a line, as it does for tsc and V8", () => {
    expectRejected("const a = 1;\rDeno.pid", "ambient-authority", { line: 2, column: 1 });
  });
});

describe('validate: imports from "tacit"', () => {
  it("accepts named imports", () => {
    expectAccepted('import { println, print, printf, readInput } from "tacit";\nprintln(readInput());');
  });
  it("accepts aliases", () => {
    expectAccepted('import { println as say } from "tacit";\nsay("hi");');
  });
  it("accepts a namespace import", () => {
    expectAccepted('import * as tacit from "tacit";\ntacit.println(1);');
  });
  it("accepts type-only imports of the interface's type exports", () => {
    expectAccepted(
      'import type { FileSystem, FileEntry, GrepMatch } from "tacit";\n' +
        "let g: GrepMatch[] = [];\nlet f: FileSystem | undefined;\nlet e: FileEntry | undefined;\nprintln(g, f, e);",
    );
    expectAccepted('import { type FileSystem, println } from "tacit";\nlet f: FileSystem | undefined;\nprintln(f);');
  });
  it("rejects a default import, saying how to import instead", () => {
    const d = expectRejected('import tacit from "tacit";', "forbidden-import", { line: 1, column: 8 });
    expect(d.message).toMatch(/default export/);
    expect(d.hint).toContain('import * as tacit from "tacit"');
    expect(d.hint).toContain("import { println }");
  });
  it("rejects an unknown name, listing what exists", () => {
    const d = expectRejected('import { println, nope } from "tacit";', "forbidden-import", { line: 1, column: 19 });
    expect(d.message).toContain('"nope"');
    expect(d.hint).toContain("println");
    expect(d.hint).toContain("readInput");
  });
  it("collects what the rewriter needs", () => {
    const code = 'import { println as p, print } from "tacit";\nimport * as t from "tacit";\nimport type { FileSystem } from "tacit";';
    const { tacitImports } = validate(code);
    expect(tacitImports.map(({ namespace, named }) => ({ namespace, named }))).toEqual([
      { namespace: null, named: [["println", "p"], ["print", "print"]] },
      { namespace: "t", named: [] },
      { namespace: null, named: [] },
    ]);
  });
});

describe("validate: no false positives", () => {
  const accepted: Array<[string, string]> = [
    ["a local const shadowing process", "const process = (x: number) => x;\nprintln(process(1));"],
    ["a local function shadowing fetch", "function fetch(url: string): string { return url; }\nprintln(fetch(\"x\"));"],
    ["a local variable named Deno", "let Deno = { pid: 1 };\nprintln(Deno.pid);"],
    ["a parameter named self", "function f(self: number) { return self + 1; }\nconst g = (window: string) => window;\nprintln(f(1), g(\"w\"));"],
    ["a block-scoped eval-named variable", "{ const eval2 = 1; const navigator = 2; println(eval2 + navigator); }"],
    ["this.constructor.name in a class", "class A { describe() { return this.constructor.name; } }\nprintln(new A().describe());"],
    ["x.constructor === Foo", "class Foo {}\nconst x: object = new Foo();\nprintln(x.constructor === Foo, x.constructor !== Foo, Foo == x.constructor);"],
    ["an object literal key constructor", "const o = { constructor: 1, ['constructor' + '2']: 2 };\nprintln(o);"],
    ["a class constructor() method", "class P { x: number; constructor(x: number) { this.x = x; } }\nclass Q extends P { constructor() { super(1); } }\nprintln(new Q().x);"],
    ["user object properties named like forbidden globals", "const obj = { Deno: 1, eval: 2, fetch: 3, process: 4, globalThis: 5, Function: 6 };\nprintln(obj.Deno, obj.eval, obj.fetch, obj.process, obj.globalThis, obj.Function);"],
    ["method names like forbidden globals", "class C { eval() { return 1; } fetch() { return 2; } }\nprintln(new C().eval() + new C().fetch());"],
    ["type-only references to Function", "let f: Function | undefined;\nfunction call(g: Function) { return g; }\nprintln(f, call);"],
    ["the hello example", readFileSync(path.join(repoRoot, "examples", "hello.ts"), "utf8")],
    ["the tacit globals", 'println(1); print(2); printf("%d", 3); readInput(); console.log(4);\nsetTimeout(() => {}, 1); clearTimeout(undefined); queueMicrotask(() => {});\nprintln(structuredClone({}), atob(btoa("x")), new TextDecoder().decode(new TextEncoder().encode("é")));'],
    ["the capability API", 'requestFileSystem(".", (fs) => { println(fs.access("a.txt").exists); });\ntry { } catch (e) { if (e instanceof SecurityError) println(e.message); }'],
  ];
  it.each(accepted)("%s", (_title, code) => expectAccepted(code));

  // Regression (validator, fixed): a `typeof X` query in a type position is a type, erased before the
  // script runs; the validator reported it as a use of the forbidden value `Function`.
  it("a typeof type query of Function", () => {
    expectAccepted("type Ctor = typeof Function;\nlet c: Ctor | undefined;\nprintln(c);");
  });

  const words = [
    "Deno", "process", "globalThis", "self", "window", "global", "fetch", "WebSocket", "Worker",
    "localStorage", "navigator", "WebAssembly", "eval", "Function", "require", "Bun",
    "constructor", 'import("fs")', "import.meta", 'from "node:fs"', "declare global",
    '/// <reference path="x" />', "new Function('x')", "[].constructor.constructor('x')",
  ].join(" ");

  it("strings and comments containing every forbidden word", () => {
    const code = [
      `// ${words}`,
      `/* ${words} */`,
      `/**\n * ${words}\n */`,
      `const a = ${JSON.stringify(words)};`,
      `const b = '${words.replaceAll("'", "\\'")}';`,
      `const c = \`${words}\`;`,
      `const d = \`\${a} ${words} \${b}\`;`,
      `const e = /Deno|fetch|eval|globalThis|constructor/g;`,
      `println(a, b, c, d, e); // ${words}`,
      `const f = { "Deno": 1, "constructor": 2 }; println(f);`,
    ].join("\n");
    expectAccepted(code);
  });

  // Regression (validator, fixed): any call argument that is exactly the string "constructor" is reported
  // (meant for Reflect.get(f, "constructor")), so printing the word is refused.
  it('printing the word "constructor"', () => {
    expectAccepted('println("constructor");\nconsole.log("constructor");');
  });

  it("ordinary code: classes, generics, async/await, Map/Set, JSON, Math, regexes, labels, destructuring, getters", () => {
    const code = `
interface Shape { area(): number }
abstract class Base implements Shape {
  abstract area(): number;
  toString(): string { return \`\${this.constructor.name}(\${this.area().toFixed(2)})\`; }
}
class Circle extends Base {
  static count = 0;
  #r: number;
  constructor(r: number) { super(); this.#r = r; Circle.count++; }
  get radius(): number { return this.#r; }
  set radius(value: number) { this.#r = value; }
  area(): number { return Math.PI * this.#r ** 2; }
}
class Box<T> {
  constructor(readonly value: T) {}
  map<U>(fn: (value: T) => U): Box<U> { return new Box(fn(this.value)); }
}
enum Color { Red, Green = "green" }
namespace Util { export const twice = (n: number): number => n * 2; }
type Pair<A, B> = readonly [A, B];
function* counter(limit: number): Generator<number> { for (let i = 0; i < limit; i++) yield i; }
const identity = async <T,>(x: T): Promise<T> => x;

async function main(): Promise<number> {
  const map = new Map<string, number>([["a", 1]]);
  const set = new Set([1, 2, 2]);
  const weak = new WeakMap<object, string>();
  const { a = 0, ...rest } = { a: 1, b: 2, c: 3 };
  const [first, , third = 3, ...others] = [1, 2];
  const pair: Pair<string, number> = ["x", 1];
  const json = JSON.parse(JSON.stringify({ m: [...map], s: [...set] })) as { m: unknown[] };
  const match = /(?<year>\\d{4})-(\\d{2})/u.exec("2024-05")?.groups?.year ?? "none";
  outer: for (const i of [1, 2, 3]) {
    for (const j of counter(3)) {
      if (i * j > 3) break outer;
      if (j === 1) continue outer;
    }
  }
  block: { if (set.size) break block; }
  const results = await Promise.all([identity(1), new Promise<number>((resolve) => setTimeout(() => resolve(2), 0))]);
  for await (const value of [Promise.resolve(1)]) println(value);
  try {
    throw new RangeError("out of range");
  } catch (error) {
    if (error instanceof RangeError) println(error.message);
  } finally {
    println("finally");
  }
  const sym = Symbol("s");
  const obj = { [sym]: 1, method() { return this; }, get g() { return 1; }, set g(_v: number) {} };
  const big = 10n ** 20n;
  const date = new Date(0).toISOString();
  const tagged = String.raw\`a\\nb\`;
  let x: number | undefined;
  x ??= 1;
  delete (obj as { g?: number }).g;
  switch (Color.Red) { case Color.Red: break; default: break; }
  const circle = new Circle(1);
  circle.radius = 2;
  println(a, rest, first, third, others, pair, json.m, match, results, big, date, tagged, x, weak, obj,
    Util.twice(2), circle.radius, String(circle), new Box(1).map(String).value, typeof sym, void 0,
    Object.entries(rest), Array.from({ length: 2 }, (_, i) => i), Number.parseInt("3"), parseFloat("1.5"),
    encodeURIComponent("a b"), new Intl.NumberFormat("en").format(1234), Math.max(...set), Reflect.ownKeys(obj).length);
  return 0;
}
await main();
`;
    expectAccepted(code);
  });
});

describe("nesting, before parsing (the native parser crashes the process on very deep input)", () => {
  it("counts every opening bracket and operator, in strings and comments too (no lexing a script could mislead)", async () => {
    const { roughCounts, safeToParse, SAFE_OPENERS, SAFE_OPERATORS } = await import("../../runner/nesting.js");
    expect(roughCounts('const a = "((("; // [[\nconst b = /)/; const c = 1 + 2;')).toEqual({ openers: 5, operators: 8 });
    expect(safeToParse("println(1);")).toBe(true);
    expect(safeToParse("(".repeat(SAFE_OPENERS + 1))).toBe(false);
    // Both kinds add up on one stack: 2,000 brackets around 20,000 "!" crash the parser.
    expect(safeToParse("(".repeat(SAFE_OPENERS / 2 + 1) + "!".repeat(SAFE_OPERATORS / 2))).toBe(false);
  });

  it("probes a large or bracket-heavy script in a child process: one that crashes the parser is refused, one that does not is let through", async () => {
    const { nestingRefusal } = await import("../../runner/nesting.js");
    expect(nestingRefusal(`const x = ${"(".repeat(10_000)}1${")".repeat(10_000)};`)).toMatch(/parsing it in a separate process crashed \(SIGSEGV\)/);
    // A closer in a string or a regular expression cannot hide an opener: counts only go up.
    const disguised = `const x = ${"( /)/, ".repeat(10_000)}1${")".repeat(10_000)};`;
    expect(nestingRefusal(disguised)).toMatch(/crashed/);
    expect(nestingRefusal(`const s = "${"(".repeat(5000)}";`)).toBeNull();
    expect(nestingRefusal(`const x = ${"(".repeat(1999)}${"!".repeat(19_990)}1${")".repeat(1999)};`)).toMatch(/crashed/);
    // Nesting with neither brackets nor operators: the length bound sends it to the probe.
    expect(nestingRefusal(`${"a:".repeat(30_000)}b;`)).toMatch(/crashed/);
    expect(nestingRefusal(`const x = ${"void ".repeat(30_000)}1;`)).toMatch(/crashed/);
  });

  it("becomes a too-deep diagnostic, as does a tree too deep for the checks", async () => {
    const { validate } = await import("../../runner/validator.js");
    const deep = validate(`const x = ${"(".repeat(10_000)}1${")".repeat(10_000)};`);
    expect(deep.ok).toBe(false);
    expect(deep.diagnostics[0]?.rule).toBe("too-deep");
    const chain = validate(`const y = 1${"+1".repeat(30_000)};`);
    expect(chain.ok).toBe(false);
    expect(chain.diagnostics[0]).toMatchObject({ rule: "too-deep", message: expect.stringContaining("too deeply for tacit's checks") });
  });
});
