// A map/flatMap function reaches the pure evaluator as its source alone. A built-in or bound
// function has none ("function String() { [native code] }"): map(String) failed in the
// evaluator every time, and, as any failed map, gave a handle that looked like a good one, its
// reason in the secure output only. It depends on no plaintext, so the call itself now refuses.

import { afterAll, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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

// An async function's Promise, a generator's iterator and a class are no value the evaluator can
// keep: the async map failed out of sight, the generator's was kept as {} without a word (a wrong
// value), the class's call threw. Their kind depends on no plaintext: the call itself refuses.
it("map and flatMap refuse async, generator and class functions at the call, saying what to write instead", async () => {
  const sink = path.join(dir, "sink-kinds.txt");
  const script = `const secret = classify("plain-canary-5d1e");
const uses: Array<[string, () => unknown]> = [
  ["async", () => secret.map(async (value: string) => value.length)],
  ["async function", () => secret.map(async function (value: string) { return value.length; })],
  ["generator", () => secret.map(function* (value: string) { yield value.length; } as never)],
  ["async generator", () => secret.flatMap(async function* (value: string) { yield classify(value); } as never)],
  ["class", () => secret.map(class Parser {} as never)],
  ["class named otherwise", () => secret.map(class /* a comment */ Ünï {} as never)],
  ["async method", () => secret.map({ async f(value: string) { return value; } }.f)],
];
for (const [name, use] of uses) {
  try {
    use();
    println(name, "accepted");
  } catch (error) {
    println(name, "|", (error as Error).name, (error as Error).message);
  }
}
const o = { class(value: string) { return value.length; }, get text() { return "a getter's value"; } };
println("method named class", secret.map(o.class));
for (const [name, fn] of [["getter", o.text], ["null", null]] as const) {
  try {
    secret.map(fn as never);
  } catch (error) {
    println(name, "|", (error as Error).message);
  }
}
`;
  const r = await runScript(script, ["--no-check", "--secure-output", sink], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trim().split("\n");
  expect(lines).toEqual([
    expect.stringMatching(/^async \| TypeError map\(fn\): fn is an async function: .* Drop `async` and return the value itself, such as map\(\(value\) => value\.trim\(\)\)\.$/),
    expect.stringMatching(/^async function \| TypeError map\(fn\): fn is an async function: /),
    expect.stringMatching(/^generator \| TypeError map\(fn\): fn is a generator function: called, it returns an iterator, not the values it yields.* Return the value itself/),
    expect.stringMatching(/^async generator \| TypeError flatMap\(fn\): fn is an async generator function: .* such as flatMap\(\(value\) => classify\(value\.trim\(\)\)\)\.$/),
    expect.stringMatching(/^class \| TypeError map\(fn\): fn is a class, which cannot be called without `new`\. Pass a function/),
    expect.stringMatching(/^class named otherwise \| TypeError map\(fn\): fn is a class, /),
    expect.stringMatching(/^async method \| TypeError map\(fn\): fn is an async function: /),
    "method named class Classified(***)",
    "getter | map(fn): fn must be a function, and it is a string. Pass the function itself, such as map((value) => value.trim()); a getter (`map(o.g)`) gives its value, not the function.",
    expect.stringMatching(/^null \| map\(fn\): fn must be a function, and it is null\. /),
  ]);
  expect(r.stdout + r.stderr).not.toContain("plain-canary-5d1e");
  // A method named "class" is no class: it ran (the value's length, 17).
  expect(readFileSync(sink, "utf8")).toContain("method named class 17\n");
}, 60_000);

// A method's source, as V8 shows it ("f(v) { … }", "get g() { … }", "#p(v) { … }"), is no
// expression: map(o.f) failed in the evaluator every time with a SyntaxError, out of sight, where
// the same function works with an array's map. It is now computed as the function it is.
it("map computes a method passed by reference (object literal, class, static, private, computed key, getter)", async () => {
  const sink = path.join(dir, "sink-methods.txt");
  const script = `const secret = classify("plain-canary-9b2c");
const o = { f(value: string) { return "object:" + value.length; }, "quoted key"(value: string) { return "quoted:" + value.length; } };
class Parser {
  method(value: string) { return "class:" + value.length; }
  static fromText(value: string) { return "static:" + value.length; }
  ["comp" + "uted"](value: string) { return "computed:" + value.length; }
  #hidden(value: string) { return "private:" + value.length; }
  exposed() { return this.#hidden; }
  get length() { return "getter"; }
}
const getter = Object.getOwnPropertyDescriptor(Parser.prototype, "length")!.get!;
const parser = new Parser() as unknown as Record<string, (value: string) => string>;
println(
  secret.map(o.f),
  secret.map(o["quoted key"]),
  secret.map(parser.method),
  secret.map(Parser.fromText),
  secret.map(parser.computed),
  secret.map((parser as unknown as Parser).exposed()),
  secret.map(getter as () => string),
  secret.flatMap({ wrap(value: string) { return classify("flat:" + value.length); } }.wrap),
);
`;
  const r = await runScript(script, ["--no-check", "--secure-output", sink], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(Array(8).fill("Classified(***)").join(" ") + "\n");
  expect(r.stdout + r.stderr).not.toContain("plain-canary-9b2c");
  const written = readFileSync(sink, "utf8");
  expect(written).toContain("object:17 quoted:17 class:17 static:17 computed:17 private:17 getter flat:17\n");
  expect(written).not.toContain("map failed");
}, 60_000);

// `<!--` in code is `<`, `!` and `--` in a module (the script), but the pure evaluator compiles a
// function's source as a script, where it begins a comment (ECMAScript Annex B): the map below
// computed `value + 100` there, a different value, kept without a word. The rewriter now spaces
// it (`< !--`), which means the same in both; a string's "<!--" is left as it is.
it("a map function with `<!--` in its code computes what the script would", async () => {
  const sink = path.join(dir, "sink-html-comment.txt");
  const script = `const secret = classify("plain-canary-61f0");
const compared = secret.map((value) => {
  let n = 1;
  return value <!--n
    + 100;
});
let n = 1;
const here = "plain-canary-61f0" <!--n
  + 100;
println(compared, here, secret.map((v) => v.replace("<!--", "[") + "<!--"));
`;
  const r = await runScript(script, ["--no-check", "--secure-output", sink], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("Classified(***) false Classified(***)\n");
  expect(r.stdout + r.stderr).not.toContain("plain-canary-61f0");
  expect(readFileSync(sink, "utf8")).toBe("false false plain-canary-61f0<!--\n");
}, 60_000);

// A Classified value captured by a map function showed as "Classified(***)" there when read as
// text or JSON: `v + "?key=" + key` kept "user-1?key=Classified(***)" as the new secret, a wrong
// value written and sent without a word. Such a map now fails, and the secure output says why
// and what to write; a value read with map/flatMap on it is computed as before. (Here the
// values reach the function through an object, where the checks cannot tell they are Classified.)
it("a map function that reads a captured Classified value as text or JSON fails, saying why in the secure output", async () => {
  const sink = path.join(dir, "sink-as-text.txt");
  const script = `const c = classify("user-1");
const box = { key: classify("plain-canary-k3y") };
const key = box.key;
println(c.map((v) => v + "?key=" + key));
println(c.map((v) => \`\${v}:\${key}\`));
println(c.map((v) => ({ user: v, token: key })));
println(c.flatMap((v) => key.map((k) => v + "?key=" + k)));
`;
  const r = await runScript(script, ["--no-check", "--secure-output", sink], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("Classified(***)\n".repeat(4));
  expect(r.stdout + r.stderr).not.toContain("plain-canary-k3y");
  const written = readFileSync(sink, "utf8");
  expect(written).not.toContain("Classified(***)");
  const unavailable = "<classified value unavailable: TypeError: a Classified value was read as text or JSON inside a map function, where it has no text of its own; read its plaintext with map or flatMap on it: secret.flatMap((v) => key.map((k) => v + k))>\n";
  // A failed map's note is written when the evaluator answers, the printed value after the map's
  // settling time: the notes may come before, among or after the printed lines.
  const [printed, notes] = [written.split("\n").filter((line) => !line.startsWith("[tacit] ")), written.split("\n").filter((line) => line.startsWith("[tacit] "))];
  expect(printed.join("\n"), written).toBe(unavailable.repeat(3) + "user-1?key=plain-canary-k3y\n");
  expect(notes, written).toEqual(Array(3).fill(`[tacit] map failed: ${unavailable.slice("<classified value unavailable: ".length, -2)}`));
}, 60_000);

// A Classified value crosses to the evaluator only by a name of its own; one inside a captured
// object or array, or given to classify(), was refused with "which is or holds a Classified; …
// can only receive plain data … and Classified values", which says the opposite of what to do.
it("a Classified value inside captured data, or given to classify(), is refused saying what to write instead", async () => {
  const script = `const c = classify("x");
const box = { key: classify("plain-canary-b0x") };
const list = [c, c];
for (const [name, use] of [
  ["object", () => c.map((v) => v + box.key.toString())],
  ["array", () => c.map((v) => v + list.length)],
  ["classify(classified)", () => classify(c)],
  ["classify(holder)", () => classify({ a: c })],
] as const) {
  try {
    use();
    println(name, "accepted");
  } catch (error) {
    println(name, "|", (error as Error).message);
  }
}
`;
  const r = await runScript(script, ["--no-check"], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.trim().split("\n")).toEqual([
    "object | map/flatMap: the function uses `box`, which holds a Classified value inside an array or object; a Classified value reaches the pure evaluator only when the function uses it by a name of its own. Name it before the call (`const inner = box.key;`, or one name for each of a list's values) and use that name in the function.",
    expect.stringMatching(/^array \| map\/flatMap: the function uses `list`, which holds a Classified value inside an array or object; /),
    "classify(classified) | classify(value): value is a Classified value already; use it as it is (classify() takes plain data).",
    expect.stringMatching(/^classify\(holder\) \| classify\(value\): value holds a Classified value inside it, and classify\(\) takes plain data only\. Build the value from the Classified ones with map and flatMap instead: /),
  ]);
  expect(r.stdout + r.stderr).not.toContain("plain-canary-b0x");
}, 60_000);

// A captured variable named `__proto__` was dropped on its way to the pure evaluator (as a key of
// the object captures travel in, it set that object's prototype): the function read `undefined`
// for it, and the value written was wrong without a word, where an array's map read the variable.
it("a map function using a variable named __proto__ is refused at the call, saying to rename it; other names are handed over", async () => {
  const work = mkdtempSync(path.join(dir, "proto-"));
  const script = `requestFileSystem(".", (fs) => {
  const secret = classify("value");
  const __proto__ = "-suffix";
  const constructor = "-c";
  fs.writeClassified(".env.ctor", secret.map((v) => v + constructor));
  try {
    fs.writeClassified(".env.proto", secret.map((v) => v + __proto__));
    println("accepted");
  } catch (error) {
    println((error as Error).message);
  }
  println(["array"].map((v) => v + __proto__).join());
});
`;
  const r = await runScript(script, ["--no-check"], { cwd: work });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split("\n")).toEqual([
    "map(fn): the function uses a variable named `__proto__`, which cannot be handed to the pure evaluator (as a property name it sets an object's prototype instead). Rename the variable, such as `const proto = __proto__;`, and use that name in the function.",
    "array-suffix",
  ]);
  expect(readFileSync(path.join(work, ".env.ctor"), "utf8")).toBe("value-c");
  expect(existsSync(path.join(work, ".env.proto"))).toBe(false);
}, 60_000);
