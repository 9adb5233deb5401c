// One map job must not change what a later one computes. The pure evaluator runs a run's (or a
// session's) map functions one after another in one process, and they all ran in its own realm:
// a function could replace a built-in's method (String.prototype.toUpperCase), keep its plaintext
// in a global, or leave it in RegExp.$1, and the next job, another secret's, computed with all
// three, through a function the checks pass: `b.map((v) => RegExp.$1 + v.toUpperCase())` gave
// the first secret and the patch's text as the second secret's value, written and sent without a
// word. Now map functions run in a realm of their own whose built-ins and global are frozen before
// the first job. Tried here through the real CLI, the values read in the secure output.

import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir, tempDirWithHome } from "../helpers.js";

const CANARY = "CANARY-first-secret-5be1";

let dir: string;
let env: Record<string, string>;
let sinkDir: string;
const cleanups: Array<() => void> = [];

beforeAll(() => {
  const work = tempDirWithHome("tacit-map-realm-");
  ({ dir, env } = work);
  cleanups.push(work.cleanup);
  const sinks = tempDir("tacit-map-realm-sink-");
  sinkDir = sinks.dir;
  cleanups.push(sinks.cleanup);
});

afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

/** Runs `script` (type-checked unless `noCheck`) with a secure output of its own; returns its lines. */
async function sinkOf(name: string, script: string, noCheck = false): Promise<string[]> {
  const sink = path.join(sinkDir, `${name}.txt`);
  const run = await runCli(["run", ...(noCheck ? ["--no-check"] : []), "--secure-output", sink, "-"], { cwd: dir, env, input: script });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).not.toContain(CANARY);
  return readFileSync(sink, "utf8").split("\n");
}

describe("a map job cannot change what a later job computes", () => {
  it("a built-in's method replaced, and the last match, reach no later job (the checks pass both functions)", async () => {
    const lines = await sinkOf(
      "patched",
      `const first = classify("${CANARY}");
const second = classify("bee");
const a = first.map((v) => {
  String.prototype.toUpperCase = function () { return "patched"; };
  return /(.+)/.test(v) ? "matched" : "not";
});
const b = second.map((v) => RegExp.$1 + "|" + v.toUpperCase());
println("a", a);
println("b", b);
`,
    );
    // The patch fails its own job, out of sight; the later job computes with the built-ins as they were.
    // RegExp.$1 and its kin are gone from the realm: the last match is no one's to read.
    expect(lines).toContain("b undefined|BEE");
    expect(lines.find((line) => line.startsWith("a "))).toContain("Cannot assign to read only property 'toUpperCase'");
    expect(lines.filter((line) => line.startsWith("b ")).join("\n")).not.toContain(CANARY);
  });

  it("a global the first job sets (reaching the global object past the checks) is not there for the next", async () => {
    const lines = await sinkOf(
      "global",
      `const first = classify("${CANARY}");
const second = classify("bee");
const a = first.map((v) => { Reflect.get(() => 0, "constr" + "uctor")("return this")().kept = v; return "kept"; });
const b = second.map((v) => String(Reflect.get(() => 0, "constr" + "uctor")("return this")().kept) + "|" + v);
println("a", a);
println("b", b);
`,
      true,
    );
    expect(lines).toContain("b undefined|bee");
    expect(lines.find((line) => line.startsWith("a "))).toContain("object is not extensible");
  });

  it("every built-in a function can reach is frozen, its global too, and none is the evaluator's own", async () => {
    // Walked from inside a map function: the global, the built-ins only syntax reaches, and a Classified value.
    const lines = await sinkOf(
      "frozen",
      `const probe = classify(0).map(() => {
  const OwnFunction = Reflect.get(() => 0, "constr" + "uctor");
  const OwnObject = OwnFunction("return Object")();
  const roots: unknown[] = [OwnFunction("return this")(), function* () {}, async function () {}, async function* () {},
    [].values(), new Map().values(), new Set().values(), ""[Symbol.iterator](), "a".matchAll(/a/g),
    new Intl.Segmenter().segment(""), classify(1), new Error("e")];
  // A generator function's own prototype object is its own too.
  const instances = new Set([...roots.slice(1), Reflect.get(roots[1] as object, "prototype"), Reflect.get(roots[3] as object, "prototype")]);
  const seen = new Set<unknown>();
  const unfrozen: string[] = [];
  const foreign: string[] = [];
  const pending: Array<[unknown, string]> = roots.map((root, i) => [root, "root" + i]);
  while (pending.length > 0) {
    const [item, where] = pending.pop()!;
    if (item === null || (typeof item !== "object" && typeof item !== "function") || seen.has(item)) continue;
    seen.add(item);
    // The roots made here (a generator function, an iterator) are this job's own; what they lead to is shared.
    if (!instances.has(item) && !Object.isFrozen(item)) unfrozen.push(where);
    // An object of another realm (the evaluator's own) does not inherit from this realm's Object.prototype.
    if (Object.getPrototypeOf(item) !== null && !(item instanceof OwnObject)) foreign.push(where);
    for (const key of Reflect.ownKeys(item)) {
      const d = Object.getOwnPropertyDescriptor(item, key)!;
      pending.push([d.value, where + "." + String(key)], [d.get, where + ".get " + String(key)], [d.set, where + ".set " + String(key)]);
    }
    pending.push([Object.getPrototypeOf(item), where + ".__proto__"]);
  }
  const parsed = new (class ParseError extends Error {
    constructor(message: string) { super(message); this.name = "ParseError"; }
  })("bad input");
  return ["reached " + (seen.size > 500), "unfrozen " + unfrozen.join(" "), "foreign " + foreign.join(" "), parsed.name + ": " + parsed.message].join(" / ");
});
println(probe);
`,
      true,
    );
    // An Error subclass still names itself: assignment to a frozen prototype's name defines it on the instance.
    expect(lines).toContain("reached true / unfrozen  / foreign  / ParseError: bad input");
  });

  it("Math.random still gives numbers in [0, 1) in map functions, from a state each job is given afresh", async () => {
    const lines = await sinkOf(
      "random",
      `const draws = classify(0).map(() => {
  const values: number[] = [];
  for (let i = 0; i < 1000; i++) values.push(Math.random());
  return [values.every((x) => x >= 0 && x < 1), new Set(values).size, values.some((x) => x < 0.1), values.some((x) => x > 0.9)].join(" ");
});
println(draws);
`,
    );
    expect(lines).toContain("true 1000 true true");
  });
});
