// Names the checks' scope analysis binds but the transpiler erases before the sandbox runs
// the code: a type-only import, a namespace holding only types. A value use of such a name
// reaches the runtime's global of that name, so the checks treat it as one (even with the
// type check off, which would otherwise have been the only thing to catch it).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";

const dir = mkdtempSync(path.join(tmpdir(), "tacit-erased-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const use = 'import { println } from "tacit";\nconst g: any = globalThis;\nprintln(typeof g, typeof g?.Math);\n';

describe("tacit run --no-check: names erased before run time", () => {
  it.each([
    ['import { type println as globalThis } from "tacit";'],
    ['import type { println as globalThis } from "tacit";'],
    ['import type * as globalThis from "tacit";'],
    ["namespace globalThis { export type X = 1 }"],
    ["namespace globalThis { ; }"],
  ])("%s: a value use of the name is refused", async (declaration) => {
    const file = path.join(dir, "script.ts");
    writeFileSync(file, `${declaration}\n${use}`);
    const r = await runCli(["run", "--no-check", file]);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("[ambient-authority] `globalThis` is not available");
  });

  it("a namespace with values still binds its name", async () => {
    const file = path.join(dir, "values.ts");
    writeFileSync(file, `namespace globalThis { export const a = 1 }\n${use}`);
    const r = await runCli(["run", "--no-check", file]);
    expect(r.stdout).toBe("object undefined\n");
  });

  it.each([
    ['enum E { B = Object.getOwnPropertyNames(globalThis).length, globalThis = 0 }', "later member"],
    ['enum E { globalThis = (typeof globalThis === "object" ? 1 : 3) }', "own initializer"],
  ])("%s: an enum member used before it is declared (%s) is refused, type check on", async (declaration) => {
    const file = path.join(dir, "enum.ts");
    writeFileSync(file, `import { println } from "tacit";\n${declaration}\nprintln(E);\n`);
    const r = await runCli(["run", file]);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("[ambient-authority] `globalThis` is not available");
  });

  it("an enum member declared earlier still means the member", async () => {
    const file = path.join(dir, "enum-ok.ts");
    writeFileSync(file, 'import { println } from "tacit";\nenum E { globalThis = Math.random(), B = typeof globalThis === "number" ? 1 : 2 }\nprintln(E.B);\n');
    const r = await runCli(["run", "--no-check", file]);
    expect(r.stdout).toBe("1\n");
  });

  it("a namespace's exported variable used in an enum inside it is refused, type check on", async () => {
    const file = path.join(dir, "namespace-enum.ts");
    writeFileSync(
      file,
      'import { println } from "tacit";\nnamespace N { export const globalThis: any = 1; export enum E { A = Object.getOwnPropertyNames(globalThis).length } }\nprintln(N.E.A);\n',
    );
    const r = await runCli(["run", file]);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("[ambient-authority] `globalThis` is not available");
  });

  it("a namespace's exported variable still means itself outside enums", async () => {
    const file = path.join(dir, "namespace-ok.ts");
    writeFileSync(file, 'import { println } from "tacit";\nnamespace N { export const globalThis: any = 1; export const g = (() => globalThis)() }\nprintln(N.g);\n');
    const r = await runCli(["run", "--no-check", file]);
    expect(r.stdout).toBe("1\n");
  });
});
