// A map function that captures a variable holding `undefined` read `null` for it in the pure
// evaluator (the sandbox sent the capture as JSON, which has no undefined, and put null in its
// place): `typeof missing` was "object", `missing === undefined` false and `String(missing)`
// "null", where an array's map of the same function sees undefined. The value written to the
// secure output (or to a classified file) was another than the script computes, without a word.
// The capture now says it is undefined, and the evaluator hands the function undefined.

import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
let work: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-map-undefined-"));
  work = path.join(root, "work");
  writeTree(work, { ".env": "undefined-canary-7e2b\n" });
});
afterAll(() => cleanup());

describe("a map function capturing a variable that holds undefined", () => {
  it("sees undefined in the pure evaluator, as an array's map does", async () => {
    const sink = path.join(root, "sink.txt");
    const script = `let missing: string | undefined;
const declared: string | undefined = undefined;
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  println(["plain"].map((v) => [v, typeof missing, String(missing), missing === undefined, declared ?? "default", typeof declared].join(":"))[0]);
  println(secret.map((v) => [v.trim(), typeof missing, String(missing), missing === undefined, declared ?? "default", typeof declared].join(":")));
  fs.writeClassified(".env.out", secret.map((v) => v.trim() + ":" + typeof missing));
});
`;
    const r = await tacit(work, script, ["--secure-output", sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("plain:undefined:undefined:true:default:undefined\nClassified(***)\n");
    expect(readFileSync(sink, "utf8")).toBe(
      "plain:undefined:undefined:true:default:undefined\nundefined-canary-7e2b:undefined:undefined:true:default:undefined\n",
    );
    expect(readFileSync(path.join(work, ".env.out"), "utf8")).toBe("undefined-canary-7e2b:undefined");
  });
});

// NaN and ±Infinity are numbers JSON cannot hold either: captured, or given to classify(), they
// reached the pure evaluator (and the store) as null, and `v + ":" + limit` with `const limit =
// Infinity` kept "…:null" without a word. They are refused at the call, saying what to pass.
describe("a number JSON cannot hold, captured or classified", () => {
  it.each([
    { what: "NaN captured", declare: "const limit = NaN;", use: "secret.map((v) => v + limit)", name: "limit" },
    { what: "Infinity captured", declare: "const limit = Infinity;", use: "secret.map((v) => v + limit)", name: "limit" },
    { what: "-Infinity inside a captured array", declare: "const bounds = [0, -Infinity];", use: "secret.map((v) => v + bounds.join())", name: "bounds" },
    { what: "NaN given to classify()", declare: "", use: "classify({ rate: NaN })", name: "classify" },
  ])("$what is refused at the call, naming it, and nothing is kept as null", async ({ declare, use, name }) => {
    const sink = path.join(root, `sink-${name}-${declare.length}.txt`);
    const script = `requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  ${declare}
  println(${use});
});
`;
    const r = await tacit(work, script, ["--secure-output", sink]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("TypeError");
    expect(r.stderr).toContain(name === "classify" ? "classify(value)" : `\`${name}\``);
    expect(r.stderr).toMatch(/NaN|Infinity/);
    expect(r.stderr).not.toContain("undefined-canary");
  });
});
