// Checking a session's new snippet apart from its earlier ones (runner/split-check.ts): the
// shape read from a snippet's syntax, and, with the real checker, the same verdict as checking
// the whole program wherever the session would check apart.

import { afterAll, describe, expect, it } from "vitest";
import { checkInStages } from "../../runner/checks.js";
import { IncrementalTypeChecker } from "../../runner/incremental-typecheck.js";
import { parseSync, PROGRAM_OPTIONS } from "../../runner/parser.js";
import { APART_FROM_CHARS, type SnippetShape, snippetShape, SplitState } from "../../runner/split-check.js";

const SEPARATOR = "\n;\n";

/** The shape of `snippet` where it stands after `before` in a session's program. */
function shapeAt(before: string, snippet: string): SnippetShape {
  const { program } = parseSync("script.ts", before + snippet, PROGRAM_OPTIONS);
  return snippetShape((program.body as unknown as Array<{ start: number }>).filter((statement) => statement.start >= before.length));
}

describe("a snippet's shape", () => {
  it("names every top-level binding: patterns, declarations of every kind, and vars in top-level blocks", () => {
    const shape = shapeAt(
      "",
      [
        "const { a, b: [c], ...d } = { a: 1, b: [2] } as any; let [e = 1, , ...f] = [] as any[];",
        "function g() { var inFunction = 1; return inFunction; } class H {} interface I {} type J = 1; enum K { X } namespace L {}",
        "declare function m(): void;",
        "{ var n = 1; } for (var o of []) {} for (var p in {}) {} if (a) { var q = 1; } else { var r = 2; }",
        "try { var s = 1; } catch { var t = 2; } finally { var u = 3; } while (false) { var v; } switch (1) { case 1: var w = 1; }",
        "label: { var x = 1; }",
      ].join("\n"),
    );
    expect(shape.bindings.sort()).toEqual(["H", "I", "J", "K", "L", "a", "c", "d", "e", "f", "g", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x"].sort());
    expect(shape.mayShadow.sort()).toEqual(shape.bindings.sort());
    expect(shape.moduleSyntax).toBe(false);
    expect(shape.tacitImports).toEqual([]);
  });

  it("leaves plain imports of tacit's names to the globals, and takes anything else of a module's syntax as such", () => {
    const before = `const earlier = 1;${SEPARATOR}`;
    const plain = shapeAt(before, 'import { println, type FileSystem } from "tacit";\nprintln(1);');
    expect(plain).toMatchObject({ bindings: ["println", "FileSystem"], mayShadow: [], moduleSyntax: false });
    const [[start, end]] = plain.tacitImports as [[number, number]];
    expect((before + 'import { println, type FileSystem } from "tacit";').slice(start, end)).toBe('import { println, type FileSystem } from "tacit";');
    expect(shapeAt("", 'import { println as say } from "tacit";')).toMatchObject({ bindings: ["say"], mayShadow: ["say"], moduleSyntax: true });
    expect(shapeAt("", 'import * as tacit from "tacit";')).toMatchObject({ bindings: ["tacit"], moduleSyntax: true });
    expect(shapeAt("", "export const shared = 1;")).toMatchObject({ bindings: ["shared"], moduleSyntax: true });
    expect(shapeAt("", "const local = 1;\nexport { local };").moduleSyntax).toBe(true);
    expect(shapeAt("", "declare global { var g: number }").moduleSyntax).toBe(true);
    expect(shapeAt("", 'declare module "elsewhere" {}').moduleSyntax).toBe(true);
    // this: undefined at a module's top level, globalThis in a script's; inside functions it is neither.
    expect(shapeAt("", "const self = this;").moduleSyntax).toBe(true);
    expect(shapeAt("", "const get = () => this;").moduleSyntax).toBe(true);
    expect(shapeAt("", "class C { field = this; }").moduleSyntax).toBe(true);
    expect(shapeAt("", "function f(this: unknown) { return this; }\nconst o = { m() { return this; } };\nconst g = function () { return this; };").moduleSyntax).toBe(false);
  });
});

describe("a session's split state", () => {
  /** Earlier snippets long enough to be checked apart from. */
  const LONG = `// ${"-".repeat(APART_FROM_CHARS)}`;

  it("checks apart from long enough earlier snippets until a name comes twice, shadows a global, or the syntax is a module's", async () => {
    const state = new SplitState();
    const first = shapeAt("", "const a = 1;");
    // Short: checked whole, the names asked about all the same.
    expect(await state.checkFor("", first)).toEqual({ names: ["a"], apart: null });
    state.append(first, Promise.resolve(false));
    state.append(shapeAt("const a = 1;\n;\n", LONG), Promise.resolve(false));
    const prefix = `const a = 1;${SEPARATOR}${LONG}${SEPARATOR}`;
    expect(await state.checkFor(prefix, shapeAt(prefix, "const b = a;"))).toEqual({ names: ["b"], apart: { prefixLength: prefix.length, prefixForChecker: prefix } });
    // A name bound again: checked whole.
    expect(await state.checkFor(prefix, shapeAt(prefix, "const a = 2;"))).toEqual({ names: ["a"], apart: null });
    // A snippet whose name is a global already (or whose answer failed, or was not asked for),
    // or one with a module's syntax, ends the checks apart and the questions.
    const after = `const escape = 1;${SEPARATOR}${LONG}${SEPARATOR}`;
    for (const answer of [Promise.resolve(true), Promise.reject(new Error("the checker ended")), null]) {
      const state = new SplitState();
      state.append(shapeAt("", "const escape = 1;"), answer);
      expect(await state.checkFor(after, shapeAt(after, "escape + 1"))).toBeNull();
    }
    const aliased = new SplitState();
    aliased.append(shapeAt("", 'import { println as say } from "tacit";'), Promise.resolve(false));
    expect(await aliased.checkFor(after, shapeAt(after, "1"))).toBeNull();
  });

  it("checks whole after earlier snippets that mention @ts-nocheck: opening the program, it turns off the one program's check", async () => {
    const state = new SplitState();
    const first = `// @ts-nocheck\n${LONG}`;
    state.append(shapeAt("", first), Promise.resolve(false));
    const prefix = `${first}${SEPARATOR}`;
    expect(await state.checkFor(prefix, shapeAt(prefix, "const b: string = 1;"))).toEqual({ names: ["b"], apart: null });
  });

  it("plans at once when the last snippet's answer is in, and waits for it when it is not", async () => {
    const state = new SplitState();
    const prefix = `const a = 1;${SEPARATOR}${LONG}${SEPARATOR}`;
    state.append(shapeAt("", "const a = 1;"), Promise.resolve(false));
    await Promise.resolve();
    await Promise.resolve();
    // Answered: the plan is a value, so the type check starts before the caller goes on.
    const now = state.checkFor(prefix, shapeAt(prefix, "const b = a;"));
    expect(now).not.toBeInstanceOf(Promise);
    expect(now).toEqual({ names: ["b"], apart: { prefixLength: prefix.length, prefixForChecker: prefix } });
    // Not answered yet: the plan waits, and follows the answer (a global shadowed: checked whole for good).
    let answer!: (shadows: boolean) => void;
    state.append(shapeAt(prefix, "const b = a;"), new Promise<boolean>((resolve) => (answer = resolve)));
    const after = `${prefix}const b = a;${SEPARATOR}`;
    const waiting = state.checkFor(after, shapeAt(after, "const c = b;"));
    expect(waiting).toBeInstanceOf(Promise);
    answer(true);
    expect(await waiting).toBeNull();
  });

  it("blanks the earlier snippets' plain tacit imports for the checker, keeping every position", async () => {
    const state = new SplitState();
    const earlier = `import { println } from "tacit";\nconst a = 1;\n${LONG}`;
    state.append(shapeAt("", earlier), Promise.resolve(false));
    const prefix = earlier + SEPARATOR;
    const { apart } = (await state.checkFor(prefix, shapeAt(prefix, "println(a)")))!;
    expect(apart!.prefixForChecker).toHaveLength(prefix.length);
    expect(apart!.prefixForChecker).toBe(`${" ".repeat('import { println } from "tacit";'.length)}\nconst a = 1;\n${LONG}${SEPARATOR}`);
  });
});

describe("when the type check starts", () => {
  it("is asked of the checker before checkInStages returns, so the run is prepared while types are checked", async () => {
    const asked: string[] = [];
    const checker = (code: string) => {
      asked.push(code);
      return Promise.resolve({ ok: true, diagnostics: [] });
    };
    const plain = checkInStages("const x: number = 1;", "script.ts", true, checker);
    expect(asked).toEqual(["const x: number = 1;"]);
    expect((await plain.types)?.ok).toBe(true);
    const session = { plan: () => ({ names: ["y"], apart: null }), checked: () => undefined };
    const snippet = checkInStages("const y = 2;", "script.ts", true, checker, "const y = 2;", undefined, session);
    expect(asked).toEqual(["const x: number = 1;", "const y = 2;"]);
    expect((await snippet.types)?.ok).toBe(true);
  });

  /** checkInStages on `snippet` as a session's, after `earlier` (which passed): the checks' result and what the checker was asked. */
  function sessionChecks(earlier: string, snippet: string, probed: { measured: boolean } = { measured: true }) {
    const asked: string[] = [];
    const checker = (code: string) => {
      asked.push(code);
      return Promise.resolve({ ok: true, diagnostics: [] });
    };
    const code = earlier + snippet;
    const parsed = () => parseSync("script.ts", code, PROGRAM_OPTIONS);
    const session = { plan: () => ({ names: [], apart: null }), checked: () => undefined };
    return { stages: checkInStages(code, "script.ts", true, checker, snippet, parsed, session, probed.measured ? null : undefined), asked };
  }

  it("starts before the validator for a session's snippet that names no module but tacit, and counts only once it has passed", async () => {
    const earlier = `import { println } from "tacit";\nconst a = 1;${SEPARATOR}`;
    const passes = sessionChecks(earlier, "println(a)");
    expect(passes.asked).toEqual([`${earlier}println(a)`]);
    expect((await passes.stages.types)?.ok).toBe(true);
    // Refused by the validator (not for naming a module): the check had started, and its verdict is not used.
    const refused = sessionChecks(earlier, "Deno.exit(0)");
    expect(refused.stages.validation.ok).toBe(false);
    expect(refused.stages.types).toBeNull();
    expect(refused.asked).toHaveLength(1);
  });

  it("never reaches the checker for a snippet that names another module, nor one whose nesting was not measured", () => {
    const namingModules = [
      'import { x } from "./other";\nx',
      'import "node:fs";',
      'export * from "tacit";',
      'export { println } from "tacit";',
      'import fs = require("fs");',
      'type T = typeof import("./other");',
      'const m = () => import("./other");',
      '/// <reference path="./other.ts" />\n1',
      'function f() { return [1].map((n) => { type U = import("./deep").U; return n; }); }',
      // An augmentation: the checker resolves its name, reading the package.json of a directory it names.
      'declare module "/tmp/other" { }',
      'declare module "tacit" { export const added: number; }',
      'namespace N { declare module "./deep" { } }',
    ];
    for (const snippet of namingModules) {
      const { stages, asked } = sessionChecks("const a = 1;\n;\n", snippet);
      expect(stages.validation.ok, snippet).toBe(false);
      expect(asked, snippet).toEqual([]);
    }
    const unmeasured = sessionChecks("", "Deno.exit(0)", { measured: false });
    expect(unmeasured.stages.validation.ok).toBe(false);
    expect(unmeasured.asked).toEqual([]);
    // Nor one-shot code the validator refuses.
    const asked: string[] = [];
    const oneShot = checkInStages("Deno.exit(0)", "script.ts", true, (code) => (asked.push(code), { ok: true, diagnostics: [] }));
    expect(oneShot.validation.ok).toBe(false);
    expect(asked).toEqual([]);
  });
});

describe("the checker's verdict on a snippet checked apart", () => {
  const checker = new IncrementalTypeChecker();
  afterAll(() => checker.close());

  /** Checks `snippet` after `earlier` whole and apart, as a session would (each earlier snippet checked as it would be before it). */
  async function both(earlier: string[], snippet: string) {
    const state = new SplitState();
    let prefix = "";
    // Comment enough that the last snippet is checked apart.
    for (const code of [`// ${"-".repeat(APART_FROM_CHARS)}`, ...earlier]) {
      const shape = shapeAt(prefix, code);
      const check = await state.checkFor(prefix, shape);
      const result = checker.check(prefix + code, check!);
      expect(result.diagnostics, `earlier snippet ${JSON.stringify(code)}`).toEqual([]);
      state.append(shape, Promise.resolve(checker.shadowsGlobal(check!.names)));
      prefix += code + SEPARATOR;
    }
    const check = await state.checkFor(prefix, shapeAt(prefix, snippet));
    expect(check?.apart, "the session checks this snippet apart").toBeTruthy();
    const apart = checker.check(prefix + snippet, check!);
    const shadowsGlobal = checker.shadowsGlobal(check!.names);
    const whole = checker.check(prefix + snippet);
    return { apart, shadowsGlobal, whole };
  }

  const cases: Array<[string, string[], string]> = [
    ["a misspelt property of an earlier interface", ["interface Row { id: number; name: string }\nconst rows: Row[] = [{ id: 1, name: 'a' }];"], "const first = rows[0]!;\nfirst.nme"],
    ["an earlier let given the wrong type", ["let count = 0;"], "count = 'many';"],
    ["an earlier const assigned", ["const fixed = 1;"], "fixed = 2;"],
    ["an earlier function called wrongly, on the third line", ["function add(a: number, b: number): number { return a + b; }"], "const x = 1;\nconst y = 2;\nadd(x, 'y');"],
    ["a value awaited at the top of an earlier snippet", ["const got = await Promise.resolve(41);"], "const s: string = got;"],
    ["an earlier generic class", ["class Box<T> { constructor(readonly value: T) {} }\nconst box = new Box('text');"], "box.value.toFixed();"],
    ["an earlier plain import of tacit's names", ['import { requestFileSystem, type FileSystem } from "tacit";', "const root = (fs: FileSystem) => fs;"], 'requestFileSystem(".", (fs) => root(fs).nothing);'],
    ["a new snippet's own import, await and a correct use", ["const n = 1;"], 'import { println } from "tacit";\nprintln(n + (await Promise.resolve(1)));'],
    ["an earlier enum and namespace", ["enum Color { Red, Green }\nnamespace Util { export const twice = (v: number) => v * 2; }"], "const c: Color = Color.Blue;\nUtil.twice('x');"],
    ["a function shadowing nothing, used before its snippet's other names", ["const a = 1;"], "f();\nfunction f(): string { return a; }"],
    ["a snippet that opens with // @ts-nocheck, an ordinary comment in the middle of the one program", ["const n = 1;"], "// @ts-nocheck\nconst s: string = n;"],
    ["a snippet that opens with a hashbang, a syntax error in the middle of the one program", ["const n = 1;"], "#!/usr/bin/env tacit\nconst s: number = n;"],
  ];

  it.each(cases)("agrees with the whole program: %s", async (_name, earlier, snippet) => {
    const { apart, shadowsGlobal, whole } = await both(earlier, snippet);
    expect(apart.ok).toBe(whole.ok);
    expect(apart.diagnostics).toEqual(whole.diagnostics);
    expect(shadowsGlobal).toBe(false);
  });

  it("says when a new top-level name is already a global of the language or of tacit", async () => {
    for (const snippet of ["const escape = 1;", "type Record = 1;", "interface FileSystem { extra: string }", "function println() {}", "let Intl = 0;"]) {
      expect((await both([], snippet)).shadowsGlobal, snippet).toBe(true);
    }
    expect((await both(["const mine = 1;"], "const yours = mine;")).shadowsGlobal).toBe(false);
  });
});
