// Unit tests of a session snippet's module (runner/snippet-module.ts): which top-level
// bindings it publishes for later snippets, which it must not (types, `declare`, overload
// signatures, const enums), and which may be assigned later. The end-to-end behaviour is in
// test/mcp/sessions.test.ts.

import { describe, expect, it } from "vitest";
import { ECHO_GLOBAL, PUBLISH_GLOBAL } from "../../library/protocol.js";
import { snippetForSandbox } from "../../runner/snippet-module.js";
import { validate } from "../../runner/validator.js";

/** name → whether later snippets may assign it, as the publishing statement lists them. */
function published(snippet: string): Record<string, boolean> {
  const checked = validate(snippet);
  expect(checked.diagnostics).toEqual([]);
  const code = snippetForSandbox(snippet, 0, checked.tacitImports, checked.pureFunctions);
  const statement = code.slice(code.indexOf(`${PUBLISH_GLOBAL}(`));
  if (!code.includes(`${PUBLISH_GLOBAL}(`)) return {};
  const entries: Record<string, boolean> = {};
  for (const match of statement.matchAll(/\["([^"]+)"\]: \[\(\) => [^,]+, (null|\()/g)) entries[match[1]!] = match[2] !== "null";
  return entries;
}

describe("a snippet's published bindings", () => {
  it("lists let, var, function and class as assignable, const and tacit imports as constant", () => {
    expect(
      published(
        'import { println as say } from "tacit";\nimport * as t from "tacit";\nconst c = 1;\nlet l = 2;\nvar v = 3;\nfunction f() {}\nclass K {}\nsay(t, c, l, v, f, K);',
      ),
    ).toEqual({ c: false, l: true, v: true, f: true, K: true, say: false, t: false });
  });

  it("finds every name a destructuring pattern binds", () => {
    expect(published("const { a, b: [c, , ...d], ...e } = { a: 1, b: [2, 3, 4], z: 5 };\nlet [x = 1, { y }] = [undefined, { y: 2 }];")).toEqual({
      a: false,
      c: false,
      d: false,
      e: false,
      x: true,
      y: true,
    });
  });

  // (`declare` never gets this far: the validator refuses it.)
  it("leaves out what has no value at run time: types, interfaces, overload signatures, namespaces of types", () => {
    expect(
      published(
        "type T = number;\ninterface I { x: T }\nfunction over(x: number): number;\nfunction over(x: unknown) { return x; }\nconst enum Inline { A }\nenum Kept { B }\nnamespace Space { export const v = 1; }\nnamespace Types { export type U = string; }",
      ),
    ).toEqual({ over: true, Inline: true, Kept: true, Space: true, Types: false });
    // The namespace of types gets no value, only a placeholder that keeps the name from
    // reaching a global of the same name in later snippets.
    const snippet = "namespace Types { export type U = string; }";
    const code = snippetForSandbox(snippet, 0, [], []);
    expect(code).not.toContain("() => Types");
    expect(code).toContain('["Types"]: [() => undefined, null]');
  });

  it("makes a const enum a plain one (the transpiler would inline it and emit no object), columns kept", () => {
    const snippet = "const enum Inline { A = 7 }\nexport const enum Shared { B }";
    const checked = validate(snippet);
    const code = snippetForSandbox(snippet, 0, checked.tacitImports, checked.pureFunctions);
    expect(code.startsWith("      enum Inline { A = 7 }\nexport       enum Shared { B }")).toBe(true);
  });

  it("publishes an exported declaration like any other", () => {
    expect(published("export const shared = 1;\nexport function helper() { return shared; }")).toEqual({ shared: false, helper: true });
  });

  it("echoes the final expression statement only, and publishes after it", () => {
    const checked = validate("const x = 2;\nx * 21");
    const code = snippetForSandbox("const x = 2;\nx * 21", 0, checked.tacitImports, checked.pureFunctions);
    expect(code.startsWith(`const x = 2;\n${ECHO_GLOBAL}((x * 21))`)).toBe(true);
    expect(code.indexOf(PUBLISH_GLOBAL)).toBeGreaterThan(code.indexOf(ECHO_GLOBAL));
    const noEcho = validate("const y = 1;");
    expect(snippetForSandbox("const y = 1;", 0, noEcho.tacitImports, noEcho.pureFunctions)).not.toContain(ECHO_GLOBAL);
  });

  it("names the setter's parameter so that it cannot shadow the binding it assigns", () => {
    const checked = validate("let value__ = 1;");
    const code = snippetForSandbox("let value__ = 1;", 0, checked.tacitImports, checked.pureFunctions);
    expect(code).toContain("(value___) => { value__ = value___; }");
  });
});
