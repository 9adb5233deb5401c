// A map/flatMap function reaches the pure evaluator as its source alone, with the variables it
// captures. `this`, `super` and `new.target` of the code around an arrow, and the `arguments` of
// the function around it, are no such variables: an arrow written in a method that read
// `this.prefix` failed there every time (`this` undefined: a TypeError), and one that read
// `arguments` too (strict mode refuses the name as a parameter of what makes the function), each
// a handle that looked like a good one, the reason in the secure output only, after the checks and
// the type checker had passed it. None depends on the plaintext: the checks now refuse them,
// naming them, and the call refuses `arguments` where the checks cannot tell the value is Classified.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runScript, tempDir } from "../helpers.js";

let dir: string;
let cleanup: () => void;
beforeAll(() => ({ dir, cleanup } = tempDir("tacit-map-outer-")));
afterAll(() => cleanup());

it("an arrow reading the method's `this`, `super` or `new.target`, or the function's `arguments`, is refused at check time, naming it; nothing runs", async () => {
  const sink = path.join(dir, "refused.txt");
  const script = `class Base { get tag(): string { return "b"; } }
class Holder extends Base {
  prefix = "p-";
  withThis(secret: Classified<string>) { return secret.map((value) => this.prefix + value); }
  withSuper(secret: Classified<string>) { return secret.map((value) => value + super.tag); }
  withTarget(secret: Classified<string>) { return secret.map((value) => value + String(new.target)); }
}
function withArguments(secret: Classified<string>, suffix: string) {
  return secret.map((value) => value + arguments[1]);
}
const secret = classify("plain-canary-31c8");
println(new Holder().withThis(secret), new Holder().withSuper(secret), new Holder().withTarget(secret), withArguments(secret, "!"));
`;
  const r = await runScript(script, ["--secure-output", sink], { cwd: dir });
  expect(r.code, r.stderr).toBe(3);
  expect(r.stdout).toBe("");
  for (const [where, name] of [["4:71", "this"], ["5:80", "super"], ["6:88", "new.target"]] as const) {
    expect(r.stderr).toContain(`script.ts:${where} error [impure-map] the map function uses \`${name}\` of the code around it; the pure evaluator runs the function alone`);
  }
  expect(r.stderr).toContain("script.ts:9:40 error [impure-map] the map function uses `arguments` of the function around it, which the pure evaluator cannot hand over");
  expect(r.stderr).toContain("const prefix = this.prefix; secret.map((value) => prefix + value)");
  expect(r.stderr).toContain("const suffix = arguments[1]; secret.map((value) => value + suffix)");
  expect(r.stdout + r.stderr).not.toContain("plain-canary-31c8");
  expect(existsSync(sink)).toBe(false);
}, 60_000);

it("where the checks cannot tell the value is Classified, the call refuses `arguments`, saying what to write", async () => {
  const script = `function suffixed(secret: any, suffix: string) {
  return secret.map((value: string) => value + arguments[1]);
}
try {
  suffixed(classify("plain-canary-8e02"), "!");
} catch (error) {
  println((error as Error).name, (error as Error).message);
}
`;
  const r = await runScript(script, [], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(
    "TypeError map(fn): the function uses `arguments` of the function around the call, which cannot be handed to the pure evaluator. " +
      "Copy the values it needs into consts first, such as `const suffix = arguments[1];`, and use those names in the function.\n",
  );
}, 60_000);

it("a function's own `this` and `arguments`, and a copy made before the call, are not refused and compute", async () => {
  const sink = path.join(dir, "own.txt");
  const script = `class Holder {
  prefix = "p-";
  withCopy(secret: Classified<string>) { const prefix = this.prefix; return secret.map((value) => prefix + value); }
}
function withArguments(secret: Classified<string>, suffix: string) {
  const rest = [...arguments].slice(1);
  return secret.map((value) => value + String(rest[0]));
}
const secret = classify("abc");
const own = secret.map(function (this: unknown, value: string) { return value + arguments.length + String(this === undefined); });
const nested = secret.map((value) => { function count() { return arguments.length; } return value + count(); });
println(new Holder().withCopy(secret), withArguments(secret, "!"), own, nested);
`;
  const r = await runScript(script, ["--secure-output", sink], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("Classified(***) Classified(***) Classified(***) Classified(***)\n");
  expect(readFileSync(sink, "utf8")).toBe("p-abc abc! abc1true abc0\n");
}, 60_000);
