// Check-time purity of map/flatMap functions on Classified values: what the pure evaluator
// cannot allow is rejected before anything runs (exit 3, rule [impure-map]), naming the
// identifier. The same function on an ordinary array is left alone.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-purity-"));
  writeTree(root, { ".env": "A=1\n", "marker-source.txt": "x" });
});
afterAll(() => cleanup());

const REJECTED: Array<{ what: string; identifier: string; script: string }> = [
  {
    what: "a map on fs.readClassified(...) whose function calls println",
    identifier: "println",
    script: `requestFileSystem(".", (fs) => {
  fs.readClassified(".env").map((v) => { println(v); return v; });
});`,
  },
  {
    what: "a map that captures the capability fs",
    identifier: "fs",
    script: `requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  secret.map((v) => fs.access("marker-source.txt").read() + v);
});`,
  },
  {
    what: "a flatMap that assigns to an outer let",
    identifier: "seen",
    script: `let seen = "";
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  secret.flatMap((v) => { seen = v; return classify(v); });
});
println(seen);`,
  },
  {
    what: "a map that calls a helper declared outside",
    identifier: "helper",
    script: `function helper(v: string): string { return v.trim(); }
requestFileSystem(".", (fs) => {
  const secret: Classified<string> = fs.readClassified(".env");
  secret.map((v) => helper(v));
});`,
  },
];

describe("impure map functions are rejected at check time", () => {
  it.each(REJECTED)("$what", async ({ identifier, script }) => {
    const r = await tacit(root, `${script}\nprintln("ran");\n`);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(new RegExp(`^script\\.ts:\\d+:\\d+ error \\[impure-map\\] .*\`${identifier}\``, "m"));
  });

  it("leaves a map on an ordinary array alone", async () => {
    const r = await tacit(root, `[1, 2].map((x) => println(x));\nconst doubled = [1, 2].map((x) => x * 2);\nprintln(doubled);\n`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("1\n2\n[ 2, 4 ]\n");
  });
});
