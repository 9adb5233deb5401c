// Check-time purity of map/flatMap functions on Classified values: what the pure evaluator
// cannot allow is rejected before anything runs (exit 3, rule [impure-map]), naming the
// identifier. The same function on an ordinary array is left alone.

import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NESTED_NAME_USES_LIMIT } from "../../runner/limits.js";
import { type CliResult, runCli, unchecked } from "../helpers.js";
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
  {
    what: "a map given by name a function declared outside that calls println",
    identifier: "println",
    script: `function loud(v: string): string { println(v); return v; }
const secret = classify("x");
secret.map(loud);`,
  },
  {
    what: "a map given by name a function whose outer name is declared again around the call",
    identifier: "suffix",
    script: `const suffix = "!";
function shout(v: string): string { return v + suffix; }
const secret = classify("x");
{
  const suffix = "?";
  secret.map(shout);
}`,
  },
  {
    what: "a map that reads a captured Classified value as text",
    identifier: "key",
    script: `const key = classify("k");
const secret = classify("x");
secret.map((v) => v + "?key=" + key);`,
  },
  {
    what: "a map that puts a captured Classified value in a template literal",
    identifier: "key",
    script: `requestFileSystem(".", (fs) => {
  const key: Classified<string> = fs.readClassified(".env");
  classify("x").map((v) => \`\${v}:\${key}\`);
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

// A function passed by name (declared with `function`, as a `const`, or a method of a `const`
// object literal) reached the pure evaluator as its source alone, without the values it uses:
// map(shout), shout using a `const` declared beside it, failed there every time (a ReferenceError,
// noted only in the secure output), the handle looking like a good one. Its captured variables are
// now handed over at the call, as an inline function's are.
describe("functions passed to map by name", () => {
  it("get the values they use; a recursive one keeps its own name; an array's map is unchanged", async () => {
    const sink = path.join(root, "named-sink.txt");
    const work = path.join(root, "named-work");
    mkdirSync(work, { recursive: true });
    const script = `const secret = classify("plain-canary-4a7e");
const suffix = "!";
function shout(value: string): string { return value.toUpperCase() + suffix; }
const tagged = (value: string) => "<" + value.length + suffix + ">";
const helpers = { count(value: string) { return value.split("-").length + suffix; }, wrap: (value: string) => classify("[" + value.length + suffix + "]") };
function fact(n: number): number { return n <= 1 ? 1 : n * fact(n - 1); }
println(secret.map(shout), secret.map(tagged), secret.map(helpers.count), secret.flatMap(helpers.wrap), secret.map((v) => v.length - 14).map(fact));
println(["ab", "c"].map(tagged));
`;
    const r = await runCli(unchecked(["run", "--secure-output", sink, "-"]), { cwd: work, input: script, env: { TACIT_HOME: path.join(root, "home") } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${Array(5).fill("Classified(***)").join(" ")}
[ "<2!>", "<1!>" ]
`);
    expect(readFileSync(sink, "utf8")).toBe(`PLAIN-CANARY-4A7E! <17!> 3! [17!] 6\n[ "<2!>", "<1!>" ]\n`);
  });
});

// A function made by a factory, taken from an array, held by a `let` assigned again (or declared
// without a value and assigned later) reached the pure evaluator as its source alone, and the
// values it captured (the factory's parameter, a name beside it) were missing there: the map failed
// every time, out of sight. The checks can tell such an argument apart: it is refused before
// anything runs, with what to write. A `let` assigned once is read as a `const` is, and works; so
// does a condition whose branches are each such a function, and a name for one (`const g = f`).
describe("functions the checks cannot analyse", () => {
  const forms: Array<{ what: string; call: string }> = [
    { what: "a factory's function", call: "secret.map(make(5))" },
    { what: "a const holding a factory's function", call: "secret.map(made)" },
    { what: "a declared factory's function", call: "secret.map(tagger(7))" },
    { what: "a factory's function as a branch of a condition", call: "secret.map(Math.random() > 2 ? tag : make(5))" },
    { what: "a const holding a function chosen by a condition", call: "secret.map(chosen)" },
    { what: "an element of an array", call: "secret.map(list[0])" },
    { what: "a let assigned again", call: "secret.flatMap(changing)" },
    { what: "a const naming a let assigned again", call: "secret.flatMap(changingAlias)" },
    { what: "a let declared without a value and assigned later", call: "secret.map(later)" },
  ];
  const prelude = `const secret = classify("plain-canary-3c9d");
const suffix = "!";
const make = (n: number) => (value: string) => value + n;
const made = make(6);
const tag = (value: string) => value + suffix;
const upper = (value: string) => value.toUpperCase();
const maybe = null as ((value: string) => string) | null;
const list = [(value: string) => value + suffix];
let changing = (value: string) => classify(value + suffix);
changing = (value: string) => classify(value);
function tagger(n: number) { const mark = "#" + n; if (n < 0) return null; return (value: string) => value + mark; }
const chosen = Math.random() > 2 ? tag : upper;
const changingAlias = changing;
let later: (value: string) => string;
later = (value: string) => value + suffix;
`;
  // One run for all the forms: each call on a line of its own after the prelude (the prelude's 15
  // lines, then form i on line 16 + i), each refused on its own, so each form's error is found by
  // its line and its call; nothing runs. Each form was a tacit run of its own (about 0.3 s of CPU).
  let refusedRun: Promise<CliResult> | undefined;
  const refusedForms = (): Promise<CliResult> =>
    (refusedRun ??= tacit(root, `${prelude}${forms.map(({ call }) => `println(${call});\n`).join("")}println("ran");\n`, [], { TACIT_HOME: path.join(root, "home") }));
  it.each(forms.map((form, i) => ({ ...form, line: 16 + i })))("$what is refused at check time, naming the call and saying what to write; nothing runs", async ({ call, line }) => {
    const r = await refusedForms();
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    // This form's error and the lines after it up to the next error: its hint.
    const own = new RegExp(`^script\\.ts:${line}:\\d+ error \\[impure-map\\] \`${call.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\` passes[ ,].*(?:\\n(?!script\\.ts:).*)*`, "m").exec(r.stderr);
    expect(own, r.stderr).not.toBeNull();
    expect(own![0]).toContain("the checks cannot see which values it uses");
    expect(own![0]).toContain("hint: Write the function in the call, as an inline arrow");
    expect(r.stderr).not.toContain("plain-canary-3c9d");
  });

  it("the same forms on an array's map run as before, and a let assigned once is analysed and computed", async () => {
    const sink = path.join(root, "unanalysable-sink.txt");
    const script = `${prelude}println(["a"].map(make(5)), ["b"].map(made), ["f"].map(tagger(7)!), ["c"].map(Math.random() > 2 ? tag : upper), ["d"].map(list[0]), ["e"].map(maybe || tag));
let once = (value: string) => value.length + suffix;
println(secret.map(once));
`;
    const work = path.join(root, "unanalysable-work");
    mkdirSync(work, { recursive: true });
    const r = await tacit(work, script, ["--secure-output", sink], { TACIT_HOME: path.join(root, "home") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`[ "a5" ] [ "b6" ] [ "f#7" ] [ "C" ] [ "d!" ] [ "e!" ]\nClassified(***)\n`);
    expect(readFileSync(sink, "utf8")).toBe(`[ "a5" ] [ "b6" ] [ "f#7" ] [ "C" ] [ "d!" ] [ "e!" ]\n17!\n`);
  });

  it("a condition between functions the script declares, and a name for one, are analysed: each branch gets the values it uses", async () => {
    const sink = path.join(root, "branches-sink.txt");
    const script = `${prelude}const other = "?";
function shout(value: string): string { return value.toUpperCase() + other; }
const helpers = { count: (value: string) => value.length + suffix };
const tagAlias = tag;
const aliasOfAlias = tagAlias;
const no = Math.random() > 2;
println(secret.map(no ? tag : shout), secret.map(!no ? tag : shout), secret.map(aliasOfAlias), secret.map(no ? (value) => value + other : no ? shout : helpers.count));
println(secret.map(maybe || tag), secret.flatMap(no ? (value) => classify(value) : (value) => classify(value + other)));
`;
    const work = path.join(root, "branches-work");
    mkdirSync(work, { recursive: true });
    const r = await tacit(work, script, ["--secure-output", sink], { TACIT_HOME: path.join(root, "home") });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${Array(4).fill("Classified(***)").join(" ")}\nClassified(***) Classified(***)\n`);
    expect(readFileSync(sink, "utf8")).toBe(`PLAIN-CANARY-3C9D? plain-canary-3c9d! plain-canary-3c9d! 17!\nplain-canary-3c9d! plain-canary-3c9d?\n`);
  });

  it("a function taken apart from a destructuring declaration is left alone at check time, as a parameter is", async () => {
    const script = `const secret = classify("plain-canary-3c9d");
const helpers = { trim: (value: string) => value.trim() };
const { trim } = helpers;
const [first] = [(value: string) => value.trim()];
println(secret.map(trim), secret.map(first));
`;
    const r = await runCli(["check", "--no-check", "-"], { cwd: root, input: script, env: { TACIT_HOME: path.join(root, "home") } });
    expect(r.stderr).toBe("script.ts: ok\n");
    expect(r.code).toBe(0);
  });

  it("a branch that is not such a function is checked as if passed alone: a println in one is refused, naming it", async () => {
    const script = `${prelude}function loud(value: string): string { println(value); return value; }
println(secret.map(Math.random() > 2 ? tag : loud));
println("ran");
`;
    const r = await tacit(root, script, [], { TACIT_HOME: path.join(root, "home") });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^script\.ts:16:\d+ error \[impure-map\] the map function uses `println`/m);
    expect(r.stderr).not.toContain("plain-canary-3c9d");
  });
});

// Nested map functions: a use inside N of them is a capture of each, and the checks once walked
// each function's list of outer uses, quadratic in the nesting (hostile code: maps some hundreds
// deep around thousands of names). Now linear, and the scope analysis under them is bounded by
// NESTED_NAME_USES_LIMIT (scope-nesting.ts); bench/validator.ts measures both.
describe("nested and many map functions", () => {
  const home = () => ({ TACIT_HOME: path.join(root, "home") });
  /** `depth` flatMaps on one classified value, nested, around `inner`. */
  const nested = (depth: number, inner: string): string =>
    Array.from({ length: depth }, (_, i) => `c.flatMap((a${i}) => `).join("") + inner + ")".repeat(depth);

  it("60 nested, the innermost using every outer parameter: checked, each capture handed over, the right value in the secure output", async () => {
    const sink = path.join(root, "nested-sink.txt");
    const sum = Array.from({ length: 60 }, (_, i) => `a${i} * ${i + 1}`).join(" + ");
    const script = `const c = classify(2);\nconst r = ${nested(60, `classify(${sum})`)};\nprintln(r);\n`;
    // Run in a directory of its own: the sink lies outside the allowed root (else a warning).
    const work = path.join(root, "nested-work");
    mkdirSync(work, { recursive: true });
    const r = await runCli(["run", "--secure-output", sink, "-"], { cwd: work, input: script, env: home() });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Classified(***)\n");
    // 2 * (1 + 2 + … + 60)
    expect(readFileSync(sink, "utf8")).toBe(`${2 * 1830}\n`);
  });

  it("a println inside 200 nested classified maps is refused once, where it is, naming it", async () => {
    const script = `println("ran");\nconst c = classify("x");\nconst r = ${nested(200, "classify(println(a0))")};\n`;
    const r = await runCli(unchecked(["run", "-"]), { cwd: root, input: script, env: home() });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    const errors = r.stderr.split("\n").filter((line) => line.includes("error ["));
    expect(errors).toEqual([expect.stringMatching(/^script\.ts:3:\d+ error \[impure-map\] .*`println`/)]);
  });

  it("5,000 one after another: checked, and the one impure among them is the one reported", async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `const r${i} = c.map((v) => v + k${i === 4321 ? " + String(println(v))" : ""});`);
    const script = `const c = classify("x");\nconst k = "y";\n${lines.join("\n")}\n`;
    const r = await runCli(["check", "--no-check", "-"], { cwd: root, input: script, env: home() });
    expect(r.code).toBe(3);
    const errors = r.stderr.split("\n").filter((line) => line.includes("error ["));
    expect(errors).toEqual([expect.stringMatching(/^script\.ts:4324:\d+ error \[impure-map\] .*`println`/)]);
  });

  it("past the limit (20,000 uses inside 400 nested maps) refused before the scope analysis, saying the limit and what to do; nothing runs", async () => {
    const uses = `[${"k, ".repeat(20_000)}a0]`;
    const script = `println("ran-canary");\nconst k = 1;\nconst c = classify(1);\nconst r = ${nested(400, `classify(${uses})`)};\nprintln(r);\n`;
    const r = await runCli(unchecked(["run", "-"]), { cwd: root, input: script, env: home() });
    expect(r.code).toBe(3);
    expect(r.stdout).not.toContain("ran-canary");
    expect(r.stderr).toContain("error [too-deep] the script uses names too deep inside nested functions and blocks for tacit's checks");
    expect(r.stderr).toContain(`the limit is ${NESTED_NAME_USES_LIMIT.toLocaleString("en-US")}`);
    expect(r.stderr).toMatch(/hint: Nest less: define helpers at the top level/);
  });
});
