// A map/flatMap function reaches the pure evaluator as its source alone. A built-in or bound
// function has none ("function String() { [native code] }"): map(String) failed in the
// evaluator every time, and, as any failed map, gave a handle that looked like a good one, its
// reason in the secure output only. It depends on no plaintext, so the call itself now refuses.

import { afterAll, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { runScript } from "../helpers.js";

const dir = mkdtempSync(path.join(tmpdir(), "tacit-map-source-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("map and flatMap refuse a built-in or bound function at the call, saying what to pass instead", async () => {
  const sink = path.join(dir, "sink.txt");
  const script = `const secret = classify("plain-canary-7f3a");
for (const [name, use] of [
  ["map(String)", () => secret.map(String)],
  ["flatMap(Object)", () => secret.flatMap(Object as unknown as (v: string) => Classified<string>)],
  ["map(bound)", () => secret.map(((v: string) => v.length).bind(null))],
] as const) {
  try {
    use();
    println(name, "accepted");
  } catch (error) {
    println(name, (error as Error).name, (error as Error).message);
  }
}
println(secret.map((value) => String(value).length));
`;
  const r = await runScript(script, ["--no-check", "--secure-output", sink], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trim().split("\n");
  expect(lines).toHaveLength(4);
  expect(lines[0]).toMatch(/^map\(String\) TypeError map\(fn\): fn is a built-in or bound function, whose source \("function String\(\) \{ \[native code\] \}"\) cannot be sent/);
  expect(lines[1]).toMatch(/^flatMap\(Object\) TypeError flatMap\(fn\): fn is a built-in or bound function/);
  expect(lines[1]).toContain("such as flatMap((value) => other.map((o) => String(value) + o))");
  expect(lines[2]).toMatch(/^map\(bound\) TypeError map\(fn\): fn is a built-in or bound function/);
  // A function written out still runs; nothing of the plaintext reaches the output.
  expect(lines[3]).toBe("Classified(***)");
  expect(r.stdout + r.stderr).not.toContain("plain-canary-7f3a");
  expect(readFileSync(sink, "utf8")).toContain("17");
}, 60_000);
