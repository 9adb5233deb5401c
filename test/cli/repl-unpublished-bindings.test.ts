// A later snippet runs as its own module: a name an earlier snippet declared other than as a
// plain top-level statement (a `var` in a block, `export default function`, `import a = N`)
// must not fall through to the runtime's global of the same name, which the checks refuse.

import { describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";

const later = "const g: any = globalThis; println(typeof g, typeof g.Math)";

describe("tacit repl: names declared by an earlier snippet", () => {
  it.each([
    ["export default function", "export default function globalThis() {}", "function undefined\n"],
    ["var in a block", "{ var globalThis: any = 1 }", "number undefined\n"],
  ])("%s shadows the global in later snippets", async (_, first, expected) => {
    const r = await runCli(["repl"], { input: `${first}\n${later}\n` });
    expect(r.stdout).toBe(expected);
    expect(r.stdout).not.toContain("object");
  });

  it("import alias: the name is taken (undefined), not the runtime's global", async () => {
    const r = await runCli(["repl"], { input: `namespace N { export const x = 1 }\nimport globalThis = N;\nprintln(typeof globalThis)\n` });
    expect(r.stdout).toBe("undefined\n");
  });

  it("still carries block vars and default-exported classes", async () => {
    const input = ["{ var v = 5 }", "v = v + 1", "export default class K { static z = 3 }", "K.z + v", ""].join("\n");
    const r = await runCli(["repl"], { input });
    expect(r.stdout).toBe("6\n9\n");
  });

  it("a binding named __proto__ is carried like any other", async () => {
    const r = await runCli(["repl"], { input: "let __proto__ = 5\n__proto__ + 1\n__proto__ = 7\n__proto__ * 2\n" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("6\n7\n14\n");
  });

  it("a snippet cannot take over the publishing of its bindings by declaring its name", async () => {
    const r = await runCli(["repl"], { input: `const __tacitPublish = (x: any) => {}; let globalThis: any = 1\n${later}\n` });
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("`__tacitPublish` is a name tacit reserves");
  });
});
